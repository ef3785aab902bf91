"""Horovod's collectives on TensorFlow's own graph-mode collective ops, across the ranks.

Every rank builds the same graph; each collective becomes one op per rank
(`CollectiveReduceV2`, `CollectiveGatherV2`, `CollectiveBcastSend/RecvV2`) that meets its peers
by two keys, which agree on every rank by construction:
- the group key is the graph's: a process numbers, in order, the graphs it builds collectives
  in (TensorFlow keeps a collective's shape for its keys for the life of the process, so a new
  graph, such as the Estimator's next `train` call, needs new keys); every rank builds its
  graphs in the same order, as Horovod programs do;
- the instance key comes from the op's name in the graph (as Horovod matched tensors by
  name), so a collective one rank builds and another does not stops only that collective.
`failure_line` turns a collective's failure into one line naming the rank and the tensor;
`pending` names the collectives of a step that waits too long (`watchdog`).

Arithmetic as Horovod's: `Average` sums then divides by the size; `prescale_factor` and
`postscale_factor` multiply before and after; `Compression.fp16` reduces floating-point tensors
as float16; `allgather` concatenates along the first dimension, which may differ between ranks
(each rank's piece padded to the largest, gathered, then cut out); `Adasum` combines the ranks'
tensors pairwise, neighbours first, in a tree (`adasum`). A job of one rank returns its tensors
as they are (scaled).
"""
import itertools
import re
import weakref
import zlib

from towers.compat import tf
from towers.errors import tf_error_cause
from towers.legacy.horovod import ranks


class ReduceOp:
    """One of Horovod's reductions (`hvd.Average`, `hvd.Sum`, ...)."""

    def __init__(self, name, merge):
        self.name, self.merge = name, merge

    def __repr__(self):
        return self.name


Average = ReduceOp('Average', 'Add')
Sum = ReduceOp('Sum', 'Add')
Adasum = ReduceOp('Adasum', None)
Min = ReduceOp('Min', 'Min')
Max = ReduceOp('Max', 'Max')
Product = ReduceOp('Product', 'Mul')


class NoneCompressor:
    """Sends tensors as they are (`hvd.Compression.none`)."""

    @staticmethod
    def compress(tensor):
        return tensor, None

    @staticmethod
    def decompress(tensor, ctx):
        return tensor


class FP16Compressor:
    """Sends floating-point tensors as float16 (`hvd.Compression.fp16`)."""

    @staticmethod
    def compress(tensor):
        if tensor.dtype.is_floating:
            return tf.cast(tensor, tf.float16), tensor.dtype
        return tensor, tensor.dtype

    @staticmethod
    def decompress(tensor, ctx):
        return tf.cast(tensor, ctx) if ctx.is_floating else tensor


class Compression:
    """Horovod's `hvd.Compression`: `none` and `fp16`."""
    none = NoneCompressor
    fp16 = FP16Compressor


_GROUP_KEYS = weakref.WeakKeyDictionary()
_NEXT_GROUP = itertools.count(1)
# graph -> {instance key: the op name it was made for}
_INSTANCE_KEYS = weakref.WeakKeyDictionary()
# graph -> {op name: what the program asked for, e.g. "allreduce of 'gradients/AddN:0'"}
_DESCRIPTIONS = weakref.WeakKeyDictionary()
_NODE = re.compile(r"Node: '([^']+)'")


def reduction_of(op, average):
    """The reduction of Horovod's `op=` and its deprecated `average=`."""
    if op is not None and average is not None:
        raise ValueError('The op parameter supersedes average. Please provide only one of them.')
    if op is not None:
        return op
    return Sum if average is False else Average


def _normalized(name):
    return re.sub('[^a-zA-Z0-9_]', '_', name)


def _keys(op_name, fixed_shape=True):
    """(group key, instance key) of the collective op `op_name` of the default graph.

    A collective whose shape may change from one run to the next (`fixed_shape` False) needs a
    new instance key each run: it gets a group of its own (from the graph's number and its
    name) and instance keys 1, 2, 3, ... counted by a one-shot iterator in the graph, which
    needs no initialisation and advances once each time the collective runs, alike on every
    rank."""
    graph = tf.get_default_graph()
    if graph not in _GROUP_KEYS:
        _GROUP_KEYS[graph] = next(_NEXT_GROUP)
    if not fixed_shape:
        group = 0x40000000 + zlib.crc32(('%d/%s' % (_GROUP_KEYS[graph], op_name)).encode()) \
            % 0x3fffffff
        counter = tf.data.experimental.Counter(start=1, dtype=tf.int32)
        return group, tf.data.make_one_shot_iterator(counter).get_next()
    taken = _INSTANCE_KEYS.setdefault(graph, {})
    key = zlib.crc32(op_name.encode()) % 0x3fffffff + 1
    while key in taken:
        key = key % 0x3fffffff + 1
    taken[key] = op_name
    return _GROUP_KEYS[graph], key


def _record(op_name, what):
    _DESCRIPTIONS.setdefault(tf.get_default_graph(), {})[op_name] = what


