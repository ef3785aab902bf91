"""Measuring training throughput: timed steps, the machine's matmul rate, a model's FLOPs, and
TensorFlow's `MirroredStrategy` as the replication to compare towers with.

    rate = measure_throughput(train_op, examples_per_step=512, config=setup.config,
                              plan=QUICK)
    rate.examples_per_sec                  # median over `plan.repeats` timed blocks

Every measurement runs its op in a fresh `tf.train.SingularMonitoredSession` of the default
graph, times each step with the training loop's own `StepTimerHook`, discards the warm-up steps
(graph optimisation, allocation, filling input buffers) and splits the remaining steps into
blocks. A block's rate is its examples over its wall time, so a block in which an input
pipeline stalls shows it even when most single steps are fast; the median over blocks keeps a
block disturbed by another process from moving the figure.
"""
import collections

import numpy as np
from matplotlib.figure import Figure

from towers.compat import tf
from towers.errors import TowersError
from towers.files import write_file_atomically
from towers.hooks import StepTimerHook
from towers.replicate import split_batch

Plan = collections.namedtuple('Plan', ['warmup_steps', 'steps_per_repeat', 'repeats'])
Plan.__doc__ = """How long to measure: untimed warm-up steps, then `repeats` blocks of steps."""

QUICK = Plan(warmup_steps=2, steps_per_repeat=3, repeats=3)
FULL = Plan(warmup_steps=5, steps_per_repeat=10, repeats=5)

Throughput = collections.namedtuple('Throughput', ['examples_per_sec', 'repeat_rates'])
Throughput.__doc__ = """A measured rate.

Attributes:
  examples_per_sec: the median of `repeat_rates`.
  repeat_rates: examples/sec of each timed block, in the order measured.
"""


def measure_throughput(fetches, examples_per_step, config, plan):
    """Runs `fetches` repeatedly in a new session of the default graph and times it.

    The session initialises the global and local variables; it writes no checkpoints and no
    summaries.

    Args:
      fetches: what one step runs, e.g. a train op.
      examples_per_step: examples one run processes (or, for `matmul_flops`, FLOPs).
      config: the session `tf.ConfigProto`.
      plan: a `Plan`.

    Returns:
      A `Throughput`.
    """
    timer = StepTimerHook(examples_per_step)
    with tf.train.SingularMonitoredSession(hooks=[timer], config=config) as session:
        for _ in range(plan.warmup_steps + plan.steps_per_repeat * plan.repeats):
            session.run(fetches)
    timed = np.reshape(timer.durations[plan.warmup_steps:], [plan.repeats, plan.steps_per_repeat])
    rates = [examples_per_step * plan.steps_per_repeat / block.sum() for block in timed]
    return Throughput(float(np.median(rates)), rates)


def matmul_flops(config, plan, size=4096, device='/cpu:0'):
    """The machine's float32 matrix-multiply rate, as the ceiling for a model's FLOP/s.

    Multiplies two [size, size] float32 variables on `device` in a session with `config`,
    so that it uses the same threads as the model measured beside it.

    Returns:
      FLOP/s (2 * size**3 per product), the median over the plan's blocks.
    """
    with tf.Graph().as_default():
        with tf.device(device):
            a = tf.get_variable('a', [size, size], initializer=tf.random_normal_initializer())
            b = tf.get_variable('b', [size, size], initializer=tf.random_normal_initializer())
            product = tf.matmul(a, b)
        # Running the op, not fetching the product, keeps the copy out to numpy untimed.
        return measure_throughput(product.op, 2.0 * size ** 3, config, plan).examples_per_sec


def _num_elements(tensor, op):
    shape = tensor.shape
    if not shape.is_fully_defined():
        raise TowersError('cannot count the FLOPs of %s (%s): %s has the shape %s; '
                          'the batch and image sizes must be static'
                          % (op.name, op.type, tensor.name, shape))
    return int(np.prod(shape.as_list()))


