"""The CIFAR-10 regression run live, against a user's copy of the original tutorial.

The original's own `tower_loss`, `average_gradients` and `inference` (`ORIGINAL_MODULES`,
imported through `towers.legacy`) train in the tutorial's tower loop beside the project's
recipe, on the same initial values and batches, and their figures are compared as a golden
file's are (`models.cifar10.regression`); each side's checkpoint is evaluated by both
evaluations.
"""
import functools
import inspect
import os

import numpy as np

from models.cifar10.regression import (TOWER_BATCH, batch, compare_evaluation, compare_run,
                                       initial_values, measure_evaluation, measure_run,
                                       measure_steps)
from towers import regression
from towers.compat import tf
from towers.errors import TowersError


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
        measure_steps(run, lambda replay: replay.outputs,
                       _original_decay_steps(originals, run['num_towers']), checkpoint))


def _save_batches(path, steps, size, seed):
    """Writes `batch(step, size, seed)` of each of `steps` to the .npz `path`, as 'images_<i>'
    and 'labels_<i>' by position, for a job of `towers.legacy.compare.probe`."""
    batches = {}
    for index, step in enumerate(steps):
        batches['images_%d' % index], batches['labels_%d' % index] = batch(step, size, seed)
    np.savez(path, **batches)


def _original_job(originals, folder, batches):
    """What every `towers.legacy.compare.probe` job of the original is given: its folder, its
    modules and the batches' file."""
    return {'original_dir': os.path.dirname(os.path.abspath(originals['cifar10'].__file__)),
            'modules': list(ORIGINAL_MODULES), 'batches': os.path.join(folder, batches)}


def measure_original_run_on_tf1(originals, run, python, folder, checkpoint=None):
    """`measure_original_run` on real TensorFlow 1.15: the original's own `tower_loss` and
    `average_gradients`, its constants, the same batches and initial values, replayed by
    `towers.legacy.compare.probe.replay` in `python` (a Python 3.7 with TF 1.15).

    Args:
      originals, run, checkpoint: as `measure_original_run`.
      python: the Python of TF 1.15 (`towers.legacy.compare.tf1.python`).
      folder: an existing folder for the batches, the initial values and the replay's files.
    """
    from towers.legacy.compare import tf1
    cifar10, num_towers, seed = originals['cifar10'], run['num_towers'], run['seed']
    _save_batches(os.path.join(folder, 'batches.npz'), range(run['steps']),
                  TOWER_BATCH * num_towers, seed)
    np.savez(os.path.join(folder, 'initial.npz'), **initial_values(seed))
    decay_steps = _original_decay_steps(originals, num_towers)
    measured = tf1.run_job(python, 'replay', dict(
        _original_job(originals, folder, 'batches.npz'),
        tower_loss='cifar10_multi_gpu_train.tower_loss',
        average_gradients='cifar10_multi_gpu_train.average_gradients',
        tower_name=cifar10.TOWER_NAME, num_towers=num_towers, steps=run['steps'],
        learning_rate={'initial': cifar10.INITIAL_LEARNING_RATE, 'decay_steps': decay_steps,
                       'decay_factor': cifar10.LEARNING_RATE_DECAY_FACTOR},
        moving_average_decay=cifar10.MOVING_AVERAGE_DECAY,
        initial=os.path.join(folder, 'initial.npz'), checkpoint=checkpoint), folder)
    return {'learning_rate_decay_steps': decay_steps,
            'tower_losses_per_step': measured['tower_losses_per_step'],
            'step0_averaged_grad_l2_norms': measured['step0_averaged_grad_l2_norms'],
            'final_abs_sums': measured['final_abs_sums']}


