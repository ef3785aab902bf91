"""Measuring training throughput: steps timed in turns, the machine's matmul rate, FLOPs.

    with TimedSession(train_op_a, 512, config) as a, TimedSession(train_op_b, 512, config) as b:
        rate_a, rate_b = measure_in_turns([a, b], plan=QUICK)
    ratio = paired_ratio(rate_a, rate_b)    # median of the rounds' ratios, with their quartiles

Configurations compared with each other are timed in turns, not one after another: each is
built once, in its own graph, with its session kept open (`TimedSession`); after untimed
warm-up steps (graph optimisation, XLA compilation, allocation, filling input buffers), each
round times a block of steps of every configuration, A B C, then B C A, ... A load that comes and
goes on a shared machine then falls on every configuration of a round alike, and a ratio is
the median over rounds of the ratio within each round (`paired_ratio`), quoted with its
interquartile range; a range wider than `MAX_SPREAD` is too wide to conclude from. A block's
rate is its examples over its steps' wall time (the training loop's `StepTimerHook`), so a
block in which an input pipeline stalls shows it even when most steps are fast.

An input pipeline refills its buffers while the other configurations of a round run, so a
step on real input is charged less than its whole input cost (at most the buffers' worth per
round); the input pipeline alone is therefore measured alone (`measure_throughput`). The
benchmark that measures a registered model's configurations with these is `towers.benchmarks`.
"""
import collections
import os

import numpy as np

from towers import bars
from towers.benchmarks.plan import FULL, QUICK, Plan
from towers.compat import tf
from towers.errors import TowersError
from towers.training.determinism import op_determinism
from towers.training.hooks import StepTimerHook

# Ratios whose interquartile range over the rounds is wider than this are too noisy to read.
MAX_SPREAD = 0.1

Throughput = collections.namedtuple('Throughput', ['examples_per_sec', 'repeat_rates'])
Throughput.__doc__ = """A measured rate.

Attributes:
  examples_per_sec: the median of `repeat_rates`.
  repeat_rates: examples/sec of each timed block, one per round, in the order measured.
"""


def in_memory_batch(*tensors):
    """A batch held in local variables, filled at initialisation, so that a step reads it from
    memory without an input pipeline: one variable per (name, shape, dtype, initializer),
    under the variable scope 'in_memory'. Returns the tuple of them."""
    with tf.variable_scope('in_memory'):
        return tuple(tf.get_local_variable(name, shape, dtype, initializer)
                     for name, shape, dtype, initializer in tensors)


class TimedSession:
    """A configuration's step with its session open, to be timed in turns with others.

    The session, a `tf.train.SingularMonitoredSession` of the graph of `fetches`, initialises
    the global and local variables and writes no checkpoints and no summaries. Close it (or use
    it as a context manager) when done.

    With `deterministic`, op determinism is on while its steps run, and only then: it is
    process-wide, and TensorFlow reads it as it makes the kernels (at the first step) and as
    some of them run, so sessions timed in turns in one thread each run as configured.
    """

    def __init__(self, fetches, examples_per_step, config, deterministic=False):
        """Args:
          fetches: what one step runs, e.g. a train op.
          examples_per_step: examples one run processes (or FLOPs, for `matmul_step`).
          config: the session `tf.ConfigProto`.
          deterministic: whether its steps run with op determinism (build its graph with
            op determinism on, and a graph seed, too).
        """
        self._fetches = fetches
        self._examples_per_step = examples_per_step
        self._deterministic = deterministic
        self._timer = StepTimerHook(examples_per_step)
        with tf.nest.flatten(fetches)[0].graph.as_default():
            self._session = tf.train.SingularMonitoredSession(hooks=[self._timer],
                                                              config=config)

    def warm_up(self, steps):
        """Runs `steps` untimed steps."""
        with op_determinism(self._deterministic):
            for _ in range(steps):
                self._session.run(self._fetches)

    def run(self, steps):
        """Runs `steps` steps; returns their examples/sec (examples over their wall time)."""
        first = len(self._timer.durations)
        self.warm_up(steps)
        return self._examples_per_step * steps / sum(self._timer.durations[first:])

    def close(self):
        self._session.close()

    def __enter__(self):
        return self

    def __exit__(self, *unused_exc_info):
        self.close()


