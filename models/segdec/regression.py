"""SegDecNet's regression: deterministic inputs and starting values, and the figures compared.

The golden figures in `tests/data/regression/segdec/` were measured by the TF1 multi-GPU
SegDecNet on inputs and initial values made by a shared recipe; these functions remake them
number for number (same random streams, same order of draws), so this project's model can be
run from the same start on the same batches and compared: `measure_run` rebuilds a golden
run with this project's model, towers and train ops (through `towers.regression`, which owns
the sessions and devices), and `compare_run` lists the deviation of every figure.
"""
import numpy as np

from models.segdec import model as segdec
from models.segdec.recipe import SegDecRecipe
from towers import evaluation, regression
from towers.compat import tf


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


# Tolerances of the comparison (see the golden file's README for the rounding they absorb):
# step-0 gradient norms relative, losses absolute.
GRAD_NORM_RTOL = 1e-2
STEP0_LOSS_ATOL = 1e-4
AFTER_UPDATE_LOSS_ATOL = 1e-2
# Each train op's tower losses: (field of the golden run, figure, label of one loss, tolerance).
_LOSS_FIGURES = (
    ('tower_pixel_class_losses_batch0_before_update', 'batch-0 losses', 'batch-0 loss',
     STEP0_LOSS_ATOL),
    ('tower_pixel_class_losses_batch1_after_update', 'batch-1 losses after one update',
     'batch-1 loss after one update', AFTER_UPDATE_LOSS_ATOL),
)


def run_batches(run):
    """The global batches of steps 0 and 1 of a golden run (one image per tower)."""
    global_batch = run['num_towers'] * run['batch_per_tower']
    return [regression_batch(step, global_batch, run['image_height'], run['image_width'],
                             run['seed'])
            for step in (0, 1)]


def measure_figures(replay, tower_losses, grads, train_ops, batches):
    """A run's figures in a `towers.regression.Replay` of either side's graph.

    Args:
      replay: the `Replay` of the graph.
      tower_losses: each tower's (pixel loss, class loss) scalars.
      grads: dict train op name (`segdec.OBJECTIVES`) -> its averaged (gradient, variable)
        pairs.
      train_ops: dict train op name -> the op applying them.
      batches: `run_batches(run)`.

    Returns:
      A dict shaped like a golden run's: 'global_variables' (name -> shape of the variables)
      and 'train_ops' (op name -> 'step0_averaged_grad_l2_norms',
      'tower_pixel_class_losses_batch0_before_update',
      'tower_pixel_class_losses_batch1_after_update'), each op measured from the initial
      values.
    """
    grad_norms = {name: [tf.norm(g) for g, _ in pairs] for name, pairs in grads.items()}
    losses0, norms = replay.run((tower_losses, grad_norms), batches[0])
    measured = {name: {} for name in segdec.OBJECTIVES}
    for name, figures in measured.items():
        variables = [v.op.name for _, v in grads[name]]
        figures['step0_averaged_grad_l2_norms'] = {
            v: float(n) for v, n in zip(variables, norms[name])}
        figures['tower_pixel_class_losses_batch0_before_update'] = _floats(losses0)
        replay.restart()
        replay.run(train_ops[name], batches[0])
        figures['tower_pixel_class_losses_batch1_after_update'] = _floats(
            replay.run(tower_losses, batches[1]))
    return {'global_variables': replay.variable_shapes, 'train_ops': measured}


def measure_run(run, checkpoint=None):
    """Rebuilds one golden run with this project's model, towers and train ops, and measures it.

    Builds SegDecNet on `run['num_towers']` towers (one set of towers, the three train ops of
    `SegDecRecipe`, plain gradient descent at the run's learning rate) with
    `towers.regression.measure_training` and measures `measure_figures` from the recipe's
    initial values.

    Args:
      run: one entry of the golden file's `runs`.
      checkpoint: None, or a checkpoint prefix written after the figures, of the variables
        after one 'total' update from the initial values on batch 0 (`save_after_total`).

    Returns:
      The figures of `measure_figures`.
    """
    batches = run_batches(run)

    def measure(replay):
        replicated = replay.training.replicated
        figures = measure_figures(
            replay, [(t.outputs['pixel_loss'], t.outputs['class_loss'])
                     for t in replicated.towers],
            replicated.grads, replay.training.train_ops, batches)
        if checkpoint:
            save_after_total(replay, replay.training.train_ops['total'], batches, checkpoint)
        return figures

    return regression.measure_training(
        SegDecRecipe(segdec.SegDecNet(), run['learning_rate']), batches[0], run['num_towers'],
        lambda shapes: regression_initial_values(shapes, run['seed']), measure)


def save_after_total(replay, total, batches, checkpoint):
    """Writes the checkpoint `checkpoint` of the variables after one update by the train op
    `total` from the initial values on `batches[0]` (both sides' checkpoint for an evaluation)."""
    replay.restart()
    replay.run(total, batches[0])
    replay.save(checkpoint)