def _scope(kind, tensor, name):
    base = name if name is not None else _normalized(tensor.name.split(':')[0] if hasattr(
        tensor, 'name') and tensor.name else 'tensor')
    return 'Horovod%s_%s' % (kind, base)


def allreduce(tensor, average=None, device_dense='', device_sparse='',
              compression=Compression.none, op=None, prescale_factor=1.0,
              postscale_factor=1.0, name=None, process_set=None, ignore_name_scope=False):
    """Horovod's `hvd.allreduce`: `tensor` (a tf.Tensor, variable or tf.IndexedSlices, of one
    shape on every rank) reduced over the ranks; an IndexedSlices is gathered instead
    (values, divided by the size for `Average`, and indices), as Horovod did."""
    return reduce(tensor, None, average, device_dense, device_sparse, compression, op,
                  prescale_factor, postscale_factor, name)


def reduce(tensor, shown, average=None, device_dense='', device_sparse='',
           compression=Compression.none, op=None, prescale_factor=1.0, postscale_factor=1.0,
           name=None):
    """`allreduce`, its failures naming the tensor as `shown` (e.g. "the gradient of 'w'");
    by default by its name."""
    world = ranks.world()
    reduction = reduction_of(op, average)
    if isinstance(tensor, tf.IndexedSlices):
        if reduction not in (Sum, Average):
            raise NotImplementedError('Only Sum and Average ops are supported with '
                                      'tf.IndexedSlices')
        if prescale_factor != 1.0 or postscale_factor != 1.0:
            raise NotImplementedError('Pre/postscale_factor are not supported with '
                                      'tf.IndexedSlices')
        with tf.device(device_sparse):
            values = _gather(tensor.values, name and name + '_values', shown)
            indices = _gather(tensor.indices, name and name + '_indices', shown)
            if reduction is Average:
                values = values / tf.cast(world.size, values.dtype)
        return tf.IndexedSlices(values, indices, dense_shape=tensor.dense_shape)
    tensor = tf.convert_to_tensor(tensor)
    with tf.device(device_dense), tf.name_scope(_scope('Allreduce', tensor, name)) as scope:
        if prescale_factor != 1.0:
            tensor = tensor * tf.cast(prescale_factor, tensor.dtype)
        compressed, context = compression.compress(tensor)
        if world.size == 1:
            reduced = tf.identity(compressed)
        elif reduction is Adasum:
            reduced = adasum(_gather_stacked(compressed, scope, world, 'allreduce (Adasum) of '
                                             + (shown or repr(tensor.name))), world.size)
        else:
            op_name = scope + 'CollectiveReduce'
            group, instance = _keys(op_name, compressed.shape.is_fully_defined())
            reduced = tf.raw_ops.CollectiveReduceV2(
                input=compressed, group_size=world.size, group_key=group,
                instance_key=instance, ordering_token=[], merge_op=reduction.merge,
                final_op='Div' if reduction is Average else 'Id', name='CollectiveReduce')
            _record(reduced.op.name, 'allreduce of %s' % (shown or repr(tensor.name)))
        result = compression.decompress(reduced, context)
        if postscale_factor != 1.0:
            result = result * tf.cast(postscale_factor, result.dtype)
        return result


def _gather_stacked(tensor, scope, world, what):
    """[size, *shape]: every rank's `tensor` (of one shape on every rank), in rank order."""
    op_name = scope + 'CollectiveGather'
    group, instance = _keys(op_name, tensor.shape.is_fully_defined())
    gathered = tf.raw_ops.CollectiveGatherV2(
        input=tf.expand_dims(tensor, 0), group_size=world.size, group_key=group,
        instance_key=instance, ordering_token=[],
        name='CollectiveGather')
    _record(gathered.op.name, what)
    return gathered


def adasum(stacked, size):
    """Horovod's Adasum of the ranks' tensors `stacked` ([size, *shape]).

    Pairs combine as a' = (1 - a.b / (2 |a|^2)) a + (1 - a.b / (2 |b|^2)) b (a coefficient
    stays 1 where the squared norm is below 1e-8), neighbours first (0 with 1, 2 with 3), then
    the pairs' results, in a tree; dot products and norms in float64. `size` must be a power
    of two, as Horovod required.
    """
    if size & (size - 1):
        raise NotImplementedError('Running Adasum with non-power of 2 ranks is not supported '
                                  'yet.')
    parts = [stacked[index] for index in range(size)]
    while len(parts) > 1:
        parts = [_adasum_pair(parts[index], parts[index + 1])
                 for index in range(0, len(parts), 2)]
    return parts[0]


def _adasum_pair(a, b):
    wide_a, wide_b = tf.cast(a, tf.float64), tf.cast(b, tf.float64)
    dot = tf.reduce_sum(wide_a * wide_b)
    norm_a, norm_b = tf.reduce_sum(tf.square(wide_a)), tf.reduce_sum(tf.square(wide_b))
    one = tf.constant(1.0, tf.float64)
    coefficient_a = tf.where(norm_a >= 1e-8, one - dot / (2.0 * norm_a), one)
    coefficient_b = tf.where(norm_b >= 1e-8, one - dot / (2.0 * norm_b), one)
    return tf.cast(coefficient_a * wide_a + coefficient_b * wide_b, a.dtype)


