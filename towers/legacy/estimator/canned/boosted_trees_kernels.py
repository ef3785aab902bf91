"""Stand-ins for TensorFlow's BoostedTrees kernels (TF 2.21 ships the ops without them), with
the names of `ops.boosted_trees_ops` that the boosted-trees modules call, for one logit and
bucketized splits: the ensemble, its states, the statistics, the best gains, the layer update
and the predictions. Their arithmetic is TF 1.15's kernels' in float32, in its order, so that
the trees and logits are TF 1.15.5's.

The ensemble lives in two variables, its stamp (int64) and its `TreeEnsemble` proto serialized
(string), saved under TF 1.15's names '<scope>:0_stamp' and '<scope>:0_serialized'; each stand-in
is a `tf.numpy_function` over that proto. The quantile sketch, bias centring, post-pruning and
the explanations are refused in one line (`EstimatorError`) until they have stand-ins too.
"""
import numpy as np

from towers.compat import internal, tf
from towers.legacy.estimator.canned import boosted_trees_explain as protos
from towers.legacy.estimator.spec import EstimatorError

_tf_ops = internal('ops.boosted_trees_ops')
_resources = internal('ops.resources')
_saving = internal('training.saving.saveable_object')
PruningMode = _tf_ops.PruningMode


def _not_yet(what):
    """A stand-in that refuses, in one line, what needs TensorFlow's missing kernels."""
    def refuse(*args, **kwargs):
        raise EstimatorError('towers-legacy\'s boosted trees do not have {} yet (TensorFlow '
                             '2.21 ships no BoostedTrees kernels)'.format(what))
    return refuse


QuantileAccumulator = boosted_trees_bucketize = _not_yet(
    'numeric columns (the quantile sketch): wrap them in bucketized_column')
center_bias = _not_yet('center_bias')
example_debug_outputs = _not_yet('experimental_predict_with_explanations')
# TF 1.15's tolerance of equal gains, and the weight of each tree grown layer by layer.
_GAIN_TOLERANCE = np.float32(1e-15)
_TREE_WEIGHT = 1.


def _ensemble_of(serialized):
    """The `TreeEnsemble` of a numpy_function's string argument."""
    return protos.parse('TreeEnsemble', serialized.item() if isinstance(serialized, np.ndarray)
                        else serialized)


class _Saveable(_saving.SaveableObject):
    """The ensemble's stamp and bytes in a checkpoint, as TF 1.15's ensemble resource saved
    them."""

    def __init__(self, ensemble, name):
        stamp, serialized = ensemble.serialize()
        super().__init__(ensemble, [_saving.SaveSpec(stamp, '', name + '_stamp'),
                                    _saving.SaveSpec(serialized, '', name + '_serialized')],
                         name)
        self._ensemble = ensemble

    def restore(self, restored_tensors, restored_shapes):
        return self._ensemble.deserialize(*restored_tensors)


class TreeEnsemble:
    """TF 1.15's `boosted_trees_ops.TreeEnsemble` of variables; `resource_handle` is the
    ensemble itself, which the stand-ins below take."""

    def __init__(self, name, stamp_token=0, is_local=False, serialized_proto=''):
        with tf.name_scope(name, 'TreeEnsemble') as scope:
            self._stamp = tf.Variable(np.int64(stamp_token), trainable=False, collections=[],
                                      name='ensemble_stamp', use_resource=True)
            self._serialized = tf.Variable(serialized_proto, trainable=False, collections=[],
                                           name='ensemble_serialized', use_resource=True)
            self.initializer = tf.group(self._stamp.initializer, self._serialized.initializer)
            initialized = tf.logical_and(self._stamp.is_initialized(),
                                         self._serialized.is_initialized())
        self.resource_handle = self
        if not is_local:
            tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS,
                                 _Saveable(self, scope.rstrip('/') + ':0'))
        _resources.register_resource(self._serialized.handle, self.initializer, initialized,
                                     is_shared=not is_local)

    def serialize(self):
        """(stamp int64 scalar, serialized proto string scalar)."""
        return self._stamp.read_value(), self._serialized.read_value()

    def deserialize(self, stamp_token, serialized_proto):
        return tf.group(self._stamp.assign(stamp_token),
                        self._serialized.assign(serialized_proto))

    def get_states(self):
        """(stamp, num_trees, num_finalized_trees, num_attempted_layers,
        last_layer_nodes_range [2]) of one read of the ensemble."""
        stamp, serialized = self.serialize()
        states = tf.numpy_function(_states, [serialized], [tf.int32] * 4,
                                   name='BoostedTreesGetEnsembleStates')
        states[3].set_shape([2])
        for tensor in states[:3]:
            tensor.set_shape([])
        names = ('num_trees', 'num_finalized_trees', 'num_attempted_layers',
                 'last_layer_nodes_range')
        return (tf.identity(stamp, name='stamp_token'),) + tuple(
            tf.identity(tensor, name=name) for tensor, name in zip(states, names))

    def update(self, fn, inputs, name):
        """The op replacing the stamp and proto by `fn(stamp, serialized, *inputs)`'s."""
        stamp, serialized = tf.numpy_function(fn, list(self.serialize()) + list(inputs),
                                              [tf.int64, tf.string], name=name)
        return self.deserialize(stamp, serialized)


