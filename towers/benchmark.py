"""Measuring training throughput: timed steps, the machine's matmul rate, a model's FLOPs.

    rate = measure_throughput(train_op, examples_per_step=512, config=setup.config,
                              plan=QUICK)
    rate.examples_per_sec                  # median over `plan.repeats` timed blocks

Every measurement runs its op in a fresh `tf.train.SingularMonitoredSession` of the default
graph, times each step with the training loop's own `StepTimerHook`, discards the warm-up steps
(graph optimisation, allocation, filling input buffers) and splits the remaining steps into
blocks. A block's rate is its examples over its wall time, so a block in which an input
pipeline stalls shows it even when most single steps are fast; the median over blocks keeps a
block disturbed by another process from moving the figure. The benchmark that measures a
registered model's configurations with these is `towers.benchmarks`.
"""
import collections

import numpy as np

from towers.compat import tf
from towers.errors import TowersError
from towers.hooks import StepTimerHook

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
