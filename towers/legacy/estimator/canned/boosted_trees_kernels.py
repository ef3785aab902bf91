"""Stand-ins for TensorFlow's BoostedTrees kernels (TF 2.21 ships the ops without them), with
the names of `ops.boosted_trees_ops` that the boosted-trees modules call, for one logit and
bucketized splits: the ensemble, its states, the statistics, the best gains, the layer update
with its pruning, the bias centring, and (from `boosted_trees_prediction`) the predictions and
the explanations' logits paths, and (from `boosted_trees_quantiles`) the quantile sketch of
numeric columns and their bucketizing. Their arithmetic is TF 1.15's kernels' in float32, in its
order, so that the trees and logits are TF 1.15.5's.

The ensemble lives in two variables, its stamp (int64) and its `TreeEnsemble` proto serialized
(string), saved under TF 1.15's names '<scope>:0_stamp' and '<scope>:0_serialized'; each stand-in
is a `tf.numpy_function` over that proto.
"""
import numpy as np

from towers.compat import internal, tf
from towers.legacy.estimator.canned import boosted_trees_explain as protos
from towers.legacy.estimator.canned.boosted_trees_prediction import (  # noqa: F401
    example_debug_outputs, predict, training_predict)
from towers.legacy.estimator.canned.boosted_trees_quantiles import (  # noqa: F401
    QuantileAccumulator, boosted_trees_bucketize)

_tf_ops = internal('ops.boosted_trees_ops')
_resources = internal('ops.resources')
_saving = internal('training.saving.saveable_object')
PruningMode = _tf_ops.PruningMode
# TF 1.15's tolerance of equal gains, the weight of each tree grown layer by layer, and the
# least change of the bias (relative to it) for which centring goes on.
_GAIN_TOLERANCE = np.float32(1e-15)
_TREE_WEIGHT = 1.
_MIN_BIAS_CHANGE = np.float32(0.01)


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

    def update(self, fn, inputs, name, result=None):
        """The op replacing the stamp and proto by the first two of `fn(stamp, serialized,
        *inputs)`'s outputs; with a `result` dtype, the third (a scalar), once replaced."""
        outputs = tf.numpy_function(fn, list(self.serialize()) + list(inputs),
                                    [tf.int64, tf.string] + ([result] if result else []),
                                    name=name)
        replaced = self.deserialize(*outputs[:2])
        if not result:
            return replaced
        with tf.control_dependencies([replaced]):
            return tf.reshape(outputs[2], [])


def _states(serialized):
    ensemble = protos.ensemble_of(serialized)
    trees = len(ensemble.trees)
    finalized = trees if trees <= 0 or ensemble.tree_metadata[-1].is_finalized else trees - 1
    growing = ensemble.growing_metadata
    return (np.int32(trees), np.int32(finalized), np.int32(growing.num_layers_attempted),
            np.array([growing.last_layer_node_start, max(1, growing.last_layer_node_end)],
                     np.int32))


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
    ensemble = protos.ensemble_of(serialized)
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
            if pruning_mode == PruningMode.POST_PRUNING:
                _post_prune(tree, metadata)
            _add_tree(ensemble)
        growing.last_layer_node_start, growing.last_layer_node_end = start, end
    return np.int64(stamp + 1), ensemble.SerializeToString()


def _add_tree(ensemble, value=0.):
    ensemble.trees.add().nodes.add().leaf.scalar = value
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


def _prune_below(tree, node_id, parents, changes):
    """Turns back into leaves, children first, the splits under and at `node_id` of negative
    gain whose children are leaves; records each removed child's parent and the logit change
    from it to its parent. Returns the removed node ids."""
    node = tree.nodes[node_id]
    if not node.HasField('bucketized_split'):
        return []
    left, right = node.bucketized_split.left_id, node.bucketized_split.right_id
    removed = (_prune_below(tree, left, parents, changes)
               + _prune_below(tree, right, parents, changes))
    children = (tree.nodes[left], tree.nodes[right])
    if not (node.metadata.gain < 0 and all(child.HasField('leaf') for child in children)):
        return removed
    node.ClearField('bucketized_split')
    node.leaf.CopyFrom(node.metadata.original_leaf)
    node.leaf.SetInParent()
    node.ClearField('metadata')
    for child_id, child in zip((left, right), children):
        parents[child_id] = node_id
        changes[child_id] = np.float32(node.leaf.scalar) - np.float32(child.leaf.scalar)
    return removed + [left, right]


