"""The CIFAR-10 tutorial's regression: its deterministic inputs and the figures compared.

The golden files in `tests/data/regression/cifar10/` were measured by running the original
tutorial on these batches and initial weights; replaying them through this project's model
must give the same numbers. The arrays here equal, bit for bit, those of the recipe the goldens
came with (`batches.py`): the same generators, seeds, draw order and float32 rounding.

A batch is learnable: each class adds a fixed template to standard normal noise, and each
image is standardized as `tf.image.per_image_standardization` does.

Training (`measure_run`, `compare_run`): the learning-rate decay steps (exact), each tower's
loss at each step (1e-3 absolute), the step-0 averaged gradient norms (1e-4 relative) and the
final sums of |value| of the variables (reported only: the tutorial updates the moving averages
unordered with the weights, so which value a shadow reads depends on scheduling).
Evaluation of the original's checkpoint (`measure_evaluation`, `compare_evaluation`):
precision @ 1 and the true count (exact), the per-batch sums of |logits| (1e-4 relative).
The measuring runs through `towers.regression`, which owns the sessions and devices.

Live, against a user's copy of the original: `live_regression`.
"""
import numpy as np

from models.cifar10 import model
from models.cifar10 import recipe
from towers import regression
from towers.compat import tf

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


# Tolerances of the figures: tower losses absolute, gradient norms and logit sums relative.
LOSS_TOLERANCE = 1e-3
GRAD_NORM_TOLERANCE = 1e-4
EVAL_TOLERANCE = 1e-4
EVALUATION_RUN = 'evaluation'
_AVERAGE_SUFFIX = '/ExponentialMovingAverage'


def initial_values(seed=0):
    """The runs' initial values of every variable but the global step: the ten trainable ones
    from `initial_weights`, and each one's moving average ('<name>/ExponentialMovingAverage')
    starting equal to it, as the original's shadows did."""
    weights = initial_weights(seed)
    averages = {name + _AVERAGE_SUFFIX: value for name, value in weights.items()}
    weights.update(averages)
    return weights


def measure_steps(run, fetches, decay_steps, checkpoint):
    """The measuring code of one training run, for `towers.regression.measure_builder`.

    Args:
      run: the run: 'num_towers', 'seed', 'steps'.
      fetches: a function (replay) -> dict 'train' (the training step), 'tower_losses' (each
        tower's total loss), 'grads' (variable name -> averaged gradient).
      decay_steps: the learning-rate decay steps of the graph measured.
      checkpoint: a checkpoint prefix to write after the last step, or None.

    Returns:
      A function of a `Replay` returning the figures `measure_run` describes.
    """
    num_towers, seed, steps = run['num_towers'], run['seed'], run['steps']
    global_batch = TOWER_BATCH * num_towers

    def measure(replay):
        step_fetches = fetches(replay)
        tower_losses, grad_norms = [], {}
        for step in range(steps):
            values = replay.run({'train': step_fetches['train'],
                                 'losses': step_fetches['tower_losses'],
                                 'grads': step_fetches['grads'] if step == 0 else {}},
                                batch(step, global_batch, seed))
            tower_losses.append([float(loss) for loss in values['losses']])
            if step == 0:
                grad_norms = {name: float(np.linalg.norm(grad))
                              for name, grad in values['grads'].items()}
        final = replay.run({var.op.name: var for var in tf.global_variables()})
        if checkpoint:
            replay.save(checkpoint)
        return {
            'learning_rate_decay_steps': decay_steps,
            'tower_losses_per_step': tower_losses,
            'step0_averaged_grad_l2_norms': grad_norms,
            'final_abs_sums': {name: float(np.abs(value).sum())
                               for name, value in final.items()},
        }
    return measure


def measure_run(run, checkpoint=None):
    """Trains the project's graph as one run of the golden file did, and measures it.

    Args:
      run: one entry of the golden file's `runs`: 'num_towers', 'seed', 'steps'.
      checkpoint: a checkpoint prefix to write after the last step, or None.

    Returns:
      A dict shaped like `run`: 'learning_rate_decay_steps'; 'tower_losses_per_step' [steps]
      lists of each tower's total loss, fetched with the step; 'step0_averaged_grad_l2_norms'
      (variable name -> L2 norm of its averaged gradient at step 0); 'final_abs_sums' (every
      global variable's name -> sum of |value| after the last step).
    """
    def fetches(replay):
        replicated = replay.training.replicated
        return {'train': replay.training.train_ops['total'],
                'tower_losses': replicated.tower_losses,
                'grads': {var.op.name: grad for grad, var in replicated.grads['total']}}

    return regression.measure_training(
        recipe.Cifar10Recipe(TOWER_BATCH), batch(0, TOWER_BATCH * run['num_towers'], run['seed']),
        run['num_towers'], lambda shapes: initial_values(run['seed']),
        measure_steps(run, fetches,
                       recipe.learning_rate_decay_steps(TOWER_BATCH, run['num_towers']),
                       checkpoint))


