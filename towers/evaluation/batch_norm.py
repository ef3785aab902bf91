"""The batch-norm layers of a network, found in its graph, and the network rewritten to normalise
with the statistics of each batch.

    layers = batch_norm.find_layers(graph)          # what the network does not declare
    rewritten = batch_norm.with_batch_statistics(graph, saver, layers)
    rewritten.graph, rewritten.saver, rewritten.moments[layer.name]

A network built in inference mode normalises each batch-norm layer's input with its moving
mean and variance. The layers are found from the ops that read those variables, whatever
built them:
- a fused batch norm (`FusedBatchNorm`, `V2`, `V3`) in inference mode whose mean and variance
  inputs (3 and 4) read variables: tf-slim's `batch_norm`, the `tf.layers` and tf_keras
  `BatchNormalization` layers (fused, the default for 4-D inputs), `tf.nn.fused_batch_norm`;
- `tf.nn.batch_normalization` (tf-slim's and tf_keras' layers with `fused=False`): its
  `Rsqrt(variance + epsilon)`, with the variable it reads, and the `mean * inv` product beside
  `x * inv`.
Reads pass through `Identity`, `ReadVariableOp`, `Cast`, `Reshape` and the like, so reference
and resource variables, and the reshaped statistics of a layer normalising another axis than
the last, are all found.

The variance a layer's moving statistics hold differs by kind: a fused kernel outputs the
batch's variance with Bessel's correction (n / (n - 1)), which tf-slim, `tf.layers`, tf_keras
and users of `tf.nn.fused_batch_norm` average as it comes; the callers of
`tf.nn.batch_normalization` average `tf.nn.moments`, the biased variance. `Layer.bessel` says
which.

`with_batch_statistics` copies the graph (its `MetaGraphDef`, into a new graph) with every
layer normalising with the statistics of the batch it is given, as in training: fused ops in
training mode, and the mean and variance that `tf.nn.batch_normalization` reads replaced by the
batch's moments; beside each layer, the moments of its input (mean and biased variance per
channel, and how many values each is over). Variables, their saver and every other op are
copied as they are, so that the copy restores from the same checkpoints.
"""
import collections

from towers.compat import tf
from towers.errors import TowersError

FUSED_TYPES = ('FusedBatchNorm', 'FusedBatchNormV2', 'FusedBatchNormV3')
# Ops a read of the moving statistics passes through on its way to a layer.
_READS = ('Identity', 'ReadVariableOp', 'Cast', 'Reshape', 'Squeeze', 'ExpandDims', 'Enter')
_VARIABLE_TYPES = ('VariableV2', 'VarHandleOp', 'Variable')
# Where the copies put what they add.
_SCOPE = 'batch_statistics'
# The collections a copy keeps besides its saver: the variables and lookup tables.
_COLLECTIONS = (tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.TABLE_INITIALIZERS)

Layer = collections.namedtuple(
    'Layer', ['name', 'input', 'mean', 'variance', 'axes', 'bessel', 'replaced'])
Layer.__doc__ = """A batch-norm layer of a graph in inference mode.

Attributes:
  name: the name of its op (the fused op, or the `Rsqrt` of `tf.nn.batch_normalization`).
  input: the name of the tensor it normalises, e.g. 'conv1/Conv2D:0'.
  mean, variance: the names of its moving-statistics variables (as checkpoints name them).
  axes: the axes of `input` that the statistics reduce (all but the channels').
  bessel: whether its moving variance is of the kind with Bessel's correction (fused kernels).
  replaced: for `tf.nn.batch_normalization`, (the op reading the mean, its input index, the op
    reading the variance, its input index, the shape of the statistics there); None for a
    fused op.
"""

Moments = collections.namedtuple('Moments', ['mean', 'variance', 'count'])
Moments.__doc__ = """The moments of a layer's input in a rewritten graph, tensors: mean and
biased variance [channels], and count, the values each channel's moments are over."""

Rewritten = collections.namedtuple('Rewritten', ['graph', 'saver', 'moments'])
Rewritten.__doc__ = """A network copied to normalise with batch statistics.

Attributes:
  graph: the new graph.
  saver: its `tf.train.Saver` (the original's, copied).
  moments: dict layer name -> `Moments`, tensors of `graph`.
"""


def _variable_read(tensor):
    """The name of the variable `tensor` reads (through reads, casts and reshapes), or None."""
    op = tensor.op
    while op.type in _READS and op.inputs:
        op = op.inputs[0].op
    return op.name if op.type in _VARIABLE_TYPES else None


def _fused_layer(op):
    if op.get_attr('is_training'):
        return None
    mean, variance = _variable_read(op.inputs[3]), _variable_read(op.inputs[4])
    if mean is None or variance is None:
        return None
    data_format = op.get_attr('data_format').decode()
    rank = op.inputs[0].shape.ndims or len(data_format)
    channel = data_format.index('C')
    return Layer(op.name, op.inputs[0].name, mean, variance,
                 tuple(axis for axis in range(rank) if axis != channel), True, None)


