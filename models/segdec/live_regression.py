"""SegDecNet's regression run live, against a user's copy of the TF1 multi-GPU original.

The original's own `tower_loss`, `average_gradients` and `assign_to_device`
(`ORIGINAL_MODULES`, imported through `towers.legacy`) are built in its `build_model`'s tower
loop beside this project's recipe, on the same initial values and batches, and their figures
are compared as a golden file's are (`models.segdec.regression`).
"""
import functools
import inspect
import os

import numpy as np

from models.segdec import model as segdec
from models.segdec.regression import (
    compare_evaluation, compare_run, evaluation_batches, evaluation_figures, measure_evaluation,
    measure_figures, measure_run, regression_initial_values, run_batches, save_after_total)
from towers import regression
from towers.compat import tf
from towers.errors import TowersError

# The modules of the TF1 multi-GPU SegDecNet a live regression imports, in import order.
ORIGINAL_MODULES = ('segdec_model', 'segdec_train')
GOLDEN_SETUP = (
    'batch 1 per tower; tower i gets row i of models.segdec.regression.regression_batch(step, '
    'num_towers, height, width, seed), step 0 for the step-0 figures, 1 after one update; '
    'initial values from regression_initial_values(shapes, seed); GradientDescentOptimizer '
    'at learning_rate; train ops total (total loss, every trainable variable), segment (pixel '
    'loss, variables named "segment") and decision (class loss, variables named "decision") '
    'from one set of towers, each from the initial values')


# The train ops of the original's `build_model`: (index of the loss in what its `tower_loss`
# returns, the part of the names of the variables it updates).
_OBJECTIVES = {'total': (0, ''), 'segment': (1, segdec.SEGMENT_SCOPE),
               'decision': (2, segdec.DECISION_SCOPE)}


def _original_training(originals, learning_rate):
    """A builder of the original's training graph, as its `build_model` builds it from its own
    functions: its tower loop (`towers.regression.classic_towers`, each tower in its
    `assign_to_device(device)` and name scope '<TOWER_NAME>_<i>') on the (total, pixel, class)
    losses of its `tower_loss`, the gradients of each train op's loss over the trainable
    variables whose names hold its scope, its `average_gradients`, one gradient-descent update
    per train op."""
    train = originals['segdec_train']

    def build(inputs, setup):
        optimizer = tf.train.GradientDescentOptimizer(learning_rate)
        towers = regression.classic_towers(
            train.tower_loss, train.average_gradients, inputs, setup, optimizer,
            device_fn=train.assign_to_device, tower_name=train.TOWER_NAME,
            objectives=_OBJECTIVES)
        return {'tower_losses': [losses[1:] for losses in towers.losses], 'grads': towers.grads,
                'train_ops': {name: optimizer.apply_gradients(pairs)
                              for name, pairs in towers.grads.items()}}
    return build


def measure_original_run(originals, run, checkpoint=None):
    """Builds the original's training as `measure_run` builds the project's, and measures it.

    Args:
      originals: the original's modules by name (`ORIGINAL_MODULES`), imported through
        `towers.legacy.import_originals`.
      run: a golden run's settings: 'num_towers', 'batch_per_tower' (1), 'image_height',
        'image_width', 'seed', 'learning_rate'.
      checkpoint: None, or a checkpoint prefix written after the figures, of the variables
        after one 'total' update (`models.segdec.regression.save_after_total`).

    Returns:
      The figures of `models.segdec.regression.measure_figures`, of the original.
    """
    batches = run_batches(run)

    def measure(replay):
        figures = measure_figures(replay, batches=batches, **replay.outputs)
        if checkpoint:
            save_after_total(replay, replay.outputs['train_ops']['total'], batches, checkpoint)
        return figures

    return regression.measure_builder(
        _original_training(originals, run['learning_rate']), batches[0], run['num_towers'],
        lambda shapes: regression_initial_values(shapes, run['seed']), measure)


