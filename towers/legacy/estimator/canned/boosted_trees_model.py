"""The model_fn of TF 1.15's boosted trees (`bt_model_fn`) and the heads of its classifier
and regressor.

Training grows the ensemble (`boosted_trees_growing`) from the gradients and hessians of the
head's loss (its mean over the batch, SUM_OVER_BATCH_SIZE), or, for a classifier without
weights or a vocabulary, from the logistic loss's closed form; EVAL and PREDICT predict with the
ensemble. Everything lives under the name scope 'boosted_trees'.
"""
import collections

import numpy as np

from towers.compat import tf
from towers.legacy.estimator.canned import boosted_trees_columns as columns_lib
from towers.legacy.estimator.canned import boosted_trees_growing as growing
from towers.legacy.estimator.canned import boosted_trees_kernels as _ops
from towers.legacy.estimator.canned import head as head_lib
from towers.legacy.estimator.canned import model_fn as model_fn_lib
from towers.legacy.estimator.spec import EstimatorError, ModeKeys

# TF 1.15's hyperparameters of a model.
TreeHParams = collections.namedtuple('TreeHParams', [
    'n_trees', 'max_depth', 'learning_rate', 'l1', 'l2', 'tree_complexity', 'min_node_weight',
    'center_bias', 'pruning_mode', 'quantile_sketch_epsilon'])
LOSS_REDUCTION = tf.losses.Reduction.SUM_OVER_BATCH_SIZE


def _resources(name, columns, epsilon):
    """(the ensemble, the quantile sketch or None, {numeric column: boundaries}) of the model
    in name scope `name`."""
    ensemble = _ops.TreeEnsemble(name=name)
    if not columns.numeric:
        return ensemble, None, {}
    quantiles = _ops.QuantileAccumulator(epsilon=epsilon,
                                         num_streams=columns.num_numeric_features,
                                         num_quantiles=int(1. / epsilon),
                                         name='QuantileAccumulator')
    return ensemble, quantiles, columns.boundaries_by_column(quantiles.get_bucket_boundaries())


def logits_of(features, head, columns, epsilon, name):
    """(logits [batch, logits_dimension], the ensemble, the features) of the trained
    ensemble in name scope `name`, for EVAL and PREDICT."""
    ensemble, _, boundaries = _resources(name, columns, epsilon)
    inputs = columns.features(features, boundaries)
    return _ops.predict(ensemble.resource_handle, bucketized_features=inputs,
                        logits_dimension=head.logits_dimension), ensemble, inputs


