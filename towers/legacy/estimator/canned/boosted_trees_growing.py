"""How TF 1.15's boosted trees grow the ensemble: from the gradient and hessian statistics of
each feature's buckets, one layer at a time, on TensorFlow's BoostedTrees kernels.

Two growers, as in TF 1.15: `InMemoryGrower` (the whole data set is one batch: each step
grows a layer) and `AccumulatorGrower` (statistics summed over `n_batches_per_layer` batches in
`tf.ConditionalAccumulator`s before a layer grows, the chief applying it). Each also sketches
the quantiles of the numeric features first and centres the bias when asked. A layer's step,
not a quantile step, increments the global step; `StopAtAttemptsHook` ends training once
`n_trees` trees are finished.
"""
from towers.compat import tf
from towers.legacy.estimator.canned import boosted_trees_kernels as _ops
from towers.legacy.estimator.canned.boosted_trees_columns import transform
from towers.legacy.estimator.spec import EstimatorError

# The node id the training predictions of an example start from (none reached yet).
DUMMY_NODE_ID = -1


def variable(initial_value, name):
    """A non-trainable resource variable of any shape: the growing state checkpoints keep."""
    return tf.Variable(initial_value, trainable=False, validate_shape=False, name=name,
                       use_resource=True)


def cond(pred, true_fn, false_fn, name=None):
    """`tf.cond` of `pred` (a bool tensor or variable)."""
    return tf.cond(tf.convert_to_tensor(pred), true_fn, false_fn, name=name)


def max_splits(max_depth):
    """The most nodes a tree of `max_depth` splits: 2^max_depth - 1."""
    return (1 << max_depth) - 1


class _Grower:
    """What both growers share: the ensemble, the settings (`hparams`, TF 1.15's `TreeHParams`)
    and the grouping of the feature ids (`feature_ids_list`, one list per bucket count)."""

    def __init__(self, ensemble, quantiles, hparams, feature_ids_list):
        self._ensemble = ensemble
        self._quantiles = quantiles
        self._hparams = hparams
        self._feature_ids_list = feature_ids_list
        if hparams.pruning_mode not in ('none', 'pre', 'post'):
            raise EstimatorError('pruning_mode mode must be one of: none, post, pre')
        self._pruning_mode = _ops.PruningMode.from_str(hparams.pruning_mode)
        pruning = self._pruning_mode != _ops.PruningMode.NO_PRUNING
        if hparams.tree_complexity > 0 and not pruning:
            raise EstimatorError('Tree complexity have no effect unless pruning mode is chosen.')
        if hparams.tree_complexity <= 0 and pruning:
            raise EstimatorError('For pruning, tree_complexity must be positive.')

    def chief_init_op(self):
        """What the chief runs once its session is made."""
        return tf.no_op()

    def _center(self, center_bias_var, mean_gradients, mean_hessians):
        """Moves the bias of the first tree; `center_bias_var` says whether it moves again."""
        more = _ops.center_bias(self._ensemble.resource_handle, mean_gradients=mean_gradients,
                                mean_hessians=mean_hessians, l1=self._hparams.l1,
                                l2=self._hparams.l2)
        return center_bias_var.assign(more).op

    def _grow(self, stats_list, node_range):
        """The op adding the best split of each node of the last layer (`node_range` [2]) among
        the features' statistics `stats_list` (per bucket group, per feature: [max_splits,
        buckets, 2] of gradient and hessian sums)."""
        per_feature = [[] for _ in range(5)]
        feature_ids = []
        for stats, ids in zip(stats_list, self._feature_ids_list):
            best = _ops.calculate_best_gains_per_feature(
                node_id_range=node_range, stats_summary_list=stats, l1=self._hparams.l1,
                l2=self._hparams.l2, tree_complexity=self._hparams.tree_complexity,
                min_node_weight=self._hparams.min_node_weight,
                max_splits=max_splits(self._hparams.max_depth))
            feature_ids += ids
            for found, values in zip(per_feature, best):
                found += values
        node_ids, gains, thresholds, left, right = per_feature
        return _ops.update_ensemble(
            self._ensemble.resource_handle, feature_ids=feature_ids, node_ids=node_ids,
            gains=gains, thresholds=thresholds, left_node_contribs=left,
            right_node_contribs=right, learning_rate=self._hparams.learning_rate,
            max_depth=self._hparams.max_depth, pruning_mode=self._pruning_mode)