def measure_original_run_on_tf1(originals, run, python, folder, checkpoint=None):
    """`measure_original_run` on real TensorFlow 1.15: the original's own `tower_loss`,
    `average_gradients` and `assign_to_device` in the tower loop of `towers.legacy.compare.
    probe.replay` (in `python`, a Python 3.7 with TF 1.15), each train op two steps from the
    same initial values (the variables' shapes read from the original's graph built here);
    'total' last, so that `checkpoint` (None, or a prefix) holds the variables after its two.

    Args:
      originals, run: as `measure_original_run`.
      python: the Python of TF 1.15 (`towers.legacy.compare.tf1.python`).
      folder: an existing folder for the batches, the initial values and the job's files.
      checkpoint: None, or the prefix of the checkpoint TF 1.15 writes last.
    """
    from towers.legacy.compare import tf1
    batches = run_batches(run)
    shapes = regression.measure_builder(
        _original_training(originals, run['learning_rate']), batches[0], run['num_towers'],
        lambda shapes: regression_initial_values(shapes, run['seed']),
        lambda replay: replay.variable_shapes)
    inputs = ['images', 'pixel_labels', 'labels']
    np.savez(os.path.join(folder, 'batches.npz'), **{
        '%s_%d' % (name, step): value for step, batch in enumerate(batches)
        for name, value in zip(inputs, batch)})
    np.savez(os.path.join(folder, 'initial.npz'),
             **regression_initial_values(shapes, run['seed']))
    train = originals['segdec_train']
    measured = tf1.run_job(python, 'replay', dict(
        original_dir=os.path.dirname(os.path.abspath(train.__file__)),
        modules=list(ORIGINAL_MODULES), tower_loss='segdec_train.tower_loss',
        average_gradients='segdec_train.average_gradients',
        device_fn='segdec_train.assign_to_device', tower_name=train.TOWER_NAME,
        num_towers=run['num_towers'], steps=2, inputs=inputs,
        # A constant rate: decayed by a factor of 1.
        learning_rate={'initial': run['learning_rate'], 'decay_steps': 1, 'decay_factor': 1.0},
        objectives={name: list(_OBJECTIVES[name]) for name in ('segment', 'decision', 'total')},
        batches=os.path.join(folder, 'batches.npz'), initial=os.path.join(folder, 'initial.npz'),
        moving_average_decay=None, checkpoint=checkpoint), folder)['objectives']
    return {'global_variables': shapes, 'train_ops': {name: {
        'step0_averaged_grad_l2_norms': found['step0_averaged_grad_l2_norms'],
        'tower_pixel_class_losses_batch0_before_update': [
            losses[1:] for losses in found['tower_losses_per_step'][0]],
        'tower_pixel_class_losses_batch1_after_update': [
            losses[1:] for losses in found['tower_losses_per_step'][1]]}
        for name, found in measured.items()}}


def _original_scores(originals, images):
    """The original's network in test mode, as its training builds it (`SegmentNet`, the
    sigmoid of its pixel logits into `DecisionNet`, batch norm on the moving statistics): a
    dict with 'score' (softmax probability of class 1) and 'mask'."""
    model = originals['segdec_model']
    features, pixel_logits = model.SegmentNet(images, is_training=False)
    mask = tf.sigmoid(pixel_logits)
    class_logits = model.DecisionNet(features, mask, is_training=False)
    return {'score': tf.nn.softmax(class_logits)[:, 1], 'mask': mask}


def measure_original_evaluation(originals, run, checkpoint):
    """`models.segdec.regression.measure_evaluation` of `checkpoint` by the original's
    network (`_original_scores`), here under the runner."""
    batches = evaluation_batches(run)
    outputs = regression.evaluate_checkpoint(
        functools.partial(_original_scores, originals), checkpoint,
        [images for images, _, _ in batches])
    return evaluation_figures(batches, outputs)


def measure_original_evaluation_on_tf1(originals, run, checkpoint, python, folder):
    """`measure_original_evaluation` on real TensorFlow 1.15, in `python`
    (`towers.legacy.compare.probe.evaluate`, the same calls of the original's functions)."""
    from towers.legacy.compare import tf1
    batches = evaluation_batches(run)
    np.savez(os.path.join(folder, 'evaluation_batches.npz'), **{
        'images_%d' % index: images for index, (images, _, _) in enumerate(batches)})
    model = originals['segdec_model']
    outputs = tf1.run_job(python, 'evaluate', dict(
        original_dir=os.path.dirname(os.path.abspath(model.__file__)),
        modules=list(ORIGINAL_MODULES), batches=os.path.join(folder, 'evaluation_batches.npz'),
        inputs=['images'], checkpoint=checkpoint, fetch=['probabilities', 'mask'], calls=[
            [['features', 'pixel_logits'], 'segdec_model.SegmentNet', ['images'],
             {'is_training': False}],
            [['mask'], 'tf.sigmoid', ['pixel_logits'], {}],
            [['class_logits'], 'segdec_model.DecisionNet', ['features', 'mask'],
             {'is_training': False}],
            [['probabilities'], 'tf.nn.softmax', ['class_logits'], {}]]), folder)['outputs']
    return evaluation_figures(batches, [
        {'score': np.asarray(output['probabilities'], np.float32)[:, 1], 'mask': output['mask']}
        for output in outputs])