def bt_model_fn(features, labels, mode, head, columns, hparams, n_batches_per_layer, config,
                closed_form=None, weight_column=None, train_in_memory=False):
    """The `EstimatorSpec` of boosted trees, their ops under 'boosted_trees'.

    Args:
      features, labels, mode, config: the Estimator's.
      head: a head of `canned.head` (its loss the mean over the batch).
      columns: a `boosted_trees_columns.Columns`.
      hparams: a `TreeHParams`.
      n_batches_per_layer: the batches whose statistics grow each layer.
      closed_form: (logits, labels) -> (gradients, hessians), or None: tf.gradients of the
        loss.
      weight_column: what weighs the quantiles (the head weighs the loss).
      train_in_memory: each batch is the whole data set.
    """
    model_fn_lib.checked_features(features, 'BoostedTrees')
    num_quantiles = int(1. / hparams.quantile_sketch_epsilon)
    with tf.name_scope('boosted_trees') as name:
        global_step = tf.train.get_or_create_global_step()
        if mode != ModeKeys.TRAIN:
            logits, _, _ = logits_of(features, head, columns, hparams.quantile_sketch_epsilon,
                                     name)
            return head.create_estimator_spec(features=features, mode=mode, logits=logits,
                                              labels=labels)
        ensemble, quantiles, boundaries = _resources(name, columns,
                                                     hparams.quantile_sketch_epsilon)
        bucket_sizes, feature_ids_list = columns.bucket_groups(num_quantiles)
        if train_in_memory:
            _check_in_memory(n_batches_per_layer, config)
        worker_device = tf.no_op().device
        boundaries_ready = growing.variable(not columns.numeric, 'are_boundaries_ready')
        batch_size = tf.shape(labels)[0]
        if train_in_memory:
            inputs, cache_op = growing.cached_features(features, columns, batch_size,
                                                       boundaries, boundaries_ready)
            state_cache = growing.TrainingStateCache(batch_size, head.logits_dimension)
            cached_tree_ids, cached_node_ids, cached_logits = state_cache.lookup()
        else:
            inputs = columns.features(features, boundaries)
            state_cache = cache_op = None
            cached_tree_ids = tf.zeros([batch_size], tf.int32)
            cached_node_ids = growing.DUMMY_NODE_ID * tf.ones([batch_size], tf.int32)
            cached_logits = tf.zeros([batch_size, head.logits_dimension], tf.float32)
        if config.num_worker_replicas <= 1:
            local_ensemble, reload = ensemble, tf.no_op()
        else:
            # Each worker predicts with a copy of the chief's ensemble, read afresh each step.
            with tf.device(worker_device):
                local_ensemble = _ops.TreeEnsemble(name=name + '_local', is_local=True)
            reload = local_ensemble.deserialize(*ensemble.serialize())
        with tf.control_dependencies([reload]):
            (stamp, num_trees, num_finalized_trees, num_attempted_layers,
             last_layer_nodes) = local_ensemble.get_states()
            partial_logits, tree_ids, node_ids = _ops.training_predict(
                tree_ensemble_handle=local_ensemble.resource_handle,
                cached_tree_ids=cached_tree_ids, cached_node_ids=cached_node_ids,
                bucketized_features=inputs, logits_dimension=head.logits_dimension)
        logits = cached_logits + partial_logits
        if train_in_memory:
            grower = growing.InMemoryGrower(ensemble, quantiles, hparams, feature_ids_list)
        else:
            grower = growing.AccumulatorGrower(
                ensemble, quantiles, hparams, feature_ids_list, stamp, n_batches_per_layer,
                bucket_sizes, config.is_chief, hparams.center_bias)
        tf.summary.scalar('ensemble/num_trees', num_trees)
        tf.summary.scalar('ensemble/num_finalized_trees', num_finalized_trees)
        tf.summary.scalar('ensemble/num_attempted_layers', num_attempted_layers)
        center_bias_var = growing.variable(hparams.center_bias, 'center_bias_needed')
        weights = columns_lib.weights(features, weight_column)

        def update_quantiles():
            with tf.name_scope('UpdateQuantile'):
                return grower.accumulate_quantiles(columns.numeric_values(features), weights,
                                                   boundaries_ready)

        def train_op_fn(loss):
            def grow():
                grow_ops = [cache_op] if train_in_memory else []
                if state_cache:
                    # The logits so far are kept once the bias is centred.
                    grow_ops.append(growing.cond(center_bias_var, tf.no_op, lambda: (
                        state_cache.insert(tree_ids, node_ids, logits))))
                if closed_form:
                    gradients, hessians = closed_form(logits, labels)
                else:
                    gradients = tf.gradients(loss, logits, name='Gradients')[0]
                    hessians = tf.gradients(gradients, logits, name='Hessians')[0]
                stats = _stats_summaries(node_ids, gradients, hessians, inputs,
                                         feature_ids_list, bucket_sizes, hparams.max_depth)
                if hparams.center_bias:
                    update = growing.cond(
                        center_bias_var,
                        lambda: grower.center_bias(center_bias_var, gradients, hessians),
                        lambda: grower.grow_tree(stats, last_layer_nodes))
                else:
                    update = grower.grow_tree(stats, last_layer_nodes)
                grow_ops.append(update)
                with tf.control_dependencies([update]):
                    grow_ops.append(tf.assign_add(global_step, 1).op)
                return tf.group(grow_ops, name='grow_op')
            if not columns.numeric:
                return grow()
            return growing.cond(boundaries_ready, grow, update_quantiles)

    spec = head.create_estimator_spec(features=features, mode=mode, logits=logits,
                                      labels=labels, train_op_fn=train_op_fn)
    return spec._replace(
        training_hooks=tuple(spec.training_hooks) + (growing.StopAtAttemptsHook(
            num_finalized_trees, num_attempted_layers, hparams.n_trees, hparams.max_depth),),
        training_chief_hooks=[growing.GrowerInitializationHook(grower.chief_init_op())]
        + list(spec.training_chief_hooks))


