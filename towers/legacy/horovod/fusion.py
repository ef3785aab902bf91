"""Horovod's tensor fusion: many tensors reduced over the ranks in one collective.

`grouped_reduce` sends the dense tensors of fully known shape (a step's gradients, for
`DistributedOptimizer`; `hvd.grouped_allreduce`'s) as flat buffers, one per run of consecutive
tensors of one dtype up to `HOROVOD_FUSION_THRESHOLD` bytes (64 MiB by default, as Horovod's; 0
turns fusion off), each cut out and reshaped afterwards; the others go one by one.
"""
import os

from towers.compat import tf
from towers.errors import TowersError
from towers.legacy.horovod import collectives, ranks
from towers.legacy.horovod.collectives import Compression

FUSION_THRESHOLD = 'HOROVOD_FUSION_THRESHOLD'
DEFAULT_FUSION_THRESHOLD = 64 * 1024 * 1024


def grouped_allreduce(tensors, average=None, device_dense='', device_sparse='',
                      compression=Compression.none, op=None, prescale_factor=1.0,
                      postscale_factor=1.0, process_set=None):
    """Horovod's `hvd.grouped_allreduce` (0.21+): each of `tensors` reduced over the ranks."""
    tensors = [t if isinstance(t, tf.IndexedSlices) else tf.convert_to_tensor(t)
               for t in tensors]
    return grouped_reduce(tensors, [repr(t.name) for t in tensors],
                          collectives.reduction_of(op, average), compression, prescale_factor,
                          postscale_factor, device_dense, device_sparse)


def grouped_reduce(tensors, shown, op, compression=Compression.none, prescale_factor=1.0,
                   postscale_factor=1.0, device_dense='', device_sparse=''):
    """`reduce` of each of `tensors` (None kept as None; failures name each as in `shown`):
    the dense ones of fully known shape fused (`fused_reduce`), the others one by one."""
    fused = [index for index, t in enumerate(tensors)
             if t is not None and not isinstance(t, tf.IndexedSlices)
             and t.shape.is_fully_defined() and op is not collectives.Adasum
             and ranks.world().size > 1]
    results = [None] * len(tensors)
    for index, value in zip(fused, fused_reduce(
            [tensors[index] for index in fused], [shown[index] for index in fused], op,
            compression, prescale_factor, postscale_factor, device_dense)):
        results[index] = value
    for index, tensor in enumerate(tensors):
        if tensor is not None and results[index] is None:
            results[index] = collectives.reduce(
                tensor, shown[index], None, device_dense, device_sparse, compression, op,
                prescale_factor, postscale_factor)
    return results


def fusion_threshold(environ=None):
    """Bytes of tensors fused into one allreduce: Horovod's `HOROVOD_FUSION_THRESHOLD`, by
    default 64 MiB as Horovod's; 0 turns fusion off."""
    value = (os.environ if environ is None else environ).get(FUSION_THRESHOLD)
    if value is None:
        return DEFAULT_FUSION_THRESHOLD
    try:
        return max(0, int(value))
    except ValueError:
        raise TowersError('%s=%s: expected a number of bytes' % (FUSION_THRESHOLD, value)) \
            from None


def fused_reduce(tensors, shown, op=None, compression=Compression.none, prescale_factor=1.0,
                 postscale_factor=1.0, device_dense=''):
    """`allreduce` of each of `tensors` (dense, shapes fully known), as Horovod's tensor
    fusion did it: consecutive tensors of one dtype, up to `fusion_threshold()` bytes
    together, travel as one flat buffer in one collective, each then cut out and reshaped.

    Args:
      tensors: the tensors; shown: how failures name each (e.g. "the gradient of 'w'").
      op, compression, prescale_factor, postscale_factor, device_dense: as for `allreduce`.

    Returns:
      The reduced tensors, in the order of `tensors`.
    """
    threshold = fusion_threshold()
    buckets = []
    for index, tensor in enumerate(tensors):
        size = tensor.shape.num_elements() * tensor.dtype.size
        last = buckets[-1] if buckets else None
        if (last is None or not threshold or last['dtype'] != tensor.dtype
                or last['bytes'] + size > threshold):
            last = {'dtype': tensor.dtype, 'bytes': 0, 'members': []}
            buckets.append(last)
        last['bytes'] += size
        last['members'].append(index)
    results = [None] * len(tensors)
    for bucket in buckets:
        members = bucket['members']
        if len(members) == 1:
            results[members[0]] = collectives.reduce(
                tensors[members[0]], shown[members[0]], None, device_dense, '', compression, op,
                prescale_factor, postscale_factor)
            continue
        with tf.device(device_dense), tf.name_scope('HorovodFusion'):
            flat = tf.concat([tf.reshape(tensors[index], [-1]) for index in members], 0)
        reduced = collectives.reduce(
            flat, '%s (fused)' % ', '.join(shown[index] for index in members), None,
            device_dense, '', compression, op, prescale_factor, postscale_factor,
            name='fused_%d' % len(members))
        with tf.device(device_dense):
            pieces = tf.split(reduced, [tensors[index].shape.num_elements()
                                        for index in members])
            for index, piece in zip(members, pieces):
                results[index] = tf.reshape(piece, tensors[index].shape)
    return results