class LiveRegression:
    """The original SegDecNet's own code and the project's, measured side by side.

    For each tower count both train from the same initial values on the same batches, and the
    project's figures are compared with the original's as with a golden file's (`compare_run`).
    After the last tower count, each side's checkpoint (the variables after its 'total'
    updates: the project's with its batch norms' moving statistics updated, the original's
    with them as they started, its replayed tower loop running no such updates) is evaluated
    by the original's network and by the project's (`scripts/eval_segdec.py`'s), which must
    agree (`compare_evaluation`).

    Attributes:
      original_runs: dict run key -> the original's run, as a golden file's `runs`, filled in
        as the runs are measured.
    """

    def __init__(self, originals, folder, python=None):
        """Args:
          originals: the original's modules by name (`ORIGINAL_MODULES`).
          folder: an existing folder for the checkpoints and the TF 1.15 jobs' files.
          python: None (the original runs under the runner), or the Python of TF 1.15
            (`measure_original_run_on_tf1`).

        Raises:
          TowersError: the original's `segdec_train` lacks the tower version's functions, or
            its `tower_loss` is not (scope, images, pixel_labels, labels).
        """
        train = originals['segdec_train']
        missing = [name for name in ('tower_loss', 'average_gradients', 'assign_to_device',
                                     'TOWER_NAME') if not hasattr(train, name)]
        parameters = [] if missing else list(inspect.signature(train.tower_loss).parameters)
        if missing or len(parameters) != 4:
            raise TowersError(
                'the original\'s segdec_train.py (%s) is not the multi-GPU tower version: %s; '
                'the live regression runs its tower_loss(scope, images, pixel_labels, labels), '
                'average_gradients, assign_to_device and TOWER_NAME'
                % (train.__file__, 'no %s' % ', '.join(missing) if missing
                   else 'its tower_loss takes (%s)' % ', '.join(parameters)))
        self.original_runs = {}
        self._originals = originals
        self._folder, self._python = folder, python
        self._checkpoints = {side: os.path.join(folder, '%s.ckpt' % side)
                             for side in ('original', 'project')}

    def checks(self, tower_counts, image_height, image_width, learning_rate, seed=0):
        """The runs for `towers.regression.check_runs`: (title, compare) per tower count, then
        for the evaluation of each side's checkpoint."""
        runs = [dict(num_towers=count, batch_per_tower=1, image_height=image_height,
                     image_width=image_width, seed=seed, learning_rate=learning_rate)
                for count in tower_counts]
        original = 'original on TensorFlow 1.15' if self._python else 'original'
        return [('original vs project: %d tower(s), %dx%d, seed %d, learning rate %g'
                 % (run['num_towers'], image_height, image_width, seed, learning_rate),
                 functools.partial(self._compare_run, str(run['num_towers']), run,
                                   run is runs[-1]))
                for run in runs] + [
            ('evaluation of the %s\'s checkpoint by the %s and the project' % (side, original),
             functools.partial(self._compare_evaluation, side, runs[-1]))
            for side in self._checkpoints]

    def _compare_run(self, key, run, last):
        checkpoint = self._checkpoints['original'] if last else None
        if self._python:
            folder = os.path.join(self._folder, 'towers_%s' % key)
            os.makedirs(folder, exist_ok=True)
            measured = measure_original_run_on_tf1(self._originals, run, self._python, folder,
                                                   checkpoint)
        else:
            measured = measure_original_run(self._originals, run, checkpoint)
        self.original_runs[key] = dict(run, **measured)
        return compare_run(key, self.original_runs[key], measure_run(
            run, self._checkpoints['project'] if last else None))

    def _compare_evaluation(self, side, run):
        checkpoint = self._checkpoints[side]
        if self._python:
            folder = os.path.join(self._folder, 'evaluation_%s' % side)
            os.makedirs(folder, exist_ok=True)
            original = measure_original_evaluation_on_tf1(self._originals, run, checkpoint,
                                                          self._python, folder)
        else:
            original = measure_original_evaluation(self._originals, run, checkpoint)
        return compare_evaluation(original, measure_evaluation(run, checkpoint),
                                  'evaluation of the %s checkpoint' % side)

    def golden(self, source):
        """The original's figures as a golden file: 'source', 'setup' and 'runs'."""
        return {'source': source, 'setup': GOLDEN_SETUP, 'runs': self.original_runs}