def _states(serialized):
    ensemble = _ensemble_of(serialized)
    trees = len(ensemble.trees)
    finalized = trees if trees <= 0 or ensemble.tree_metadata[-1].is_finalized else trees - 1
    growing = ensemble.growing_metadata
    return (np.int32(trees), np.int32(finalized), np.int32(growing.num_layers_attempted),
            np.array([growing.last_layer_node_start, max(1, growing.last_layer_node_end)],
                     np.int32))


def _node_value(node):
    """A node's logit: its leaf's, or a split's leaf before it split (0 if none was kept)."""
    if node.HasField('bucketized_split'):
        return node.metadata.original_leaf.scalar
    return node.leaf.scalar


class _Tree:
    """One tree of the proto as arrays over its nodes."""

    def __init__(self, tree):
        count = len(tree.nodes)
        self.feature, self.threshold, self.left, self.right = (
            np.zeros(count, np.int64) for _ in range(4))
        self.is_leaf = np.ones(count, bool)
        self.value = np.array([_node_value(node) for node in tree.nodes], np.float32)
        for index, node in enumerate(tree.nodes):
            if node.HasField('bucketized_split'):
                split = node.bucketized_split
                self.is_leaf[index] = False
                self.feature[index], self.threshold[index] = split.feature_id, split.threshold
                self.left[index], self.right[index] = split.left_id, split.right_id

    def leaves(self, nodes, rows, features):
        """The leaf each example of `rows` reaches from its node `nodes` ([rows]), its bucket
        ids `features` [num_features, batch]: left when its bucket <= the threshold."""
        nodes = np.array(nodes, np.int64)
        while True:
            inner = ~self.is_leaf[nodes]
            if not inner.any():
                return nodes
            at = nodes[inner]
            go_left = features[self.feature[at], rows[inner]] <= self.threshold[at]
            nodes[inner] = np.where(go_left, self.left[at], self.right[at])


def _predict(serialized, *features):
    """TF 1.15's Predict: its TrainingPredict from no cache, to the same bit."""
    batch = len(features[0])
    return _training_predict(serialized, np.zeros(batch, np.int32),
                             np.full(batch, -1, np.int32), *features)[0]


def predict(tree_ensemble_handle, bucketized_features, logits_dimension, name=None):
    """The logits [batch, 1] of the whole ensemble (each tree's leaf times its weight)."""
    _, serialized = tree_ensemble_handle.serialize()
    logits = tf.numpy_function(_predict, [serialized] + list(bucketized_features), tf.float32,
                               name=name or 'BoostedTreesPredict')
    logits.set_shape([None, logits_dimension])
    return logits


def _training_predict(serialized, tree_ids, node_ids, *features):
    ensemble = _ensemble_of(serialized)
    batch = len(tree_ids)
    last = len(ensemble.trees) - 1
    if last < 0 or not batch:
        return np.zeros([batch, 1], np.float32), tree_ids, np.zeros(batch, np.int32)
    trees = [_Tree(tree) for tree in ensemble.trees]
    features = np.stack(features)
    tree_ids, node_ids = tree_ids.astype(np.int64), node_ids.astype(np.int64)
    cached = node_ids >= 0
    # From a cached node its value so far comes off; from no cache, the first node.
    partial = np.zeros(batch, np.float32)
    for index in np.flatnonzero(cached):
        partial[index] = -trees[tree_ids[index]].value[node_ids[index]]
    node_ids[~cached] = 0
    logits = np.zeros(batch, np.float32)
    for tree_id in range(int(tree_ids.min()), last + 1):
        rows = np.flatnonzero(tree_ids == tree_id)
        if not len(rows):
            continue
        tree = trees[tree_id]
        node_ids[rows] = tree.leaves(node_ids[rows], rows, features)
        partial[rows] += tree.value[node_ids[rows]]
        logits[rows] += np.float32(ensemble.tree_weights[tree_id]) * partial[rows]
        partial[rows] = 0
        if tree_id < last:
            tree_ids[rows], node_ids[rows] = tree_id + 1, 0
    return logits[:, None], tree_ids.astype(np.int32), node_ids.astype(np.int32)


