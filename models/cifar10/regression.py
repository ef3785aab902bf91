"""The deterministic inputs behind the CIFAR-10 regression figures of the original tutorial.

The golden files in `tests/data/regression/cifar10/` were measured by running the original
tutorial on these batches and initial weights; replaying them through this project's model
must give the same numbers. The arrays here equal, bit for bit, those of the recipe the goldens
came with (`batches.py`): the same generators, seeds, draw order and float32 rounding.

A batch is learnable: each class adds a fixed template to standard normal noise, and each
image is standardized as `tf.image.per_image_standardization` does.
"""
import numpy as np

IMAGE_SHAPE = (24, 24, 3)
NUM_CLASSES = 10
TOWER_BATCH = 128

# Truncated-normal weights in the order the recipe draws them, with the tutorial's stddevs;
# then the biases' constants.
_WEIGHTS = [
    ('conv1/weights', [5, 5, 3, 64], 5e-2),
    ('conv2/weights', [5, 5, 64, 64], 5e-2),
    ('local3/weights', [2304, 384], 0.04),
    ('local4/weights', [384, 192], 0.04),
    ('softmax_linear/weights', [192, NUM_CLASSES], 1 / 192.0),
]
_BIASES = [
    ('conv1/biases', 64, 0.0),
    ('conv2/biases', 64, 0.1),
    ('local3/biases', 384, 0.1),
    ('local4/biases', 192, 0.1),
    ('softmax_linear/biases', NUM_CLASSES, 0.0),
]


def templates(seed=0):
    """[NUM_CLASSES, 24, 24, 3] float32: each class's additive template."""
    rng = np.random.RandomState(seed)
    return rng.standard_normal((NUM_CLASSES,) + IMAGE_SHAPE).astype(np.float32)


def _standardize(images):
    """Per-image standardization with the stddev floored at 1/sqrt(pixels), in the recipe's
    precision (float32 moments, a float64 floor)."""
    mean = images.mean(axis=(1, 2, 3), keepdims=True)
    stddev = images.std(axis=(1, 2, 3), keepdims=True)
    stddev = np.maximum(stddev, 1.0 / np.sqrt(np.prod(IMAGE_SHAPE)))
    return ((images - mean) / stddev).astype(np.float32)


def batch(step, n, seed=0):
    """The global batch of one training (or evaluation) step.

    Tower i of N gets rows [128*i, 128*(i+1)) of `batch(step, 128*N, seed)`.

    Args:
      step: the step number; the goldens' evaluation uses steps 50000 and up.
      n: examples in the batch.
      seed: the run's seed.

    Returns:
      images: [n, 24, 24, 3] float32, per-image standardized.
      labels: [n] int32 in 0..9.
    """
    rng = np.random.RandomState(1000003 * (seed + 1) + step)
    labels = rng.randint(0, NUM_CLASSES, size=n).astype(np.int32)
    noise = rng.standard_normal((n,) + IMAGE_SHAPE).astype(np.float32)
    return _standardize(noise + 0.5 * templates(seed)[labels]), labels


def _truncated_normal(rng, shape, stddev):
    """Normal draws redrawn until within two standard deviations, as the recipe does."""
    values = rng.standard_normal(shape)
    outside = np.abs(values) > 2
    while outside.any():
        values[outside] = rng.standard_normal(outside.sum())
        outside = np.abs(values) > 2
    return (values * stddev).astype(np.float32)


def initial_weights(seed=0):
    """The runs' initial values of the ten trainable variables.

    Returns:
      A dict from variable name ('conv1/weights', ...) to a float32 array of its shape.
    """
    rng = np.random.RandomState(seed + 77)
    weights = {name: _truncated_normal(rng, shape, stddev) for name, shape, stddev in _WEIGHTS}
    weights.update({name: np.full([size], value, np.float32) for name, size, value in _BIASES})
    return weights
