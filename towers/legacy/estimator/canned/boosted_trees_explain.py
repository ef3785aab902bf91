"""What TF 1.15's boosted trees tell about a trained ensemble: the gain-based importance of each
feature column (`feature_importances`) and each example's directional feature contributions
(`contributions`: how far each column moved its prediction from the bias).

Both read TensorFlow's boosted-trees protos, the ensemble a checkpoint holds under
'boosted_trees:0_serialized' and the `DebugOutput` of `BoostedTreesExampleDebugOutputs`
(TF 2.21 ships no Python classes of them: `parse` makes them from the fields these need).
"""
import collections

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from towers.legacy.estimator.spec import EstimatorError

_FIELD = descriptor_pb2.FieldDescriptorProto
# message -> its fields (name, number, type: a message name or a scalar type, repeated), the
# numbers of tensorflow/core/kernels/boosted_trees/boosted_trees.proto.
_MESSAGES = {
    'Vector': [('value', 1, _FIELD.TYPE_FLOAT, True)],
    'Leaf': [('vector', 1, 'Vector', False), ('scalar', 3, _FIELD.TYPE_FLOAT, False)],
    'Split': [('feature_id', 1, _FIELD.TYPE_INT32, False),
              ('threshold', 2, _FIELD.TYPE_INT32, False),
              ('left_id', 3, _FIELD.TYPE_INT32, False), ('right_id', 4, _FIELD.TYPE_INT32, False),
              ('dimension_id', 5, _FIELD.TYPE_INT32, False)],
    'NodeMetadata': [('gain', 1, _FIELD.TYPE_FLOAT, False),
                     ('original_leaf', 2, 'Leaf', False)],
    'Node': [('leaf', 1, 'Leaf', False), ('bucketized_split', 2, 'Split', False),
             ('categorical_split', 3, 'Split', False), ('dense_split', 4, 'Split', False),
             ('metadata', 777, 'NodeMetadata', False)],
    'Tree': [('nodes', 1, 'Node', True)],
    'PostPruneNodeUpdate': [('new_node_id', 1, _FIELD.TYPE_INT32, False),
                            ('logit_change', 2, _FIELD.TYPE_FLOAT, True)],
    'TreeMetadata': [('num_layers_grown', 2, _FIELD.TYPE_INT32, False),
                     ('is_finalized', 3, _FIELD.TYPE_BOOL, False),
                     ('post_pruned_nodes_meta', 4, 'PostPruneNodeUpdate', True)],
    'GrowingMetadata': [('num_trees_attempted', 1, _FIELD.TYPE_INT64, False),
                        ('num_layers_attempted', 2, _FIELD.TYPE_INT64, False),
                        ('last_layer_node_start', 3, _FIELD.TYPE_INT32, False),
                        ('last_layer_node_end', 4, _FIELD.TYPE_INT32, False)],
    'TreeEnsemble': [('trees', 1, 'Tree', True), ('tree_weights', 2, _FIELD.TYPE_FLOAT, True),
                     ('tree_metadata', 3, 'TreeMetadata', True),
                     ('growing_metadata', 4, 'GrowingMetadata', False)],
    'DebugOutput': [('feature_ids', 1, _FIELD.TYPE_INT32, True),
                    ('logits_path', 2, _FIELD.TYPE_FLOAT, True)],
}
_PACKAGE = 'towers.boosted_trees'
SPLITS = ('bucketized_split', 'categorical_split', 'dense_split')


def _message_classes():
    proto = descriptor_pb2.FileDescriptorProto(name='towers_boosted_trees.proto',
                                               package=_PACKAGE, syntax='proto3')
    for name, fields in _MESSAGES.items():
        message = proto.message_type.add(name=name)
        for field, number, kind, repeated in fields:
            entry = message.field.add(name=field, number=number, label=(
                _FIELD.LABEL_REPEATED if repeated else _FIELD.LABEL_OPTIONAL))
            if isinstance(kind, str):
                entry.type, entry.type_name = _FIELD.TYPE_MESSAGE, '.%s.%s' % (_PACKAGE, kind)
            else:
                entry.type = kind
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return {name: message_factory.GetMessageClass(
        pool.FindMessageTypeByName('%s.%s' % (_PACKAGE, name))) for name in _MESSAGES}


_CLASSES = _message_classes()


def parse(message, serialized):
    """The `message` ('TreeEnsemble', 'DebugOutput', ...) of the bytes `serialized`, with the
    fields of `_MESSAGES` (TensorFlow's names)."""
    parsed = _CLASSES[message]()
    parsed.ParseFromString(serialized)
    return parsed


def ensemble_of(serialized):
    """The `TreeEnsemble` of bytes or of a numpy_function's string argument."""
    return parse('TreeEnsemble', serialized.item() if isinstance(serialized, np.ndarray)
                 else serialized)


def node_value(node):
    """A node's logit: its leaf's, or a split's leaf before it split (0 if none was kept)."""
    if node.HasField('bucketized_split'):
        return node.metadata.original_leaf.scalar
    return node.leaf.scalar


def node_kind(node):
    """'leaf' or the kind of split of a `Node`."""
    return next((kind for kind in SPLITS if node.HasField(kind)), 'leaf')


def by_column(names, values):
    """An OrderedDict column name -> the sum of `values` of its features (`names`: the column
    of each feature), the largest in magnitude first."""
    sums = collections.OrderedDict()
    for name, value in zip(names, values):
        sums[name] = sums.get(name, 0) + value
    return collections.OrderedDict(sorted(sums.items(), key=lambda item: abs(item[1]),
                                          reverse=True))


def feature_importances(serialized, names, normalize):
    """The gain-based importance of each column: the gains of its features' bucketized splits,
    each weighted by its tree's weight, summed (and normalised to sum to 1).

    Args:
      serialized: the ensemble's bytes (a checkpoint's 'boosted_trees:0_serialized').
      names: the column name of each feature id.
      normalize: divide by the sum.

    Raises:
      EstimatorError: nothing trained yet, a split that is not bucketized, or, with
        `normalize`, a negative importance or no split at all.
    """
    if not serialized:
        raise EstimatorError('Found empty serialized string for TreeEnsemble.You should only '
                             'call this method after training.')
    ensemble = parse('TreeEnsemble', serialized)
    importances = np.zeros(len(names))
    for tree, weight in zip(ensemble.trees, ensemble.tree_weights):
        gains = np.zeros(len(names))
        for node in tree.nodes:
            kind = node_kind(node)
            if kind not in ('leaf', 'bucketized_split'):
                raise EstimatorError('Unexpected split type %s' % kind)
            if kind == 'bucketized_split':
                gains[node.bucketized_split.feature_id] += node.metadata.gain
        importances += gains * weight
    if normalize:
        if np.any(importances < 0):
            raise EstimatorError('feature_importances must be non-negative.')
        total = np.sum(importances)
        if not total > 0:
            raise EstimatorError('Trees are all empty or contain only a root node.')
        importances /= total
    return by_column(names, importances)


def contributions(serialized, names, classification):
    """(bias, OrderedDict column -> contribution) of one example's `DebugOutput` bytes: the
    prediction (the logistic for a classifier) after the bias alone, and the change each
    column's splits made along the example's paths, largest in magnitude first."""
    debug = parse('DebugOutput', serialized)
    # In float64, as TF 1.15's Python read the float32 logits.
    path = np.array(debug.logits_path, np.float64)
    if classification:
        path = 1 / (1 + np.exp(-path))
    changes = np.bincount(np.array(debug.feature_ids, dtype=np.int64), weights=np.diff(path),
                          minlength=len(names))
    return path[0], by_column(names, changes)