def _conv_flops(op, output, filter_shape):
    """2 * (elements of the convolution's output side) * (kernel height * width * in depth)."""
    return 2 * _num_elements(output, op) * int(np.prod(filter_shape[:3]))


def _matmul_flops(op):
    a = op.inputs[0]
    depth = a.shape.as_list()[0 if op.get_attr('transpose_a') else 1]
    return 2 * _num_elements(op.outputs[0], op) * depth


# The ops that hold a network's multiply-adds, and their FLOPs. A convolution's forward pass,
# its gradient for the input and its gradient for the kernel each take one multiply-add per
# kernel weight per output position.
_FLOPS = {
    'Conv2D': lambda op: _conv_flops(op, op.outputs[0], op.inputs[1].shape.as_list()),
    'Conv2DBackpropInput': lambda op: _conv_flops(op, op.inputs[2], op.inputs[1].shape.as_list()),
    'Conv2DBackpropFilter': lambda op: _conv_flops(op, op.inputs[2],
                                                   op.outputs[0].shape.as_list()),
    'MatMul': _matmul_flops,
}


def _ops_computing(tensors):
    """The ops whose outputs `tensors` are computed from, following data edges only.

    Control edges order ops or gate them (`compute_gradients` makes each gradient wait for
    all gradients of the same op, the images' too) without feeding a value; TensorFlow's
    graph optimiser prunes gated results that no op reads, so they cost nothing.
    """
    pending = [t.op for t in tf.nest.flatten(tensors)]
    seen = set()
    while pending:
        op = pending.pop()
        if op not in seen:
            seen.add(op)
            pending.extend(t.op for t in op.inputs)
    return seen


def count_flops(tensors, skip_scopes=()):
    """The FLOPs of the convolutions and matrix products that computing `tensors` takes.

    Counted: `Conv2D`, `Conv2DBackpropInput`, `Conv2DBackpropFilter` and `MatMul`, one
    multiply-add as two FLOPs, among the ops the values of `tensors` are computed from. Not
    counted: element-wise ops, pooling, normalisation, the loss and the update.

    Args:
      tensors: a tensor or nested structure of tensors: a loss for the forward pass, the
        gradients of the variables for a training step (forward and backward passes).
      skip_scopes: name scopes whose ops are not counted wherever they occur in an op's name
        (e.g. a normalisation layer built from matmuls, and its gradient).

    Returns:
      The number of FLOPs.

    Raises:
      TowersError: a counted op has a shape that is not static.
    """
    skip = set(skip_scopes)
    return sum(_FLOPS[op.type](op) for op in _ops_computing(tensors)
               if op.type in _FLOPS and not skip.intersection(op.name.split('/')[:-1]))