class InMemoryGrower(_Grower):
    """The whole data set in each batch: the quantiles, the bias and each layer come from one
    batch."""

    def accumulate_quantiles(self, float_features, weights, boundaries_ready):
        added = self._quantiles.add_summaries(float_features, weights)
        with tf.control_dependencies([added]):
            with tf.control_dependencies([self._quantiles.flush()]):
                return boundaries_ready.assign(True).op

    def center_bias(self, center_bias_var, gradients, hessians):
        return self._center(center_bias_var, _ops.batch_mean(gradients),
                            _ops.batch_mean(hessians))

    def grow_tree(self, stats_list, node_range):
        return self._grow(stats_list, node_range)


class AccumulatorGrower(_Grower):
    """Statistics of `n_batches_per_layer` batches (of every worker) summed in accumulators of
    the stamp token `stamp`; the chief takes them and grows, the others only add theirs."""

    def __init__(self, ensemble, quantiles, hparams, feature_ids_list, stamp,
                 n_batches_per_layer, bucket_sizes, is_chief, center_bias):
        super().__init__(ensemble, quantiles, hparams, feature_ids_list)
        self._stamp = stamp
        self._n_batches = n_batches_per_layer
        self._is_chief = is_chief
        splits = max_splits(hparams.max_depth)
        self._layer_accumulators = [
            _accumulator([len(ids), splits, buckets, 2],
                         'numeric_stats_summary_accumulator_%d' % i)
            for i, (ids, buckets) in enumerate(zip(feature_ids_list, bucket_sizes))]
        accumulators = list(self._layer_accumulators)
        if center_bias:
            self._bias_accumulator = _accumulator([2, 1], 'bias_accumulator')
            accumulators.append(self._bias_accumulator)
        self._init_ops = [accumulator.set_global_step(stamp) for accumulator in accumulators]

    def chief_init_op(self):
        return tf.group(self._init_ops)

    def _when_accumulated(self, count, fn, name):
        return cond(tf.greater_equal(count, self._n_batches), fn, tf.no_op, name=name)

    def accumulate_quantiles(self, float_features, weights, boundaries_ready):
        counter = _accumulator({}, 'quantile_summary_accum')
        added = tf.group(self._quantiles.add_summaries(float_features, weights),
                         counter.set_global_step(self._stamp),
                         counter.apply_grad(tf.constant(0.), self._stamp))
        if not self._is_chief:
            return added

        def flush():
            return tf.group(self._quantiles.flush(), counter.take_grad(1),
                            boundaries_ready.assign(True).op)
        with tf.control_dependencies([added]):
            return self._when_accumulated(counter.num_accumulated(), flush,
                                          'wait_until_quaniles_accumulated')

    def center_bias(self, center_bias_var, gradients, hessians):
        means = tf.concat([_ops.batch_mean(gradients), _ops.batch_mean(hessians)], 0)
        with tf.control_dependencies([self._bias_accumulator.apply_grad(means, self._stamp)]):
            if not self._is_chief:
                return tf.no_op()

            def center():
                taken = tf.unstack(self._bias_accumulator.take_grad(1), axis=0)
                centered = self._center(center_bias_var, taken[0][None], taken[1][None])
                with tf.control_dependencies([centered]):
                    # Once centred, the layer accumulators take the next stamp's statistics.
                    return cond(center_bias_var, tf.no_op, lambda: tf.group([
                        accumulator.set_global_step(self._stamp + 1)
                        for accumulator in self._layer_accumulators]))
            return self._when_accumulated(self._bias_accumulator.num_accumulated(), center,
                                          'wait_until_n_batches_for_bias_accumulated')

    def grow_tree(self, stats_list, node_range):
        added = [accumulator.apply_grad(tf.stack(stats, axis=0), self._stamp)
                 for accumulator, stats in zip(self._layer_accumulators, stats_list)]
        with tf.control_dependencies(added):
            if not self._is_chief:
                return tf.no_op()
            fewest = tf.reduce_min(tf.stack([accumulator.num_accumulated()
                                             for accumulator in self._layer_accumulators]))
            return self._when_accumulated(fewest, lambda: self._grow(
                [tf.unstack(accumulator.take_grad(1), axis=0)
                 for accumulator in self._layer_accumulators], node_range),
                'wait_until_n_batches_accumulated')