def _by_step_and_tower(tower_losses):
    """[steps][towers] losses as a dict 'step <s>, tower <t>' -> loss."""
    return {'step %d, tower %d' % (step, tower): loss
            for step, losses in enumerate(tower_losses) for tower, loss in enumerate(losses)}


def _weights_and_averages(abs_sums):
    """`abs_sums` split in two dicts: the weights and global step, the moving averages."""
    averages = {name: value for name, value in abs_sums.items()
                if name.endswith(_AVERAGE_SUFFIX)}
    return {name: value for name, value in abs_sums.items() if name not in averages}, averages


def compare_run(key, golden, measured):
    """Compares one training run's measured figures with the golden ones.

    Args:
      key: the run's key in the golden file.
      golden: the golden run.
      measured: `measure_run(golden)`.

    Returns:
      A list of `towers.regression.Deviation`, one per compared figure.
    """
    comparison = regression.Comparison(key)
    comparison.exact('learning-rate decay steps', 'learning-rate decay steps',
                     golden['learning_rate_decay_steps'], measured['learning_rate_decay_steps'])
    comparison.close_each('tower losses', 'steps and towers with a loss',
                          'tower loss at %s',
                          _by_step_and_tower(golden['tower_losses_per_step']),
                          _by_step_and_tower(measured['tower_losses_per_step']),
                          LOSS_TOLERANCE)
    comparison.close_each('step-0 averaged gradient norms', 'variables with a gradient',
                          'step-0 averaged gradient norm of %s',
                          golden['step0_averaged_grad_l2_norms'],
                          measured['step0_averaged_grad_l2_norms'], GRAD_NORM_TOLERANCE,
                          relative=True)
    for (figure, keys_what), expected, actual in zip(
            (('final sums of |value| of the weights and global_step', 'weights and global_step'),
             ('final sums of |value| of the moving averages', 'moving averages')),
            _weights_and_averages(golden['final_abs_sums']),
            _weights_and_averages(measured['final_abs_sums'])):
        comparison.close_each(figure, keys_what, 'final sum of |value| of %s', expected,
                              actual, None, relative=True)
    return comparison.deviations


def measure_evaluation(golden, checkpoint, network=(model.evaluation,
                                                    model.variables_to_restore)):
    """Evaluates the checkpoint's moving averages as the golden evaluation did.

    Args:
      golden: the golden evaluation: 'eval_steps' (the steps whose `batch` is evaluated),
        'batch' (examples per batch), 'seed'.
      checkpoint: the prefix of the checkpoint to evaluate.
      network: (evaluation, var_list): a function (images, labels) -> (logits, in_top_1) and
        the `tf.train.Saver` var list to restore, called after it; the project's by default,
        `original_network` for the original's.

    Returns:
      A dict shaped like `golden`: 'true_count' (examples whose top logit is the label),
      'precision_at_1' and 'abs_logit_sums' (per batch, the sum of |logits|).
    """
    batches = [batch(step, golden['batch'], golden['seed']) for step in golden['eval_steps']]
    evaluation, var_list = network

    def build(images_and_labels):
        logits, in_top_1 = evaluation(*images_and_labels)
        return {'logits': logits, 'in_top_1': in_top_1}

    outputs = regression.evaluate_checkpoint(build, checkpoint, batches, var_list)
    true_count = sum(int(output['in_top_1'].sum()) for output in outputs)
    return {'true_count': true_count,
            'precision_at_1': true_count / float(len(batches) * golden['batch']),
            'abs_logit_sums': [float(np.abs(output['logits']).sum()) for output in outputs]}


def compare_evaluation(golden, measured, run=EVALUATION_RUN):
    """Compares the measured evaluation with the golden one.

    Args:
      golden: the golden evaluation.
      measured: `measure_evaluation(golden, checkpoint)`.
      run: the run's name in the report.

    Returns:
      A list of `towers.regression.Deviation` of the run `run`.
    """
    comparison = regression.Comparison(run)
    comparison.exact('precision @ 1', 'precision @ 1', golden['precision_at_1'],
                     measured['precision_at_1'])
    comparison.exact('true count', 'true count', golden['true_count'], measured['true_count'])
    comparison.close_each('per-batch sums of |logits|', 'batches evaluated',
                          'sum of |logits| of batch %d',
                          dict(enumerate(golden['abs_logit_sums'])),
                          dict(enumerate(measured['abs_logit_sums'])), EVAL_TOLERANCE,
                          relative=True)
    return comparison.deviations