def _check_in_memory(n_batches_per_layer, config):
    if n_batches_per_layer != 1:
        raise EstimatorError('When train_in_memory is enabled, input_fn should return the '
                             'entire dataset as a single batch, and n_batches_per_layer should '
                             'be set as 1.')
    if not config.is_chief or config.num_worker_replicas > 1 or config.num_ps_replicas > 0:
        raise EstimatorError('train_in_memory is supported only for non-distributed training.')


def _stats_summaries(node_ids, gradients, hessians, inputs, feature_ids_list, bucket_sizes,
                     max_depth):
    """Per bucket group, per feature: the sums [max_splits, buckets, 2] of the gradients and
    hessians of the examples at each node and bucket."""
    return [[tf.squeeze(_ops.make_stats_summary(
        node_ids=node_ids, gradients=gradients, hessians=hessians,
        bucketized_features_list=[inputs[feature]], max_splits=growing.max_splits(max_depth),
        num_buckets=buckets), axis=0) for feature in ids]
        for ids, buckets in zip(feature_ids_list, bucket_sizes)]


def classification_head(n_classes, weight_column, label_vocabulary):
    """(the logistic head, the closed-form gradients and hessians of its loss or None)."""
    if n_classes != 2:
        raise EstimatorError('For now only binary classification is supported.n_classes given '
                             'as {}'.format(n_classes))
    head = head_lib.BinaryClassHead(weight_column, label_vocabulary, LOSS_REDUCTION)
    if weight_column is not None or label_vocabulary is not None:
        return head, None

    def logistic_gradients(logits, labels):
        labels = tf.cast(labels, tf.float32)
        if labels.shape.ndims == 1:
            labels = tf.expand_dims(labels, -1)
        return logistic_loss_derivatives(logits, labels)
    return head, logistic_gradients


def _exp(values):
    """exp of float32 `values` as TF 1.15's Eigen computed it on CPUs without FMA (Cephes'
    polynomial after a two-part reduction by log 2), bit for bit."""
    f = np.float32
    clipped = np.clip(values, f(-88.3762626647949), f(88.3762626647950))
    powers = np.floor(clipped * f(1.44269504088896341) + f(0.5)).astype(f)
    rest = clipped - powers * f(0.693359375)
    rest = rest - powers * f(-2.12194440e-4)
    result = f(1.9875691500E-4)
    for coefficient in (1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2, 1.6666665459E-1,
                        5.0000001201E-1):
        result = result * rest + f(coefficient)
    result = result * (rest * rest) + rest + f(1)
    scale = ((powers + f(127)).astype(np.int32) << 23).view(f)
    return np.maximum(result * scale, values)


def _logistic_derivatives(logits, labels):
    f = np.float32
    predictions = f(1) / (_exp(-logits) + f(1))
    normalizer = f(1) / f(predictions.size)
    return ((predictions - labels) * normalizer).astype(f), (
        (predictions * normalizer) * (f(1) - predictions)).astype(f)


def logistic_loss_derivatives(logits, labels):
    """(gradients, hessians) [batch, 1] of the logistic loss's mean at `logits` for float
    `labels`, as TF 1.15's closed form computed them (its Eigen exp; its graph optimizer
    multiplied the hessians' normalizer into the predictions first, when the batch size was
    known)."""
    gradients, hessians = tf.numpy_function(_logistic_derivatives, [logits, labels],
                                            [tf.float32, tf.float32], name='LogisticLoss')
    gradients.set_shape(logits.shape)
    hessians.set_shape(logits.shape)
    return gradients, hessians


def regression_head(label_dimension, weight_column):
    if label_dimension != 1:
        raise EstimatorError('For now only 1 dimension regression is supported.label_dimension '
                             'given as {}'.format(label_dimension))
    return head_lib.RegressionHead(1, weight_column, LOSS_REDUCTION)


def estimator_args(head, feature_columns, n_batches_per_layer, hparams, closed_form=None,
                    weight_column=None, train_in_memory=False):
    """The model_fn and `Columns` of an estimator of these settings."""
    columns = columns_lib.Columns(feature_columns)
    return model_fn_lib.estimator_model_fn(
        bt_model_fn, head=head, columns=columns, hparams=hparams,
        n_batches_per_layer=n_batches_per_layer, closed_form=closed_form,
        weight_column=weight_column, train_in_memory=train_in_memory), columns