def _accumulator(shape, shared_name):
    return tf.ConditionalAccumulator(dtype=tf.float32, shape=shape, shared_name=shared_name)


class TrainingStateCache:
    """Each example's tree, node and logits so far, in variables of a batch of `batch_size`
    (the in-memory data set), so that a step predicts only the trees' newest layers."""

    def __init__(self, batch_size, logits_dimension):
        self._tree_ids = variable(tf.zeros([batch_size], tf.int32), 'tree_ids_cache')
        self._node_ids = variable(DUMMY_NODE_ID * tf.ones([batch_size], tf.int32),
                                  'node_ids_cache')
        self._logits = variable(tf.zeros([batch_size, logits_dimension], tf.float32),
                                'logits_cache')

    def lookup(self):
        return self._tree_ids, self._node_ids, self._logits

    def insert(self, tree_ids, node_ids, logits):
        return tf.group([self._tree_ids.assign(tree_ids), self._node_ids.assign(node_ids),
                         self._logits.assign(logits)], name='cache_insert')


def cached_features(features, columns, batch_size, boundaries, boundaries_ready):
    """(the features of `columns` ([batch] each), the op marking them cached), as TF 1.15's
    in-memory training made them: fresh once the quantile boundaries are ready; before, stored
    in variables (`boosted_trees/cached_feature_<i>`, which its checkpoints hold) and read back
    once marked cached."""
    cache = [variable(tf.zeros([batch_size], tf.int32), 'cached_feature_%d' % i)
             for i in range(columns.num_features)]
    cached = variable(False, 'are_features_cached')
    indicators, others = columns.split()
    # Outside the conds, so that the vocabularies' lookup tables are initialised.
    transformed = transform(features, indicators)

    def uncached():
        return columns.features(features, boundaries, others, transformed), tf.no_op()

    def caching():
        def cache_now():
            stored = [tf.assign(slot, value) for slot, value in
                      zip(cache, columns.features(features, boundaries, others, transformed))]
            with tf.control_dependencies(stored):
                return stored, cached.assign(True).op
        return cond(cached, lambda: (cache, tf.no_op()), cache_now)
    return cond(boundaries_ready, uncached, caching)


class StopAtAttemptsHook(tf.train.SessionRunHook):
    """Stops training once `max_trees` trees are finished or more than 2 * max_trees *
    max_depth layers were attempted (re-read after the step when close: the step's own reads
    precede its growing)."""

    def __init__(self, num_finalized_trees, num_attempted_layers, max_trees, max_depth):
        self._tensors = [num_finalized_trees, num_attempted_layers]
        self._max_trees = max_trees
        self._max_layers = 2 * max_trees * max_depth

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._tensors)

    def after_run(self, run_context, run_values):
        trees, layers = run_values.results
        if trees >= self._max_trees - 1 or layers > self._max_layers - 1:
            trees, layers = run_context.session.run(self._tensors)
        if trees >= self._max_trees or layers > self._max_layers:
            run_context.request_stop()


class GrowerInitializationHook(tf.train.SessionRunHook):
    """Runs the grower's `chief_init_op` once the chief's session is made."""

    def __init__(self, init_op):
        self._init_op = init_op

    def after_create_session(self, session, coord):
        session.run(self._init_op)