def training_predict(tree_ensemble_handle, cached_tree_ids, cached_node_ids,
                     bucketized_features, logits_dimension, name=None):
    """(the logits [batch, 1] the ensemble added since the cached tree and node of each
    example, its tree ids [batch], its node ids [batch])."""
    _, serialized = tree_ensemble_handle.serialize()
    logits, tree_ids, node_ids = tf.numpy_function(
        _training_predict, [serialized, cached_tree_ids, cached_node_ids]
        + list(bucketized_features), [tf.float32, tf.int32, tf.int32],
        name=name or 'BoostedTreesTrainingPredict')
    logits.set_shape([None, logits_dimension])
    tree_ids.set_shape([None])
    node_ids.set_shape([None])
    return logits, tree_ids, node_ids


def make_stats_summary(node_ids, gradients, hessians, bucketized_features_list, max_splits,
                       num_buckets, name=None):
    """The sums [num_features, max_splits, num_buckets, 2] of the gradients and hessians of
    the examples at each node and bucket (in float64, as TF 1.15's kernel summed them, then
    float32)."""
    def summarise(node_ids, gradients, hessians, *features):
        summary = np.zeros([len(features), max_splits, num_buckets, 2], np.float64)
        kept = node_ids >= 0
        nodes = node_ids[kept]
        for index, buckets in enumerate(features):
            np.add.at(summary[index, :, :, 0], (nodes, buckets[kept]), gradients[kept, 0])
            np.add.at(summary[index, :, :, 1], (nodes, buckets[kept]), hessians[kept, 0])
        return summary.astype(np.float32)
    summary = tf.numpy_function(summarise, [node_ids, gradients, hessians]
                                + list(bucketized_features_list), tf.float32,
                                name=name or 'BoostedTreesMakeStatsSummary')
    summary.set_shape([len(bucketized_features_list), max_splits, num_buckets, 2])
    return summary


def _weights_and_gains(gradients, hessians, l1, l2):
    """The leaf weights and gains of float32 gradient and hessian sums, L1 and L2
    regularised (0 and 0 where the hessian and L2 vanish, or L1 absorbs the gradient)."""
    shrunk = gradients
    if l1 > 0:
        shrunk = np.where(gradients > l1, gradients - l1,
                          np.where(gradients < -l1, gradients + l1, np.float32(0)))
    denominator = hessians + l2
    with np.errstate(divide='ignore', invalid='ignore'):
        weights = np.where(denominator <= _GAIN_TOLERANCE, np.float32(0), -shrunk / denominator)
    return weights.astype(np.float32), (-shrunk * weights).astype(np.float32)


# node ids, gains, thresholds, left and right node contributions.
_BEST_DTYPES = (np.int32, np.float32, np.int32, np.float32, np.float32)
_BEST_SHAPES = ([-1], [-1], [-1], [-1, 1], [-1, 1])


def _best_gains(node_range, l1, l2, tree_complexity, min_node_weight, *summaries):
    l1, l2 = np.float32(l1), np.float32(l2)
    outputs = [[] for _ in range(5)]
    for summary in summaries:
        found = [[] for _ in range(5)]
        for node in range(node_range[0], node_range[1]):
            cumulative = np.cumsum(summary[node], axis=0, dtype=np.float32)
            total_gradient, total_hessian = cumulative[-1]
            if total_hessian < min_node_weight:
                continue
            _, parent_gain = _weights_and_gains(total_gradient, total_hessian, l1, l2)
            left, left_gains = _weights_and_gains(cumulative[:, 0], cumulative[:, 1], l1, l2)
            right, right_gains = _weights_and_gains(total_gradient - cumulative[:, 0],
                                                    total_hessian - cumulative[:, 1], l1, l2)
            bucket = int(np.argmax(left_gains + right_gains))
            gain = (left_gains[bucket] + right_gains[bucket] - parent_gain) - tree_complexity
            for values, value in zip(found, (node, gain, bucket, left[bucket], right[bucket])):
                values.append(value)
        for kind, (output, values) in enumerate(zip(outputs, found)):
            output.append(np.array(values, _BEST_DTYPES[kind]).reshape(_BEST_SHAPES[kind]))
    return [array for output in outputs for array in output]