def allgather(tensor, name=None, process_set=None, ignore_name_scope=False):
    """Horovod's `hvd.allgather`: every rank's `tensor` concatenated along the first
    dimension, in rank order; the first dimension may differ between ranks, the others not."""
    return _gather(tensor, name, None)


def _gather(tensor, name, shown):
    world = ranks.world()
    tensor = tf.convert_to_tensor(tensor)
    shown = shown or repr(tensor.name)
    if world.size == 1:
        return tf.identity(tensor)
    with tf.name_scope(_scope('Allgather', tensor, name)) as scope:
        rows = tf.shape(tensor)[:1]
        group, instance = _keys(scope + 'CollectiveGatherSizes')
        sizes = tf.raw_ops.CollectiveGatherV2(
            input=rows, group_size=world.size, group_key=group, instance_key=instance,
            ordering_token=[], name='CollectiveGatherSizes')
        _record(sizes.op.name, 'allgather of %s (first dimensions)' % shown)
        largest = tf.reduce_max(sizes)
        padding = [[0, largest - rows[0]]] + [[0, 0]] * (tensor.shape.ndims - 1)
        padded = tf.pad(tensor, padding)
        group, instance = _keys(scope + 'CollectiveGather', fixed_shape=False)
        gathered = tf.raw_ops.CollectiveGatherV2(
            input=padded, group_size=world.size, group_key=group, instance_key=instance,
            ordering_token=[], name='CollectiveGather')
        _record(gathered.op.name, 'allgather of %s' % shown)
        keep = tf.reshape(tf.sequence_mask(sizes, largest), [-1])
        result = tf.boolean_mask(gathered, keep)
        result.set_shape(tf.TensorShape([None]).concatenate(tensor.shape[1:]))
        return result


def broadcast(tensor, root_rank, name=None, process_set=None, ignore_name_scope=False):
    """Horovod's `hvd.broadcast`: rank `root_rank`'s `tensor` (of one shape on every rank),
    on every rank."""
    world = ranks.world()
    tensor = tf.convert_to_tensor(tensor)
    if not 0 <= root_rank < world.size:
        raise ValueError('broadcast: root_rank %d is not a rank of this job of %d'
                         % (root_rank, world.size))
    if world.size == 1:
        return tf.identity(tensor)
    with tf.name_scope(_scope('Broadcast', tensor, name)) as scope:
        group, instance = _keys(scope + 'CollectiveBcast', tensor.shape.is_fully_defined())
        if world.rank == root_rank:
            result = tf.raw_ops.CollectiveBcastSendV2(
                input=tensor, group_size=world.size, group_key=group, instance_key=instance,
                name='CollectiveBcast')
        else:
            result = tf.raw_ops.CollectiveBcastRecvV2(
                group_size=world.size, group_key=group, instance_key=instance,
                shape=tf.shape(tensor), T=tensor.dtype,
                name='CollectiveBcast')
            result.set_shape(tensor.shape)
        _record(result.op.name, 'broadcast of %r from rank %d' % (tensor.name, root_rank))
        return result


def failure_line(error):
    """One line for a failed collective (a `tf.errors.OpError` of an op made here), naming
    this rank, the tensor and why; None for any other error."""
    if not isinstance(error, tf.errors.OpError):
        return None
    op_name = error.op.name if getattr(error, 'op', None) is not None else None
    if op_name is None:
        match = _NODE.search(error.message or '')
        op_name = match.group(1) if match else None
    described = next((descriptions[op_name] for descriptions in list(_DESCRIPTIONS.values())
                      if op_name in descriptions), None)
    if described is None:
        return None
    return 'rank %d: the %s did not complete: %s' % (ranks.world().rank, described,
                                                      tf_error_cause(error.message))


def pending(graph, fetches):
    """What the program asked for of the collectives that a run of `fetches` (a `Session.run`
    fetch structure) in `graph` holds, e.g. ["allreduce of the gradient of 'w'"]."""
    described = _DESCRIPTIONS.get(graph, {})
    if not described:
        return []
    stack = []
    for fetch in _leaves(fetches):
        try:
            element = graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
        except (TypeError, ValueError, KeyError):
            continue
        stack.append(element.op if isinstance(element, tf.Tensor) else element)
    seen, found = set(), []
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        if op.name in described:
            found.append(described[op.name])
        stack.extend(tensor.op for tensor in op.inputs)
        stack.extend(op.control_inputs)
    return sorted(found)


def _leaves(fetches):
    """The fetches of a `Session.run` fetch structure: lists, tuples and dict values (whose
    keys, hooks in a `MonitoredSession`'s run, need not sort) opened."""
    if isinstance(fetches, dict):
        return [leaf for value in fetches.values() for leaf in _leaves(value)]
    if isinstance(fetches, (list, tuple)):
        return [leaf for value in fetches for leaf in _leaves(value)]
    return [fetches]


def holds_collectives(graph):
    """Whether collectives were made here in `graph`."""
    return bool(_DESCRIPTIONS.get(graph))