def mirrored_train_op(tower_fn, inputs, optimizer, global_step=None, ps_device='/cpu:0'):
    """One training step of `tower_fn` replicated by the `tf.distribute` strategy in scope.

    Called inside `tf.distribute.MirroredStrategy(devices).scope()`, this is how that strategy
    trains the model `build_towers` replicates, for comparing the two: replica i trains on
    shard i of `inputs` (the same shards as tower i), minimises its total loss divided by the
    number of replicas, and the strategy sums the replicas' gradients, so that the update
    equals the towers' averaged gradient. Variables made by `tower_fn` are mirrored on every
    device. Outside a strategy's scope it builds a plain single-device step.

    Args:
      tower_fn: as for `build_towers`: builds the model of one shard, adds its losses to the
        `losses` collection, returns a dict of tensors or None.
      inputs: the global batch, a tensor or nested structure of tensors, split into one
        shard per replica on `ps_device`.
      optimizer: a `tf.train.Optimizer` made in the strategy's scope.
      global_step: incremented once per step, or None; made in the strategy's scope.
      ps_device: where the global batch is split.

    Returns:
      train_op: the op of one step.
      replica_losses: list of each replica's total loss (unscaled), scalars.

    Raises:
      TowersError: a replica added no loss, or the graph has regularisation losses (the
        strategy's replicas would not each differentiate them; add them to `losses` instead).
    """
    strategy = tf.distribute.get_strategy()
    num_replicas = strategy.num_replicas_in_sync
    with tf.device(ps_device):
        shards = split_batch(inputs, num_replicas)

    def replica_step():
        replica = tf.get_static_value(tf.distribute.get_replica_context().replica_id_in_sync_group)
        # Replica 0 builds in the outer name scope; the scope below keeps its losses apart from
        # those of the other replicas ('replica_<i>/...').
        with tf.name_scope('mirrored') as scope:
            tower_fn(shards[replica])
            losses = tf.get_collection(tf.GraphKeys.LOSSES, scope)
        if not losses:
            raise TowersError('replica %d added no loss to the `losses` collection' % replica)
        if tf.losses.get_regularization_losses():
            raise TowersError('mirrored_train_op cannot use regularisation losses (%s): add '
                              'weight decay to the `losses` collection in the tower function'
                              % tf.losses.get_regularization_losses()[0].name)
        total_loss = tf.add_n(losses, name='total_loss')
        grads = optimizer.compute_gradients(total_loss / num_replicas)
        return optimizer.apply_gradients(grads, global_step=global_step), total_loss

    step, total_loss = strategy.run(replica_step)
    return (tf.group(strategy.experimental_local_results(step), name='mirrored_train_op'),
            list(strategy.experimental_local_results(total_loss)))


# The keys of the results: methods measured per number of devices, then single figures.
PER_DEVICE_COUNT = ('single_device', 'towers', 'mirrored')
SINGLE_FIGURES = ('input_only', 'end_to_end', 'in_memory_step')

Row = collections.namedtuple(
    'Row', ['key', 'label', 'devices', 'global_batch', 'parallel_devices', 'throughput'])
Row.__doc__ = """One measured configuration.

Attributes:
  key: a name of `PER_DEVICE_COUNT` or `SINGLE_FIGURES`.
  label: how the table names it.
  devices: the device count it stands for: the global batch is that many towers' batches
    (which the single device runs as one).
  global_batch: examples per step.
  parallel_devices: physical devices computing at once (1 for virtual CPU devices, which share
    the machine's cores), for the fraction of the matmul rate; 0 where no model runs.
  throughput: the `Throughput`.
"""


def results_json(rows, matmul_rate, train_flops_per_example):
    """The results as the JSON of the benchmark: images/sec per method and device count.

    Returns:
      A dict: each of `PER_DEVICE_COUNT` -> {'<devices>': examples/sec}, each of
      `SINGLE_FIGURES` -> examples/sec, 'matmul_flops' and 'model_train_flops_per_example'.
    """
    results = {key: {} for key in PER_DEVICE_COUNT}
    for row in rows:
        if row.key in PER_DEVICE_COUNT:
            results[row.key][str(row.devices)] = row.throughput.examples_per_sec
        else:
            results[row.key] = row.throughput.examples_per_sec
    results['matmul_flops'] = matmul_rate
    results['model_train_flops_per_example'] = train_flops_per_example
    return results


def _baseline(rows, devices):
    return next(r.throughput.examples_per_sec for r in rows
                if r.key == 'single_device' and r.devices == devices)


def _fraction_of_matmul(row, matmul_rate, train_flops_per_example):
    achieved = row.throughput.examples_per_sec * train_flops_per_example
    return achieved / (matmul_rate * row.parallel_devices)