def measure_original_evaluation_on_tf1(originals, golden, checkpoint, python, folder):
    """`measure_evaluation` of `checkpoint` by the original's network (`original_network`) on
    real TensorFlow 1.15, in `python` (`towers.legacy.compare.probe.evaluate`).

    Args:
      originals, golden, checkpoint: as `measure_evaluation` with `original_network`.
      python: the Python of TF 1.15.
      folder: an existing folder for the batches and the job's files.
    """
    from towers.legacy.compare import tf1
    _save_batches(os.path.join(folder, 'evaluation_batches.npz'), golden['eval_steps'],
                  golden['batch'], golden['seed'])
    # `original_network`: its `inference`, `tf.nn.in_top_k` of 1, the moving averages.
    outputs = tf1.run_job(python, 'evaluate', dict(
        _original_job(originals, folder, 'evaluation_batches.npz'), inputs=['images', 'labels'],
        calls=[[['logits'], 'cifar10.inference', ['images'], {}],
               [['in_top_1'], 'tf.nn.in_top_k', ['logits', 'labels'], {'k': 1}]],
        fetch=['logits', 'in_top_1'], checkpoint=checkpoint,
        moving_average_decay=originals['cifar10'].MOVING_AVERAGE_DECAY), folder)['outputs']
    true_count = sum(int(np.sum(output['in_top_1'])) for output in outputs)
    return {'true_count': true_count,
            'precision_at_1': true_count / float(len(outputs) * golden['batch']),
            'abs_logit_sums': [float(np.abs(np.asarray(output['logits'], np.float32)).sum())
                               for output in outputs]}


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

    def __init__(self, originals, workdir, tf1_python=None):
        """Args:
          originals: the original's modules by name (`ORIGINAL_MODULES`), imported through
            `towers.legacy.import_originals`.
          workdir: an existing folder for the checkpoints.
          tf1_python: None: the original trains here, under the runner; else a Python 3.7
            with TensorFlow 1.15, where it trains instead (`measure_original_run_on_tf1`).

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
        self._tf1_python = tf1_python
        self._workdir = workdir
        self._checkpoints = {side: os.path.join(workdir, '%s.ckpt' % side)
                             for side in ('original', 'project')}

    def checks(self, tower_counts, steps, seed=0):
        """The runs for `towers.regression.check_runs`: (title, compare) for each tower count
        (`steps` steps each), then for the evaluation of each side's checkpoint."""
        original = 'original on TensorFlow 1.15' if self._tf1_python else 'original'
        checks = [('%s vs project: %d tower(s), seed %d, %d steps'
                   % (original, count, seed, steps),
                   functools.partial(self._compare_run, str(count),
                                     {'num_towers': count, 'seed': seed, 'steps': steps},
                                     count == tower_counts[-1]))
                  for count in tower_counts]
        return checks + [('evaluation of the %s\'s checkpoint by the %s and the project'
                          % (side, original), functools.partial(self._compare_evaluation, side))
                         for side in self._checkpoints]

    def _compare_run(self, key, run, last):
        checkpoint = self._checkpoints['original'] if last else None
        if self._tf1_python:
            folder = os.path.join(self._workdir, 'tf1_run_%s' % key)
            os.makedirs(folder, exist_ok=True)
            original = measure_original_run_on_tf1(self._originals, run, self._tf1_python,
                                                   folder, checkpoint)
        else:
            original = measure_original_run(self._originals, run, checkpoint)
        self.original_runs[key] = dict(run, **original)
        return compare_run(key, self.original_runs[key],
                           measure_run(run, self._checkpoints['project'] if last else None))

    def _compare_evaluation(self, side):
        checkpoint = self._checkpoints[side]
        if self._tf1_python:
            folder = os.path.join(self._workdir, 'tf1_evaluation_%s' % side)
            os.makedirs(folder, exist_ok=True)
            original = measure_original_evaluation_on_tf1(
                self._originals, LIVE_EVALUATION, checkpoint, self._tf1_python, folder)
        else:
            original = measure_evaluation(LIVE_EVALUATION, checkpoint,
                                          original_network(self._originals))
        return compare_evaluation(original, measure_evaluation(LIVE_EVALUATION, checkpoint),
                                  run='evaluation of the %s checkpoint' % side)

    def golden(self, source):
        """The original's training figures as a golden file: 'source' (`source`), 'setup' and
        'runs' (`original_runs`)."""
        return {'source': source, 'setup': GOLDEN_SETUP, 'runs': self.original_runs}
