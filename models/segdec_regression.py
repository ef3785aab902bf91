"""Deterministic inputs and starting values of the SegDecNet regression figures.

The golden figures in `tests/data/regression/segdec/` were measured by the TF1 multi-GPU
SegDecNet on inputs and initial values made by a shared recipe; these functions remake them
number for number (same random streams, same order of draws), so this project's model can be
run from the same start on the same batches and compared.
"""
import numpy as np


def regression_batch(step, num_images, height, width, seed=0):
    """The recipe's batch of one step: noisy grey images, every even one with a bright scratch.

    Args:
      step: the batch index (0 for the step-0 figures, 1 for those after one update).
      num_images: n; image i goes to tower i.
      height, width: image size, multiples of 8.
      seed: the run's seed.

    Returns:
      images: [n, height, width, 1] float32 in [0, 1].
      pixel_labels: [n, height/8, width/8, 1] float32 in {0, 1}, the scratch mask max-pooled
        over 8x8 cells.
      labels: [n] int32, 1 for the even (scratched) images.
    """
    rng = np.random.RandomState(7919 * (seed + 1) + step)
    images = 0.4 + 0.1 * rng.standard_normal([num_images, height, width, 1])
    mask = np.zeros([num_images, height, width, 1], np.float32)
    labels = np.zeros([num_images], np.int32)
    for i in range(0, num_images, 2):
        # Three draws in this order: column, first row, length.
        column = rng.randint(2, width - 6)
        top = rng.randint(0, height // 2)
        length = rng.randint(height // 4, height // 2)
        images[i, top:top + length, column:column + 4, 0] += 0.5
        mask[i, top:top + length, column:column + 4, 0] = 1.0
        labels[i] = 1
    images = np.clip(images, 0.0, 1.0).astype(np.float32)
    cells = mask.reshape(num_images, height // 8, 8, width // 8, 8, 1)
    return images, cells.max(axis=(2, 4)).astype(np.float32), labels


def regression_initial_values(shapes, seed=0):
    """The recipe's starting value of every variable.

    Weights (names ending in '/weights') are drawn in sorted-name order from one stream, He
    scaled: normal with std sqrt(2 / fan_in), fan_in the product of all but the last
    dimension. Moving variances (and gammas) start at 1, everything else at 0.

    Args:
      shapes: dict variable name (without ':0') -> shape (list of ints).
      seed: the run's seed.

    Returns:
      dict name -> float32 array of that shape.
    """
    rng = np.random.RandomState(seed + 4242)
    values = {}
    for name in sorted(shapes):
        shape = [int(d) for d in shapes[name]]
        if name.endswith('/weights'):
            fan_in = int(np.prod(shape[:-1]))
            values[name] = (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(
                np.float32)
        elif name.endswith('moving_variance') or name.endswith('gamma'):
            values[name] = np.ones(shape, np.float32)
        else:
            values[name] = np.zeros(shape, np.float32)
    return values