def format_table(rows, matmul_rate, train_flops_per_example):
    """The measurements as a text table with the ratio of each to the single device.

    Each row's ratio is against the single device with the same global batch; 'of matmul' is
    the model's achieved FLOP/s over the matmul rate of the devices computing at once.
    """
    lines = ['%-34s %7s %6s %10s %19s %7s %9s' % ('method', 'devices', 'batch', 'images/s',
                                                  '(min - max)', 'vs (a)', 'of matmul')]
    for row in rows:
        rate = row.throughput.examples_per_sec
        fraction = ('%9.2f' % _fraction_of_matmul(row, matmul_rate, train_flops_per_example)
                    if row.parallel_devices else '%9s' % '-')
        lines.append('%-34s %7d %6d %10.1f %19s %7.2f %s' % (
            row.label, row.devices, row.global_batch, rate,
            '(%.1f - %.1f)' % (min(row.throughput.repeat_rates),
                               max(row.throughput.repeat_rates)),
            rate / _baseline(rows, row.devices), fraction))
    lines.append('matmul rate %.1f GFLOP/s; model %.1f MFLOP per training example'
                 % (matmul_rate / 1e9, train_flops_per_example / 1e6))
    return '\n'.join(lines)


Target = collections.namedtuple('Target', ['name', 'value', 'threshold'])
Target.__doc__ = """A target of the benchmark: met when `value >= threshold`."""


def targets(rows, matmul_rate, train_flops_per_example):
    """The throughput targets, checked at the largest number of devices measured.

    - towers reach 0.95x the single device with the same global batch;
    - towers are at least as fast as MirroredStrategy;
    - the step with real input reaches 0.9x the step on data in memory;
    - the towers' training step reaches 0.75 of the matmul rate.

    Returns:
      A list of `Target`.
    """
    def row(key, devices=None):
        return next(r for r in rows if r.key == key and devices in (None, r.devices))

    most = max(r.devices for r in rows if r.key == 'towers')
    towers = row('towers', most)
    rate = towers.throughput.examples_per_sec
    return [
        Target('towers %d / single device, batch %d' % (most, towers.global_batch),
               rate / _baseline(rows, most), 0.95),
        Target('towers %d / MirroredStrategy %d' % (most, most),
               rate / row('mirrored', most).throughput.examples_per_sec, 1.0),
        Target('real input / data in memory',
               row('end_to_end').throughput.examples_per_sec
               / row('in_memory_step').throughput.examples_per_sec, 0.9),
        Target('towers %d FLOP/s / matmul FLOP/s' % most,
               _fraction_of_matmul(towers, matmul_rate, train_flops_per_example), 0.75),
    ]


def format_targets(target_list):
    """One line per `Target`: its value, its threshold, and whether it is met."""
    return '\n'.join('%-44s %6.2f (target >= %.2f) %s'
                     % (t.name, t.value, t.threshold,
                        'met' if t.value >= t.threshold else 'MISSED')
                     for t in target_list)


def save_chart(rows, path, title):
    """Saves a PNG of examples/sec against devices: a line per method of `PER_DEVICE_COUNT`,
    points for the model steps of `SINGLE_FIGURES`; the input pipeline's rate, often far
    above, is written in the corner instead of stretching the scale."""
    # A bare Figure renders with Agg and leaves pyplot's global state alone.
    figure = Figure(figsize=(7, 4.5))
    axes = figure.subplots()
    for key in PER_DEVICE_COUNT:
        points = sorted((r.devices, r.throughput.examples_per_sec) for r in rows if r.key == key)
        label = next(r.label for r in rows if r.key == key)
        axes.plot(*zip(*points), marker='o', label=label)
    for row in rows:
        if row.key == 'input_only':
            axes.text(0.99, 0.02, '%s: %.0f images/sec' % (row.label,
                                                           row.throughput.examples_per_sec),
                      transform=axes.transAxes, ha='right', va='bottom', fontsize='small')
        elif row.key in SINGLE_FIGURES:
            axes.plot([row.devices], [row.throughput.examples_per_sec], marker='s',
                      linestyle='none', label=row.label)
    axes.set_xticks(sorted({r.devices for r in rows}))
    axes.set_xlabel('devices')
    axes.set_ylabel('images/sec')
    axes.set_ylim(bottom=0)
    axes.set_title(title, fontsize='medium')
    axes.grid(alpha=0.3)
    axes.legend(fontsize='small', loc='upper left')
    figure.tight_layout()
    write_file_atomically(path, figure.savefig)
