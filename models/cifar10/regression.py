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

Live, against a user's copy of the original (`LiveRegression`): the original's own
`tower_loss`, `average_gradients` and `inference` (`ORIGINAL_MODULES`, imported through
`towers.legacy`) train in the tutorial's tower loop beside the project's recipe, on the same
initial values and batches, and their figures are compared as above; each side's checkpoint is
evaluated by both evaluations.
"""
import functools
import inspect
import os

import numpy as np

from models.cifar10 import model
from models.cifar10 import recipe
from towers import regression
from towers.compat import tf
from towers.errors import TowersError

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


def _measure_steps(run, fetches, decay_steps, checkpoint):
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
        _measure_steps(run, fetches,
                       recipe.learning_rate_decay_steps(TOWER_BATCH, run['num_towers']),
                       checkpoint))


# The modules of the original tutorial (tensorflow/models tutorials/image/cifar10) a live
# regression imports, in import order.
ORIGINAL_MODULES = ('cifar10_input', 'cifar10', 'cifar10_multi_gpu_train')


def _original_decay_steps(originals, num_towers):
    """The original's learning-rate decay steps from its constants, as the TF 1.13 tutorial's
    `train()` computes them: 350 epochs of its epoch size in batches of 128 per tower, per
    tower. (`train()` builds its own input queue and session, so it is rebuilt, not called;
    versions before 2017 did not divide by the towers.)"""
    cifar10 = originals['cifar10']
    return int(cifar10.NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN / TOWER_BATCH / num_towers
               * cifar10.NUM_EPOCHS_PER_DECAY)


def _original_training(originals, num_towers):
    """A builder of the original's training graph, as its `cifar10_multi_gpu_train.train()`
    builds it, from the original's own functions and constants: a float32 global step, its
    learning-rate schedule (decay steps from its epoch size), gradient descent, its
    `tower_loss` and `average_gradients` in the tutorial's tower loop, moving averages of the
    trainable variables grouped with the update."""
    cifar10, train = originals['cifar10'], originals['cifar10_multi_gpu_train']

    def build(inputs, setup):
        global_step = tf.get_variable('global_step', [], initializer=tf.constant_initializer(0),
                                      trainable=False)
        learning_rate = tf.train.exponential_decay(
            cifar10.INITIAL_LEARNING_RATE, global_step,
            _original_decay_steps(originals, num_towers),
            cifar10.LEARNING_RATE_DECAY_FACTOR, staircase=True)
        optimizer = tf.train.GradientDescentOptimizer(learning_rate)
        towers = regression.classic_towers(train.tower_loss, train.average_gradients, inputs,
                                           setup, optimizer, tower_name=cifar10.TOWER_NAME)
        update = optimizer.apply_gradients(towers.grads, global_step=global_step)
        averages = tf.train.ExponentialMovingAverage(cifar10.MOVING_AVERAGE_DECAY, global_step)
        return {'train': tf.group(update, averages.apply(tf.trainable_variables())),
                'tower_losses': towers.losses,
                'grads': {var.op.name: grad for grad, var in towers.grads}}
    return build


def measure_original_run(originals, run, checkpoint=None):
    """Trains the original tutorial's own code as `measure_run` trains the project's.

    Args:
      originals: the original's modules by name (`ORIGINAL_MODULES`), imported through
        `towers.legacy.import_originals`.
      run, checkpoint: as `measure_run`.

    Returns:
      The figures of `measure_run`, of the original.
    """
    return regression.measure_builder(
        _original_training(originals, run['num_towers']),
        batch(0, TOWER_BATCH * run['num_towers'], run['seed']), run['num_towers'],
        lambda shapes: initial_values(run['seed']),
        _measure_steps(run, lambda replay: replay.outputs,
                       _original_decay_steps(originals, run['num_towers']), checkpoint))


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


def original_network(originals):
    """The original's evaluation network, as its `cifar10_eval.py` builds it.

    Args:
      originals: the original's modules by name (`ORIGINAL_MODULES`).

    Returns:
      (evaluation, var_list) for `measure_evaluation`: the original's `inference` with
      `tf.nn.in_top_k`, and its moving averages restored into the variables.
    """
    cifar10 = originals['cifar10']

    def evaluation(images, labels):
        logits = cifar10.inference(images)
        return logits, tf.nn.in_top_k(logits, labels, 1)

    return evaluation, lambda: tf.train.ExponentialMovingAverage(
        cifar10.MOVING_AVERAGE_DECAY).variables_to_restore()


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


# The evaluation of a live regression: the golden evaluation's batches.
LIVE_EVALUATION = {'eval_steps': list(range(50000, 50010)), 'batch': TOWER_BATCH, 'seed': 0}
GOLDEN_SETUP = (
    'per-tower batch 128; global batch 128*num_towers fed in order (tower i gets rows '
    '[128*i, 128*(i+1)) of models.cifar10.regression.batch(step, 128*num_towers, seed)); '
    'initial values from models.cifar10.regression.initial_values(seed); '
    'GradientDescentOptimizer on exponential_decay(INITIAL_LEARNING_RATE, global_step, '
    'int(NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN/128/num_towers*NUM_EPOCHS_PER_DECAY), '
    'LEARNING_RATE_DECAY_FACTOR, staircase=True) of the original cifar10.py; '
    'ExponentialMovingAverage(MOVING_AVERAGE_DECAY, global_step) applied to the trainable '
    'variables and grouped with apply_gradients; shadows start equal to the initial weights')


class LiveRegression:
    """The original tutorial's own code and the project's, trained and evaluated side by side.

    For each tower count, both train from the same initial values on the same batches and the
    project's figures are compared with the original's as with a golden file's
    (`compare_run`). The checkpoint each side writes after the last run is then evaluated by
    the original's evaluation and by the project's, which must agree (`compare_evaluation`).

    Attributes:
      original_runs: dict run key -> the original's figures, as a golden file's `runs`,
        filled in as the runs are measured.
    """

    def __init__(self, originals, workdir):
        """Args:
          originals: the original's modules by name (`ORIGINAL_MODULES`), imported through
            `towers.legacy.import_originals`.
          workdir: an existing folder for the checkpoints.

        Raises:
          TowersError: the original's `tower_loss` is not the tutorial's (scope, images,
            labels) of 2017 and later.
        """
        parameters = list(inspect.signature(
            originals['cifar10_multi_gpu_train'].tower_loss).parameters)
        if len(parameters) != 3:
            raise TowersError('the original\'s cifar10_multi_gpu_train.tower_loss takes (%s); '
                              'the live regression runs the tutorial\'s tower_loss(scope, '
                              'images, labels) of 2017 and later' % ', '.join(parameters))
        self.original_runs = {}
        self._originals = originals
        self._checkpoints = {side: os.path.join(workdir, '%s.ckpt' % side)
                             for side in ('original', 'project')}

    def checks(self, tower_counts, steps, seed=0):
        """The runs for `towers.regression.check_runs`: (title, compare) for each tower count
        (`steps` steps each), then for the evaluation of each side's checkpoint."""
        checks = [('original vs project: %d tower(s), seed %d, %d steps' % (count, seed, steps),
                   functools.partial(self._compare_run, str(count),
                                     {'num_towers': count, 'seed': seed, 'steps': steps},
                                     count == tower_counts[-1]))
                  for count in tower_counts]
        return checks + [('evaluation of the %s\'s checkpoint by the original and the project'
                          % side, functools.partial(self._compare_evaluation, side))
                         for side in self._checkpoints]

    def _compare_run(self, key, run, last):
        original = measure_original_run(self._originals, run,
                                        self._checkpoints['original'] if last else None)
        self.original_runs[key] = dict(run, **original)
        return compare_run(key, self.original_runs[key],
                           measure_run(run, self._checkpoints['project'] if last else None))

    def _compare_evaluation(self, side):
        checkpoint = self._checkpoints[side]
        return compare_evaluation(
            measure_evaluation(LIVE_EVALUATION, checkpoint, original_network(self._originals)),
            measure_evaluation(LIVE_EVALUATION, checkpoint),
            run='evaluation of the %s checkpoint' % side)

    def golden(self, source):
        """The original's training figures as a golden file: 'source' (`source`), 'setup' and
        'runs' (`original_runs`)."""
        return {'source': source, 'setup': GOLDEN_SETUP, 'runs': self.original_runs}
