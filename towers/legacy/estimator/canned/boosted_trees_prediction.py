"""Stand-ins for TensorFlow's BoostedTrees prediction kernels over the serialized `TreeEnsemble`
(see `boosted_trees_kernels`): the logits of the whole ensemble (`predict`), the logits added
since each example's cached tree and node while training (`training_predict`, through the
corrections a post-pruned tree left), and each example's logits path for the explanations
(`example_debug_outputs`). TF 1.15's float32 arithmetic, in its order.
"""
import numpy as np

from towers.compat import tf
from towers.legacy.estimator.canned import boosted_trees_explain as protos


class _Tree:
    """One tree of the proto as arrays over its nodes."""

    def __init__(self, tree):
        count = len(tree.nodes)
        self.feature, self.threshold, self.left, self.right = (
            np.zeros(count, np.int64) for _ in range(4))
        self.is_leaf = np.ones(count, bool)
        self.value = np.array([protos.node_value(node) for node in tree.nodes], np.float32)
        for index, node in enumerate(tree.nodes):
            if node.HasField('bucketized_split'):
                split = node.bucketized_split
                self.is_leaf[index] = False
                self.feature[index], self.threshold[index] = split.feature_id, split.threshold
                self.left[index], self.right[index] = split.left_id, split.right_id

    def next_nodes(self, nodes, rows, features):
        """The children that the examples `rows` at the inner nodes `nodes` go to, by their
        bucket ids `features` [num_features, batch]: left when the bucket <= the threshold."""
        go_left = features[self.feature[nodes], rows] <= self.threshold[nodes]
        return np.where(go_left, self.left[nodes], self.right[nodes])

    def leaves(self, nodes, rows, features):
        """The leaf each example of `rows` reaches from its node `nodes` ([rows])."""
        nodes = np.array(nodes, np.int64)
        while True:
            inner = ~self.is_leaf[nodes]
            if not inner.any():
                return nodes
            nodes[inner] = self.next_nodes(nodes[inner], rows[inner], features)


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


def _pruned_start(ensemble, tree_id, node_id):
    """(the node a cached `node_id` became when its tree was post-pruned, the logit its
    example's prediction moved by then): (`node_id`, 0) if the tree was not pruned."""
    metadata = ensemble.tree_metadata[tree_id]
    if not (metadata.is_finalized and metadata.post_pruned_nodes_meta):
        return node_id, np.float32(0)
    update = metadata.post_pruned_nodes_meta[node_id]
    return update.new_node_id, np.float32(update.logit_change[0])


def _training_predict(serialized, tree_ids, node_ids, *features):
    ensemble = protos.ensemble_of(serialized)
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
        tree_id = tree_ids[index]
        node_ids[index], change = _pruned_start(ensemble, tree_id, node_ids[index])
        partial[index] = change - trees[tree_id].value[node_ids[index]]
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


def _debug_outputs(serialized, *features):
    """Per example, its `DebugOutput` bytes: the feature of each split on its paths, and the
    logits after the bias and after each split (the trees before plus the node reached)."""
    ensemble = protos.ensemble_of(serialized)
    trees = [_Tree(tree) for tree in ensemble.trees]
    weights = np.array(ensemble.tree_weights, np.float32)
    features = np.stack(features)
    outputs = []
    for row in range(features.shape[1]):
        debug = protos.parse('DebugOutput', b'')
        logit = weights[0] * trees[0].value[0]
        debug.logits_path.append(logit)
        before = np.float32(0)
        for tree_id, tree in enumerate(trees):
            node = 0
            while not tree.is_leaf[node]:
                debug.feature_ids.append(int(tree.feature[node]))
                node = int(tree.next_nodes(np.array([node]), np.array([row]), features)[0])
                logit = weights[tree_id] * tree.value[node]
                debug.logits_path.append(logit + before)
            # A tree still a lone root adds nothing (the bias tree excepted).
            if tree_id == 0 or node > 0:
                before += logit
        outputs.append(debug.SerializeToString())
    return np.array(outputs, object)


def example_debug_outputs(tree_ensemble_handle, bucketized_features, logits_dimension,
                          name=None):
    """The serialized `DebugOutput` [batch] of each example (what the directional feature
    contributions are computed from)."""
    del logits_dimension  # one logit, as TF 1.15's kernel took
    _, serialized = tree_ensemble_handle.serialize()
    outputs = tf.numpy_function(_debug_outputs, [serialized] + list(bucketized_features),
                                tf.string, name=name or 'BoostedTreesExampleDebugOutputs')
    outputs.set_shape([None])
    return outputs
