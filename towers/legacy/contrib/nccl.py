"""`tf.contrib.nccl`: reductions across the towers' devices, as TensorFlow 1.x's NCCL ops made
them: `all_sum([t0, t1, ...])` is one sum per input, each on that input's device.

NCCL has kernels only on GPUs, one rank per physical GPU. Where every input is on a different
GPU of this machine these are NCCL's ops; elsewhere (towers on virtual CPU devices under
`--legacy_devices`, logical GPUs split from one GPU, inputs without a device) the same values
come from ops every device has: the reduction once, then a copy on each input's device.
Gradients flow through either.
"""
from towers.compat import tf


def _nccl_can_run(tensors):
    """Whether the inputs are on distinct GPUs, no more than this machine has."""
    devices = [tf.DeviceSpec.from_string(tensor.device) for tensor in tensors]
    return (all((device.device_type or '').upper() == 'GPU' for device in devices)
            and len({device.to_string() for device in devices}) == len(devices)
            and len(tf.config.list_physical_devices('GPU')) >= len(devices))


def _all_reduce(tensors, reduction, reduce_fn):
    """`tensors` (one per device, same shape) -> their reduction, one copy per device.

    Args:
      reduction: NCCL's name for it: 'sum', 'prod', 'min' or 'max'.
      reduce_fn: a function (list of tensors) -> their reduction, for the other devices.
    """
    tensors = [tf.convert_to_tensor(tensor) for tensor in tensors]
    if not tensors:
        raise ValueError('Must pass >0 tensors to all reduce operations')
    if _nccl_can_run(tensors):
        shared_name = tf.get_default_graph().unique_name('c')
        outputs = []
        for tensor in tensors:
            with tf.device(tensor.device):
                outputs.append(tf.raw_ops.NcclAllReduce(
                    input=tensor, reduction=reduction, num_devices=len(tensors),
                    shared_name=shared_name))
        return outputs
    reduced = reduce_fn(tensors)
    outputs = []
    for tensor in tensors:
        with tf.device(tensor.device):
            outputs.append(tf.identity(reduced))
    return outputs


def all_sum(tensors):
    """The elementwise sum of `tensors` (one per device), as a list: one on each device."""
    return _all_reduce(tensors, 'sum', tf.add_n)


def all_prod(tensors):
    """The elementwise product of `tensors`, one on each device."""
    return _all_reduce(tensors, 'prod', lambda ts: tf.reduce_prod(tf.stack(ts), 0))


def all_min(tensors):
    """The elementwise minimum of `tensors`, one on each device."""
    return _all_reduce(tensors, 'min', lambda ts: tf.reduce_min(tf.stack(ts), 0))


def all_max(tensors):
    """The elementwise maximum of `tensors`, one on each device."""
    return _all_reduce(tensors, 'max', lambda ts: tf.reduce_max(tf.stack(ts), 0))


def reduce_sum(tensors):
    """The elementwise sum of `tensors`, one tensor on the current device."""
    return tf.add_n([tf.convert_to_tensor(tensor) for tensor in tensors])


def broadcast(tensor):
    """`tensor`, for use on the other devices (TF 1.x's NCCL broadcast; a copy here)."""
    return tf.identity(tensor)
