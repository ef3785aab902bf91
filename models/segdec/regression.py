"""Deterministic inputs and starting values of the SegDecNet regression figures.

The golden figures in `tests/data/regression/segdec/` were measured by the TF1 multi-GPU
SegDecNet on inputs and initial values made by a shared recipe; these functions remake them
number for number (same random streams, same order of draws), so this project's model can be
run from the same start on the same batches and compared: `measure_run` rebuilds a golden
run with this project's model, towers and train ops, and `compare_run` lists the deviation of
every figure.
"""
import collections

import numpy as np

from models.segdec import model as segdec
from towers.compat import tf
from towers.devices import configure_devices


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

Deviation = collections.namedtuple(
    'Deviation', ['run', 'what', 'expected', 'actual', 'error', 'tolerance'])
Deviation.__doc__ = """One compared figure.

Attributes:
  run: the golden run's key ('1', '2').
  what: which figure, e.g. 'total: grad norm of segment/conv1/weights'.
  expected, actual: the golden and the measured value (for a name or shape check, a string).
  error: |actual - expected| (relative for gradient norms); inf for a failed exact check.
  tolerance: the largest error allowed.
"""


def measure_run(run, intra_op_threads=1, inter_op_threads=1):
    """Rebuilds one golden run with this project's model, towers and train ops, and measures it.

    Builds SegDecNet on `run['num_towers']` towers in a new graph (one set of towers, the three
    train ops of `segdec.build_train_graph`, plain gradient descent at the run's learning rate),
    then, from the recipe's initial values each time: the averaged gradients of every op and
    the towers' losses on batch 0, and for each op the towers' losses on batch 1 after one
    update with it on batch 0.

    Args:
      run: one entry of the golden file's `runs`.
      intra_op_threads, inter_op_threads: TensorFlow's thread pools; the golden figures were
        measured with one thread each, which fixes the order of float additions.

    Returns:
      A dict shaped like `run`: 'global_variables' (name -> shape of the model's variables) and
      'train_ops' (op name -> 'step0_averaged_grad_l2_norms',
      'tower_pixel_class_losses_batch0_before_update',
      'tower_pixel_class_losses_batch1_after_update').
    """
    num_towers = run['num_towers']
    global_batch = num_towers * run['batch_per_tower']
    height, width = run['image_height'], run['image_width']
    batches = [regression_batch(step, global_batch, height, width, run['seed'])
               for step in (0, 1)]
    with tf.Graph().as_default():
        setup = configure_devices(num_towers, intra_op_threads=intra_op_threads,
                                  inter_op_threads=inter_op_threads)
        inputs = tuple(tf.placeholder(tf.as_dtype(array.dtype), array.shape)
                       for array in batches[0])
        graph = segdec.build_train_graph(segdec.SegDecNet(), inputs, setup.tower_devices,
                                         run['learning_rate'], setup.ps_device)
        model_variables = [v for v in tf.global_variables() if v is not graph.global_step]
        shapes = {v.op.name: v.shape.as_list() for v in model_variables}
        initial = regression_initial_values(shapes, run['seed'])
        tower_losses = [(t.outputs['pixel_loss'], t.outputs['class_loss'])
                        for t in graph.replicated.towers]
        grad_norms = {name: [tf.norm(g) for g, _ in pairs]
                      for name, pairs in graph.replicated.grads.items()}

        def feed(step):
            return dict(zip(inputs, batches[step]))

        measured = {name: {} for name in segdec.OBJECTIVES}
        with tf.Session(config=setup.config) as sess:
            sess.run(tf.global_variables_initializer())

            def restart():
                for variable in model_variables:
                    variable.load(initial[variable.op.name], sess)

            restart()
            losses0, norms = sess.run((tower_losses, grad_norms), feed(0))
            for name, figures in measured.items():
                variables = [v.op.name for _, v in graph.replicated.grads[name]]
                figures['step0_averaged_grad_l2_norms'] = {
                    v: float(n) for v, n in zip(variables, norms[name])}
                figures['tower_pixel_class_losses_batch0_before_update'] = _floats(losses0)
                restart()
                sess.run(graph.train_ops[name], feed(0))
                figures['tower_pixel_class_losses_batch1_after_update'] = _floats(
                    sess.run(tower_losses, feed(1)))
    return {'global_variables': shapes, 'train_ops': measured}


def _floats(pairs):
    return [[float(value) for value in pair] for pair in pairs]


def compare_run(key, golden, measured):
    """Compares one run's measured figures with the golden ones.

    Args:
      key: the run's key in the golden file.
      golden: the golden run.
      measured: `measure_run(golden, ...)`.

    Returns:
      A list of `Deviation`, one per compared figure.
    """
    deviations = []

    def exact(what, expected, actual):
        deviations.append(Deviation(key, what, str(expected), str(actual),
                                    0.0 if expected == actual else float('inf'), 0.0))

    def close(what, expected, actual, tolerance, relative):
        error = abs(actual - expected) / (abs(expected) if relative else 1.0)
        deviations.append(Deviation(key, what, expected, actual, error, tolerance))

    expected_shapes, actual_shapes = golden['global_variables'], measured['global_variables']
    for name in sorted(set(expected_shapes) | set(actual_shapes)):
        exact('shape of variable %s' % name, expected_shapes.get(name, 'missing'),
              actual_shapes.get(name, 'missing'))
    for op, expected in sorted(golden['train_ops'].items()):
        actual = measured['train_ops'].get(op)
        if actual is None:
            exact('%s: train op' % op, 'present', 'missing')
            continue
        expected_norms = expected['step0_averaged_grad_l2_norms']
        actual_norms = actual['step0_averaged_grad_l2_norms']
        exact('%s: variables it updates' % op, sorted(expected_norms), sorted(actual_norms))
        for name in sorted(set(expected_norms) & set(actual_norms)):
            close('%s: step-0 grad norm of %s' % (op, name), expected_norms[name],
                  actual_norms[name], GRAD_NORM_RTOL, relative=True)
        for field, tolerance, label in (
                ('tower_pixel_class_losses_batch0_before_update', STEP0_LOSS_ATOL,
                 'batch-0 loss'),
                ('tower_pixel_class_losses_batch1_after_update', AFTER_UPDATE_LOSS_ATOL,
                 'batch-1 loss after one update')):
            expected_pairs, actual_pairs = expected[field], actual[field]
            exact('%s: towers with a %s' % (op, label), len(expected_pairs), len(actual_pairs))
            for tower, (expected_pair, actual_pair) in enumerate(zip(expected_pairs,
                                                                     actual_pairs)):
                for kind, e, a in zip(('pixel', 'class'), expected_pair, actual_pair):
                    close('%s: tower %d %s %s' % (op, tower, kind, label), e, a, tolerance,
                          relative=False)
    return deviations