def measure_in_turns(sessions, plan, what='benchmark'):
    """Times `sessions` in turns: each runs its warm-up steps, then `plan.repeats` rounds each
    run a timed block of `plan.steps_per_repeat` steps of every session, the first session of
    a round rotating; the progress over the rounds on stderr (`towers.bars`), between blocks.

    Args:
      sessions: `TimedSession`s.
      plan: a `Plan`.
      what: the group of sessions, as its progress names it.

    Returns:
      A `Throughput` per session, in the order of `sessions`; `repeat_rates[k]` of every one
      was timed in round k.
    """
    for session in sessions:
        session.warm_up(plan.warmup_steps)
    rates = [[] for _ in sessions]
    for round_index in bars.bar(range(plan.repeats), what, 'rounds'):
        for k in range(len(sessions)):
            i = (round_index + k) % len(sessions)
            rates[i].append(sessions[i].run(plan.steps_per_repeat))
    return [Throughput(float(np.median(r)), r) for r in rates]


def measure_throughput(fetches, examples_per_step, config, plan):
    """Times `fetches` of the default graph alone, in a session opened and closed for it.

    Args:
      fetches, examples_per_step, config: as for `TimedSession`.
      plan: a `Plan`.

    Returns:
      A `Throughput`.
    """
    with TimedSession(fetches, examples_per_step, config) as session:
        return measure_in_turns([session], plan)[0]


Ratio = collections.namedtuple('Ratio', ['median', 'low', 'high'])
Ratio.__doc__ = """A ratio of two rates timed in turns.

Attributes:
  median: the median over the rounds of the ratio within each round.
  low, high: the first and third quartiles of those ratios; None for a ratio of two rates not
    timed in the same rounds (then `median` is the ratio of their medians).
"""


def paired_ratio(numerator, denominator, scale=1.0):
    """The ratio of two `Throughput`s round by round, times `scale`.

    Args:
      numerator, denominator: `Throughput`s from one `measure_in_turns` (round k of one was
        timed beside round k of the other).
      scale: a factor of every ratio (e.g. FLOPs per example, for a fraction of a FLOP rate).

    Returns:
      A `Ratio`.
    """
    return rounds_ratio(
        scale * np.asarray(numerator.repeat_rates) / np.asarray(denominator.repeat_rates))


def rounds_ratio(ratios):
    """The `Ratio` of the rounds' ratios: their median, between their quartiles."""
    low, median, high = np.percentile(ratios, [25, 50, 75])
    return Ratio(float(median), float(low), float(high))


def unpaired_ratio(numerator, denominator, scale=1.0):
    """The ratio of the medians of two `Throughput`s not timed in the same rounds."""
    return Ratio(scale * numerator.examples_per_sec / denominator.examples_per_sec, None, None)


def too_wide(ratio):
    """Whether `ratio`'s interquartile range is wider than `MAX_SPREAD` (a ratio of unpaired
    rates, which has none, is not)."""
    return ratio.low is not None and ratio.high - ratio.low > MAX_SPREAD


def device_kind(physical_gpus=None):
    """What towers run on, for reports: '4 GPUs' or 'virtual CPU devices sharing 2 cores'.

    Args:
      physical_gpus: the machine's GPUs; by default, those TensorFlow sees.
    """
    if physical_gpus is None:
        physical_gpus = len(tf.config.list_physical_devices('GPU'))
    if physical_gpus:
        return '%d GPUs' % physical_gpus
    return 'virtual CPU devices sharing %d cores' % os.cpu_count()


def matmul_step(size=4096, device='/cpu:0'):
    """A float32 matrix product in the default graph: the machine's ceiling for a model's FLOP/s.

    Timed beside a model, in a session with the model's config, it uses the same threads.

    Args:
      size: the side of the two square variables multiplied.
      device: where they are and the product runs.

    Returns:
      (the op of one product, its FLOPs: 2 * size**3).
    """
    with tf.device(device):
        a = tf.get_variable('a', [size, size], initializer=tf.random_normal_initializer())
        b = tf.get_variable('b', [size, size], initializer=tf.random_normal_initializer())
        product = tf.matmul(a, b)
    # Running the op, not fetching the product, keeps the copy out to numpy untimed.
    return product.op, 2.0 * size ** 3


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