def _normalization_layer(rsqrt):
    """The layer of `tf.nn.batch_normalization` whose `Rsqrt(variance + epsilon)` is `rsqrt`:
    x * inv + (offset - mean * inv), inv the `Rsqrt` or its product with the scale."""
    add = rsqrt.inputs[0].op
    if add.type not in ('Add', 'AddV2'):
        return None
    variance = _variable_read(add.inputs[0])
    inv = rsqrt.outputs[0]
    consumers = inv.consumers()
    if len(consumers) == 1 and consumers[0].type == 'Mul' and len(consumers[0].outputs[0]
                                                                     .consumers()) == 2:
        inv = consumers[0].outputs[0]
        consumers = inv.consumers()
    products = [op for op in consumers if op.type == 'Mul']
    if variance is None or len(products) != 2:
        return None
    # `mean * inv` feeds `offset - ...` (or `-...` without an offset); `x * inv` the sum.
    mean_product = [op for op in products
                    if all(c.type in ('Sub', 'Neg') for c in op.outputs[0].consumers())]
    if len(mean_product) != 1:
        return None
    mean_product = mean_product[0]
    x_product = products[1 - products.index(mean_product)]
    mean_index = 0 if mean_product.inputs[1] is inv else 1
    mean_input = mean_product.inputs[mean_index]
    mean = _variable_read(mean_input)
    x = x_product.inputs[0 if x_product.inputs[1] is inv else 1]
    if mean is None or mean_input.shape.ndims is None or x.shape.ndims is None:
        return None
    statistics_shape = mean_input.shape.as_list()
    aligned = [1] * (x.shape.ndims - len(statistics_shape)) + statistics_shape
    axes = tuple(axis for axis, size in enumerate(aligned) if size == 1)
    return Layer(rsqrt.name, x.name, mean, variance, axes, False,
                 (mean_product.name, mean_index, add.name, 0, statistics_shape))


def find_layers(graph):
    """The batch-norm layers of `graph` that normalise with moving statistics, in graph order.

    Args:
      graph: a `tf.Graph` holding a network built in inference mode.

    Returns:
      A list of `Layer`.
    """
    layers = []
    for op in graph.get_operations():
        layer = None
        if op.type in FUSED_TYPES:
            layer = _fused_layer(op)
        elif op.type == 'Rsqrt':
            layer = _normalization_layer(op)
        if layer is not None:
            layers.append(layer)
    return layers


def _tensor_name(name):
    return name if ':' in name else name + ':0'


def _moments_nodes(layer, dtype, rank, prefix):
    """NodeDefs computing the moments of `layer.input` under `prefix`, as a small graph of
    their own makes them, its placeholder replaced by the layer's input; the `Moments` of
    their tensors' names; and the names of the ops giving the mean and the variance shaped as
    `tf.nn.batch_normalization` reads them (None for a fused layer)."""
    with tf.Graph().as_default() as scratch:
        x = tf.placeholder(dtype, [None] * rank, name='x')
        mean, variance = tf.nn.moments(x, list(layer.axes), name='moments')
        count = tf.reduce_prod(tf.gather(tf.shape(x, out_type=tf.int64), list(layer.axes)),
                               name='count')
        reshaped = None
        if layer.replaced is not None:
            shape = layer.replaced[4]
            reshaped = (tf.reshape(mean, shape, name='mean_reshaped').op.name,
                        tf.reshape(variance, shape, name='variance_reshaped').op.name)
    names = (mean.op.name, variance.op.name, count.op.name)
    nodes = []
    for node in scratch.as_graph_def().node:
        if node.name == x.op.name:
            continue
        copy = tf.NodeDef()
        copy.CopyFrom(node)
        copy.name = prefix + node.name
        copy.input[:] = [_renamed_input(name, x.op.name, layer.input, prefix)
                         for name in node.input]
        nodes.append(copy)
    moments = Moments(*[_tensor_name(prefix + name) for name in names])
    return nodes, moments, (None if reshaped is None
                            else tuple(prefix + name for name in reshaped))


def _renamed_input(name, placeholder, replacement, prefix):
    control = name.startswith('^')
    bare = name.lstrip('^').split(':')[0]
    if bare == placeholder:
        return replacement
    return ('^' if control else '') + prefix + name.lstrip('^')


def with_batch_statistics(graph, saver, layers):
    """A copy of `graph` in a new graph whose `layers` normalise with each batch's statistics.

    Args:
      graph: the network's graph (inference mode).
      saver: a `tf.train.Saver` of `graph`, copied to restore the copy.
      layers: `Layer`s of `find_layers(graph)`.

    Returns:
      A `Rewritten`; ops and tensors keep their names in the new graph.
    """
    meta_graph = tf.train.export_meta_graph(graph=graph, saver_def=saver.as_saver_def(),
                                            collection_list=list(_COLLECTIONS))
    nodes = {node.name: node for node in meta_graph.graph_def.node}
    used = set(nodes)
    moments = {}
    for index, layer in enumerate(layers):
        prefix = '%s/%d/' % (_SCOPE, index)
        if any(name.startswith(prefix) for name in used):
            raise TowersError('the network already has ops named %s...' % prefix)
        x = graph.get_tensor_by_name(layer.input)
        added, moments[layer.name], reshaped = _moments_nodes(
            layer, x.dtype.base_dtype, x.shape.ndims, prefix)
        meta_graph.graph_def.node.extend(added)
        if layer.replaced is None:
            nodes[layer.name].attr['is_training'].b = True
        else:
            mean_op, mean_index, variance_op, variance_index, _ = layer.replaced
            nodes[mean_op].input[mean_index] = reshaped[0]
            nodes[variance_op].input[variance_index] = reshaped[1]
    copy = tf.Graph()
    with copy.as_default():
        copied_saver = tf.train.import_meta_graph(meta_graph)
    return Rewritten(copy, copied_saver,
                     {name: Moments(*[copy.get_tensor_by_name(tensor) for tensor in names])
                      for name, names in moments.items()})


def tensor_in(graph, value):
    """`value` (a tensor or an op of another graph) as the tensor or op of the same name in
    `graph`; anything else as it is."""
    if isinstance(value, tf.Tensor):
        return graph.get_tensor_by_name(value.name)
    if isinstance(value, tf.Operation):
        return graph.get_operation_by_name(value.name)
    return value