# A live regression's evaluation of a checkpoint: the recipe's batches of these steps.
EVALUATION_STEPS = (2, 3, 4, 5)
EVALUATION_BATCH = 4
# The figures of `towers.evaluation.detection_metrics` compared exactly.
DETECTION_FIGURES = ('average_precision', 'false_positives', 'false_negatives',
                     'accuracy_at_0.5')
# Tolerances of an evaluation's figures: scores absolute, sums of the masks relative.
SCORE_TOLERANCE = 1e-5
MASK_SUM_TOLERANCE = 1e-5


def evaluation_batches(run):
    """The (images, pixel labels, labels) evaluated by `measure_evaluation`."""
    return [regression_batch(step, EVALUATION_BATCH, run['image_height'], run['image_width'],
                             run['seed'])
            for step in EVALUATION_STEPS]


def evaluation_figures(batches, outputs):
    """The figures of an evaluation of `evaluation_batches`: `towers.evaluation.
    detection_metrics` of the scores (average precision; false positives and negatives at the
    best-F threshold; accuracy at 0.5: `DETECTION_FIGURES`), 'scores' (per image) and
    'abs_mask_sums' (per batch).

    Args:
      batches: `evaluation_batches(run)`.
      outputs: per batch, a dict with 'score' ([b], the probability of a defect) and 'mask'.
    """
    labels = np.concatenate([labels for _, _, labels in batches])
    scores = np.concatenate([np.asarray(output['score'], np.float32) for output in outputs])
    metrics = evaluation.detection_metrics(labels, scores)
    figures = {key: metrics[key] for key in DETECTION_FIGURES}
    figures.update(scores=[float(score) for score in scores], abs_mask_sums=[
        float(np.abs(np.asarray(output['mask'], np.float32)).sum()) for output in outputs])
    return figures


def measure_evaluation(run, checkpoint):
    """Restores `checkpoint` into the project's SegDecNet in test mode (batch norm on its
    moving statistics, as `scripts/eval_segdec.py`) and measures `evaluation_figures` of
    `evaluation_batches(run)`."""
    batches = evaluation_batches(run)
    net = segdec.SegDecNet()
    outputs = regression.evaluate_checkpoint(
        lambda images: {key: value for key, value in net(images, is_training=False).items()
                        if key in ('score', 'mask')},
        checkpoint, [images for images, _, _ in batches])
    return evaluation_figures(batches, outputs)


def compare_evaluation(expected, measured, run):
    """Compares two evaluations of one checkpoint (`evaluation_figures`): the detection
    figures exactly, the scores within `SCORE_TOLERANCE`, the masks' sums within
    `MASK_SUM_TOLERANCE` relative. Returns `towers.regression.Deviation`s of the run `run`."""
    comparison = regression.Comparison(run)
    for key in DETECTION_FIGURES:
        comparison.exact(key.replace('_', ' '), key.replace('_', ' '), expected[key],
                         measured[key])
    comparison.close_each('scores', 'images evaluated', 'score of image %d',
                          dict(enumerate(expected['scores'])),
                          dict(enumerate(measured['scores'])), SCORE_TOLERANCE)
    comparison.close_each('per-batch sums of |mask|', 'batches evaluated',
                          'sum of |mask| of batch %d', dict(enumerate(expected['abs_mask_sums'])),
                          dict(enumerate(measured['abs_mask_sums'])), MASK_SUM_TOLERANCE,
                          relative=True)
    return comparison.deviations


def _floats(pairs):
    return [[float(value) for value in pair] for pair in pairs]


def _by_tower(op, label, pairs):
    """Per-tower (pixel, class) losses as a dict '<op>: tower <i> <kind> <label>' -> loss."""
    return {'%s: tower %d %s %s' % (op, tower, kind, label): value
            for tower, pair in enumerate(pairs) for kind, value in zip(('pixel', 'class'), pair)}


def compare_run(key, golden, measured):
    """Compares one run's measured figures with the golden ones.

    Args:
      key: the run's key in the golden file.
      golden: the golden run.
      measured: `measure_run(golden)`.

    Returns:
      A list of `towers.regression.Deviation`, one per compared figure.
    """
    comparison = regression.Comparison(key)
    comparison.exact_each('variable shapes', 'shape of variable %s', golden['global_variables'],
                          measured['global_variables'])
    for op, expected in sorted(golden['train_ops'].items()):
        actual = measured['train_ops'].get(op)
        if actual is None:
            comparison.exact('train ops', '%s: train op' % op, 'present', 'missing')
            continue
        comparison.close_each('%s: step-0 grad norms' % op, '%s: variables it updates' % op,
                              '%s: step-0 grad norm of %%s' % op,
                              expected['step0_averaged_grad_l2_norms'],
                              actual['step0_averaged_grad_l2_norms'], GRAD_NORM_RTOL,
                              relative=True)
        for field, figure, label, tolerance in _LOSS_FIGURES:
            comparison.close_each('%s: %s' % (op, figure), '%s: towers with a %s' % (op, label),
                                  '%s', _by_tower(op, label, expected[field]),
                                  _by_tower(op, label, actual[field]), tolerance)
    return comparison.deviations