def calculate_best_gains_per_feature(node_id_range, stats_summary_list, l1, l2,
                                     tree_complexity, min_node_weight, max_splits, name=None):
    """Per feature, for each node of `node_id_range` with enough hessian: (node ids [n],
    gains [n], thresholds [n], left and right leaf weights [n, 1]) of its best bucket."""
    count = len(stats_summary_list)
    found = tf.numpy_function(
        lambda node_range, *summaries: _best_gains(
            node_range, l1, l2, np.float32(tree_complexity), np.float32(min_node_weight),
            *summaries),
        [node_id_range] + list(stats_summary_list),
        [tf.as_dtype(dtype) for dtype in _BEST_DTYPES for _ in range(count)],
        name=name or 'BoostedTreesCalculateBestGainsPerFeature')
    lists = [found[start:start + count] for start in range(0, 5 * count, count)]
    for kind, tensors in enumerate(lists):
        for tensor in tensors:
            tensor.set_shape([None] * len(_BEST_SHAPES[kind]))
    return lists


def _update(stamp, serialized, learning_rate, max_depth, pruning_mode, feature_ids, *splits):
    """TF 1.15's layer update of a serialized ensemble by the splits of each feature (node ids,
    gains, thresholds, left and right contributions per feature)."""
    ensemble = _ensemble_of(serialized)
    count = len(feature_ids)
    node_ids, gains, thresholds, lefts, rights = (splits[start:start + count]
                                                  for start in range(0, 5 * count, count))
    best = {}
    for index, feature_id in enumerate(feature_ids):
        for node, gain, threshold, left, right in zip(node_ids[index], gains[index],
                                                      thresholds[index], lefts[index],
                                                      rights[index]):
            found = best.get(node)
            candidate = (gain, feature_id, threshold, learning_rate * left[0],
                         learning_rate * right[0])
            if found is not None and abs(gain - found[0]) < _GAIN_TOLERANCE:
                if feature_id < found[1]:
                    best[node] = candidate
            elif found is None or gain - found[0] >= _GAIN_TOLERANCE:
                best[node] = candidate
    growing = ensemble.growing_metadata
    trees = len(ensemble.trees)
    growing.num_layers_attempted += 1
    if trees <= 0 or ((trees == 1 or ensemble.tree_metadata[trees - 2].is_finalized)
                      and len(ensemble.trees[-1].nodes) == 1):
        growing.num_trees_attempted += 1
    if trees <= 0:
        _add_tree(ensemble)
    if pruning_mode == PruningMode.PRE_PRUNING:
        best = {node: split for node, split in best.items() if split[0] >= 0}
    if best:
        tree, metadata = ensemble.trees[-1], ensemble.tree_metadata[-1]
        start = len(tree.nodes)
        for node_id in sorted(best):
            _split(tree, int(node_id), *best[node_id])
        end = len(tree.nodes)
        metadata.num_layers_grown += 1
        if metadata.num_layers_grown >= max_depth:
            start, end = 0, 1
            metadata.is_finalized = True
            _add_tree(ensemble)
        growing.last_layer_node_start, growing.last_layer_node_end = start, end
    return np.int64(stamp + 1), ensemble.SerializeToString()


def _add_tree(ensemble):
    ensemble.trees.add().nodes.add().leaf.scalar = 0.
    ensemble.tree_weights.append(_TREE_WEIGHT)
    ensemble.tree_metadata.add()


def _split(tree, node_id, gain, feature_id, threshold, left, right):
    """Splits the leaf `node_id` of `tree` into two new leaves of its value plus `left` and
    `right`, keeping its value (unless the tree's first leaf is still 0) and the gain."""
    node = tree.nodes[node_id]
    value = node.leaf.scalar
    if node_id != 0 or value != 0:
        node.metadata.original_leaf.scalar = value
    node.ClearField('leaf')
    node.metadata.gain = float(gain)
    split = node.bucketized_split
    split.feature_id, split.threshold = int(feature_id), int(threshold)
    split.left_id, split.right_id = len(tree.nodes), len(tree.nodes) + 1
    for contribution in (left, right):
        tree.nodes.add().leaf.scalar = float(np.float32(value) + contribution)


def update_ensemble(tree_ensemble_handle, feature_ids, node_ids, gains, thresholds,
                    left_node_contribs, right_node_contribs, max_depth, learning_rate,
                    pruning_mode, name=None):
    """The op adding to the newest tree the best split of each node among the features'
    (`feature_ids`, ints; the rest lists of `calculate_best_gains_per_feature`'s, one per
    feature), finishing the tree at `max_depth` layers and starting the next."""
    if pruning_mode == PruningMode.POST_PRUNING:
        _not_yet("pruning_mode='post'")()
    feature_ids = [int(feature_id) for feature_id in feature_ids]
    return tree_ensemble_handle.update(
        lambda stamp, serialized, *splits: _update(
            stamp, serialized, np.float32(learning_rate), max_depth, pruning_mode,
            feature_ids, *splits),
        list(node_ids) + list(gains) + list(thresholds) + list(left_node_contribs)
        + list(right_node_contribs), name or 'BoostedTreesUpdateEnsemble')