def _post_prune(tree, metadata):
    """TF 1.15's post-pruning of a finished tree: its splits of negative gain with leaves below
    become leaves again, deepest first, and the nodes left are renumbered in order; the
    metadata keeps, for each former node, the node it became and the logit change from it (so
    that cached predictions carry over)."""
    count = len(tree.nodes)
    parents, changes = list(range(count)), [np.float32(0)] * count
    removed = set(_prune_below(tree, 0, parents, changes))
    if not removed:
        return
    new_ids = {}
    for node_id in range(count):
        update = metadata.post_pruned_nodes_meta.add()
        change, kept = np.float32(0), node_id
        while parents[kept] != kept:
            change, kept = change + changes[kept], parents[kept]
        if node_id not in removed:
            new_ids[node_id] = len(new_ids)
        update.new_node_id = new_ids[kept]
        update.logit_change.append(change)
    for node_id in sorted(removed, reverse=True):
        del tree.nodes[node_id]
    for node in tree.nodes:
        if node.HasField('bucketized_split'):
            split = node.bucketized_split
            split.left_id, split.right_id = new_ids[split.left_id], new_ids[split.right_id]


def _batch_mean(values):
    f = np.float32
    packed = len(values) // 8 * 8
    # Eight lanes summed in order (cumsum: sequentially, from 0), halved pairwise, then the
    # rest added.
    lanes = np.cumsum(np.concatenate([np.zeros((1, 8), f), values[:packed].reshape(-1, 8)]),
                      0, dtype=f)[-1]
    while len(lanes) > 1:
        lanes = lanes[:len(lanes) // 2] + lanes[len(lanes) // 2:]
    rest = np.cumsum(np.concatenate([[f(0)], values[packed:, 0]]), dtype=f)[-1]
    return np.array([[(rest + lanes[0]) / f(len(values))]], f)


def batch_mean(values):
    """The mean [1, 1] over the batch of `values` [batch, 1] as TF 1.15's `reduce_mean` summed
    float32 on AVX CPUs in one thread (batches to about 8,000), to the bit: the bias is centred
    from it."""
    mean = tf.numpy_function(_batch_mean, [values], tf.float32, name='Mean')
    mean.set_shape([1, 1])
    return mean


def center_bias(tree_ensemble_handle, mean_gradients, mean_hessians, l1, l2, name=None):
    """The op moving the bias (the first tree's root, made if there is none) by the leaf
    weight of the mean gradient and hessian ([1, 1] each); its bool result says whether
    centring goes on (the bias moved by more than 1% of itself, or was just made)."""
    def centre(stamp, serialized, gradients, hessians):
        ensemble = protos.ensemble_of(serialized)
        logit, _ = _weights_and_gains(gradients.flat[0], hessians.flat[0], np.float32(l1),
                                      np.float32(l2))
        logit = np.float32(logit)
        if not ensemble.trees:
            _add_tree(ensemble, float(logit))
            more = True
        else:
            root = ensemble.trees[0].nodes[0].leaf
            bias = np.float32(root.scalar)
            with np.errstate(divide='ignore', invalid='ignore'):
                more = bool(np.abs(logit / bias) > _MIN_BIAS_CHANGE)
            root.scalar = float(bias + logit)
        return np.int64(stamp + 1), ensemble.SerializeToString(), np.bool_(more)
    return tree_ensemble_handle.update(centre, [mean_gradients, mean_hessians],
                                       name or 'BoostedTreesCenterBias', result=tf.bool)


def update_ensemble(tree_ensemble_handle, feature_ids, node_ids, gains, thresholds,
                    left_node_contribs, right_node_contribs, max_depth, learning_rate,
                    pruning_mode, name=None):
    """The op adding to the newest tree the best split of each node among the features'
    (`feature_ids`, ints; the rest lists of `calculate_best_gains_per_feature`'s, one per
    feature), finishing the tree at `max_depth` layers (then post-pruned, with
    `PruningMode.POST_PRUNING`) and starting the next."""
    feature_ids = [int(feature_id) for feature_id in feature_ids]
    return tree_ensemble_handle.update(
        lambda stamp, serialized, *splits: _update(
            stamp, serialized, np.float32(learning_rate), max_depth, pruning_mode,
            feature_ids, *splits),
        list(node_ids) + list(gains) + list(thresholds) + list(left_node_contribs)
        + list(right_node_contribs), name or 'BoostedTreesUpdateEnsemble')
