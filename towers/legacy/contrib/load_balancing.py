"""`tf.contrib.training.GreedyLoadBalancingStrategy` and `byte_size_load_fn`: variables placed on
the least loaded parameter device, as TF 1.x's contrib placed them.

    setter = tf.train.replica_device_setter(
        ps_tasks=2, ps_strategy=tf.contrib.training.GreedyLoadBalancingStrategy(
            2, tf.contrib.training.byte_size_load_fn))

A strategy is called once for each op a device function places on a parameter device (a
variable) and answers the task index it goes to: the one with the least load so far (the
lowest index among equals), whose load then grows by `load_fn(op)`. With `byte_size_load_fn`
a variable's load is its size in bytes, so the parameter devices end up holding about as many
bytes each (TF 1.x's round robin, the default, balances their number instead).
"""
import numpy as np

from towers.compat import tf


class GreedyLoadBalancingStrategy:
    """Places each op on the task with the least load so far.

    Args:
      num_tasks: how many parameter tasks (or devices) there are, >= 1.
      load_fn: a function op -> its load, a number (`byte_size_load_fn`).
    """

    def __init__(self, num_tasks, load_fn):
        if num_tasks < 1:
            raise ValueError('GreedyLoadBalancingStrategy needs num_tasks >= 1, got %r'
                             % (num_tasks,))
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._loads = np.zeros(num_tasks)

    def __call__(self, op):
        """The task index (an int in [0, num_tasks)) for `op`; its load is added there."""
        task = int(np.argmin(self._loads))
        self._loads[task] += self._load_fn(op)
        return task


def byte_size_load_fn(op):
    """The size in bytes of what a variable op (`VariableV2`, `VarHandleOp`) holds, or of the one
    output of any other op.

    Raises:
      ValueError: `op` has no single output, or its shape is not fully known.
    """
    if 'shape' in op.node_def.attr and 'dtype' in op.node_def.attr:
        # A variable's output is not yet shaped when a device function places it (a ref of
        # unknown shape, or a resource handle): its attributes say what it will hold.
        shape = tf.TensorShape(op.get_attr('shape'))
        dtype = tf.as_dtype(op.get_attr('dtype'))
    elif len(op.outputs) == 1:
        shape, dtype = op.outputs[0].shape, op.outputs[0].dtype
    else:
        raise ValueError('byte_size_load_fn: op %s must have a single output, it has %d'
                         % (op.name, len(op.outputs)))
    if not shape.is_fully_defined():
        raise ValueError('byte_size_load_fn: the shape of op %s is not fully defined: %s'
                         % (op.name, shape))
    return shape.num_elements() * dtype.base_dtype.size
