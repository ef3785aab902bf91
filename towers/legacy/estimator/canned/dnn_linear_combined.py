"""TF 1.15's `tf.estimator.DNNLinearCombinedClassifier`, `DNNLinearCombinedRegressor` and
`DNNLinearCombinedEstimator` (the v1 classes, the last with a head of the caller's): wide and
deep, the logits of a linear model (variables under 'linear', as `LinearClassifier`'s) plus
those of a DNN (under 'dnn', as `DNNClassifier`'s), each part trained by its own optimizer on
its own variables: FTRL at min(0.005, 1/sqrt(linear columns)) and Adagrad at 0.001 by
default. One training step steps the global step once.

TF 2.15's `DNNLinearCombinedClassifierV2`, `...RegressorV2`, `...EstimatorV2`: the same parts,
unpartitioned, of resource variables, with TF 2's heads, each trained by a Keras optimizer
(Ftrl and Adagrad at the same learning rates); the DNN's steps the global step (its
`iterations`), the linear part's keeps its own 'training/Ftrl/iter' (the linear's steps it when
there is no DNN part).
"""
from towers.compat import tf
from towers.legacy.estimator.canned import head as head_lib
from towers.legacy.estimator.canned import head_v2
from towers.legacy.estimator.canned import model_fn as model_fn_lib
from towers.legacy.estimator.canned.dnn import dnn_logits
from towers.legacy.estimator.canned.linear import default_learning_rate, linear_logits
from towers.legacy.estimator.canned.optimizers import get_optimizer_instance
from towers.legacy.estimator.estimator import Estimator, EstimatorV2
from towers.legacy.estimator.spec import EstimatorError

DNN_LEARNING_RATE = 0.001
LINEAR_LEARNING_RATE = 0.005


def _checked_columns(linear_feature_columns, dnn_feature_columns, dnn_hidden_units):
    if not linear_feature_columns and not dnn_feature_columns:
        raise EstimatorError('Either linear_feature_columns or dnn_feature_columns must be '
                             'defined.')
    if dnn_feature_columns and not dnn_hidden_units:
        raise EstimatorError('dnn_hidden_units must be defined when dnn_feature_columns is '
                             'specified.')


def _checked_optimizer(optimizer):
    if isinstance(optimizer, tf.train.SyncReplicasOptimizer):
        raise EstimatorError('SyncReplicasOptimizer does not support two optimizers, as a '
                             'DNNLinearCombined estimator has: use a DNN or a Linear estimator')
    return optimizer


def dnn_linear_combined_model_fn(features, labels, mode, head, linear_feature_columns,
                                 linear_optimizer, dnn_feature_columns, dnn_optimizer,
                                 dnn_hidden_units, dnn_activation_fn, dnn_dropout,
                                 input_layer_partitioner, config, batch_norm,
                                 linear_sparse_combiner):
    """The `EstimatorSpec` of a wide-and-deep estimator (either part may be absent)."""
    model_fn_lib.checked_features(features, 'DNNLinearCombined estimator')
    input_partitioner = model_fn_lib.input_layer_partitioner(config, input_layer_partitioner)
    parts = []  # (logits, optimizer, variable scope name) of each part
    if dnn_feature_columns:
        optimizer = _checked_optimizer(get_optimizer_instance(dnn_optimizer, DNN_LEARNING_RATE))
        with model_fn_lib.v1_variable_scope(
                'dnn', features, model_fn_lib.hidden_layer_partitioner(config)) as scope:
            logits = dnn_logits(features, mode, head.logits_dimension, dnn_hidden_units,
                                dnn_feature_columns, dnn_activation_fn, dnn_dropout,
                                input_partitioner, batch_norm)
        parts.append((logits, optimizer, scope.name))
    if linear_feature_columns:
        optimizer = _checked_optimizer(get_optimizer_instance(
            linear_optimizer, default_learning_rate(linear_feature_columns,
                                                    LINEAR_LEARNING_RATE)))
        with model_fn_lib.v1_variable_scope('linear', features, input_partitioner) as scope:
            logits = linear_logits(features, head.logits_dimension, linear_feature_columns,
                                   linear_sparse_combiner)
            model_fn_lib.layer_summary(logits, scope.name)
        parts.append((logits, optimizer, scope.name))

    def train_op_fn(loss):
        steps = [optimizer.minimize(loss, var_list=tf.get_collection(
                     tf.GraphKeys.TRAINABLE_VARIABLES, scope=scope_name))
                 for _, optimizer, scope_name in parts]
        with tf.control_dependencies([tf.group(*steps)]):
            return tf.assign_add(tf.train.get_global_step(), 1).op

    return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                      logits=tf.add_n([logits for logits, _, _ in parts]),
                                      train_op_fn=train_op_fn)


class DNNLinearCombinedEstimator(Estimator):
    """TF 1.15's `tf.compat.v1.estimator.DNNLinearCombinedEstimator`: wide and deep, whose
    summed logits `head` (as `DNNEstimator`'s) turns into predictions, a loss and metrics.

    Args:
      model_dir, config, warm_start_from: as `Estimator`'s (TF 1.15's class lacked
        warm_start_from and batch_norm; its classifier and regressor had them).
      linear_feature_columns: the columns of the linear part (None: no linear part).
      linear_optimizer: 'Ftrl' by default; a name gets min(0.005, 1/sqrt(len(columns))).
      dnn_feature_columns: the dense columns of the DNN part (None: no DNN part).
      dnn_optimizer: 'Adagrad' by default; a name gets the learning rate 0.001.
      dnn_hidden_units, dnn_activation_fn, dnn_dropout, batch_norm: the DNN part's, as
        `DNNEstimator`'s hidden_units, activation_fn, dropout, batch_norm.
      input_layer_partitioner: as `DNNEstimator`'s.
      linear_sparse_combiner: the linear part's sparse_combiner ('sum', 'mean', 'sqrtn').

    Raises:
      EstimatorError: neither part has columns; the DNN part has no hidden units.
    """

    def __init__(self, head, model_dir=None, linear_feature_columns=None,
                 linear_optimizer='Ftrl', dnn_feature_columns=None, dnn_optimizer='Adagrad',
                 dnn_hidden_units=None, dnn_activation_fn=tf.nn.relu, dnn_dropout=None,
                 input_layer_partitioner=None, config=None, linear_sparse_combiner='sum',
                 warm_start_from=None, batch_norm=False):
        _checked_columns(linear_feature_columns, dnn_feature_columns, dnn_hidden_units)
        super().__init__(
            model_fn=model_fn_lib.estimator_model_fn(
                dnn_linear_combined_model_fn, head=head,
                linear_feature_columns=linear_feature_columns,
                linear_optimizer=linear_optimizer, dnn_feature_columns=dnn_feature_columns,
                dnn_optimizer=dnn_optimizer, dnn_hidden_units=dnn_hidden_units,
                dnn_activation_fn=dnn_activation_fn, dnn_dropout=dnn_dropout,
                input_layer_partitioner=input_layer_partitioner, batch_norm=batch_norm,
                linear_sparse_combiner=linear_sparse_combiner),
            model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNLinearCombinedClassifier(DNNLinearCombinedEstimator):
    """TF 1.15's `tf.compat.v1.estimator.DNNLinearCombinedClassifier`: a wide-and-deep
    classifier of `n_classes`; labels, loss, predictions and metrics as `DNNClassifier`'s.

    Args:
      n_classes, weight_column, label_vocabulary, loss_reduction: as `DNNClassifier`'s.
      The others: as `DNNLinearCombinedEstimator`'s.
    """

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer='Ftrl',
                 dnn_feature_columns=None, dnn_optimizer='Adagrad', dnn_hidden_units=None,
                 dnn_activation_fn=tf.nn.relu, dnn_dropout=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction=tf.losses.Reduction.SUM,
                 batch_norm=False, linear_sparse_combiner='sum'):
        super().__init__(
            head_lib.classification_head(n_classes, weight_column, label_vocabulary,
                                         loss_reduction),
            model_dir, linear_feature_columns, linear_optimizer, dnn_feature_columns,
            dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout,
            input_layer_partitioner, config, linear_sparse_combiner, warm_start_from,
            batch_norm)


class DNNLinearCombinedRegressor(DNNLinearCombinedEstimator):
    """TF 1.15's `tf.compat.v1.estimator.DNNLinearCombinedRegressor`: a wide-and-deep regressor
    of `label_dimension` values per example; labels, loss, predictions and metrics as
    `DNNRegressor`'s, the other arguments as `DNNLinearCombinedClassifier`'s."""

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer='Ftrl',
                 dnn_feature_columns=None, dnn_optimizer='Adagrad', dnn_hidden_units=None,
                 dnn_activation_fn=tf.nn.relu, dnn_dropout=None, label_dimension=1,
                 weight_column=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction=tf.losses.Reduction.SUM,
                 batch_norm=False, linear_sparse_combiner='sum'):
        super().__init__(
            head_lib.RegressionHead(label_dimension, weight_column, loss_reduction),
            model_dir, linear_feature_columns, linear_optimizer, dnn_feature_columns,
            dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout,
            input_layer_partitioner, config, linear_sparse_combiner, warm_start_from,
            batch_norm)


def dnn_linear_combined_model_fn_v2(features, labels, mode, head, linear_feature_columns,
                                    linear_optimizer, dnn_feature_columns, dnn_optimizer,
                                    dnn_hidden_units, dnn_activation_fn, dnn_dropout, config,
                                    batch_norm, linear_sparse_combiner):
    """The `EstimatorSpec` of a wide-and-deep V2 estimator (either part may be absent)."""
    del config  # TF 2's canned variables are not partitioned.
    model_fn_lib.checked_features(features, 'DNNLinearCombined estimator')
    parts = []  # (logits, optimizer, learning rate, variable scope name) of each part
    if dnn_feature_columns:
        with model_fn_lib.v2_variable_scope('dnn', features) as scope:
            logits = dnn_logits(features, mode, head.logits_dimension, dnn_hidden_units,
                                dnn_feature_columns, dnn_activation_fn, dnn_dropout, None,
                                batch_norm)
        parts.append((logits, dnn_optimizer, DNN_LEARNING_RATE, scope.name))
    if linear_feature_columns:
        with model_fn_lib.v2_variable_scope('linear', features) as scope:
            logits = linear_logits(features, head.logits_dimension, linear_feature_columns,
                                   linear_sparse_combiner)
            model_fn_lib.layer_summary(logits, scope.name)
        parts.append((logits, linear_optimizer,
                      default_learning_rate(linear_feature_columns, LINEAR_LEARNING_RATE),
                      scope.name))

    def train_op_fn(loss):
        steps = []
        for index, (_, optimizer, learning_rate, scope_name) in enumerate(parts):
            optimizer = model_fn_lib.v2_optimizer(optimizer, learning_rate, index == 0)
            steps += optimizer.get_updates(loss, model_fn_lib.v2_trainable_variables(scope_name))
            steps += tf.get_collection(tf.GraphKeys.UPDATE_OPS, scope_name + '/')
        return tf.group(*steps)

    return head.create_estimator_spec(features=features, mode=mode, labels=labels,
                                      logits=tf.add_n([logits for logits, _, _, _ in parts]),
                                      train_op_fn=train_op_fn)


class DNNLinearCombinedEstimatorV2(EstimatorV2):
    """TF 2.15's `tf.estimator.DNNLinearCombinedEstimator`: `DNNLinearCombinedEstimator` with a
    head of `canned.head_v2`, no `input_layer_partitioner`, and Keras optimizers (names, legacy
    Keras optimizers or callables returning them)."""

    def __init__(self, head, model_dir=None, linear_feature_columns=None,
                 linear_optimizer='Ftrl', dnn_feature_columns=None, dnn_optimizer='Adagrad',
                 dnn_hidden_units=None, dnn_activation_fn=tf.nn.relu, dnn_dropout=None,
                 config=None, linear_sparse_combiner='sum', warm_start_from=None,
                 batch_norm=False):
        _checked_columns(linear_feature_columns, dnn_feature_columns, dnn_hidden_units)
        super().__init__(
            model_fn=model_fn_lib.estimator_model_fn(
                dnn_linear_combined_model_fn_v2, head=head,
                linear_feature_columns=linear_feature_columns,
                linear_optimizer=linear_optimizer, dnn_feature_columns=dnn_feature_columns,
                dnn_optimizer=dnn_optimizer, dnn_hidden_units=dnn_hidden_units,
                dnn_activation_fn=dnn_activation_fn, dnn_dropout=dnn_dropout,
                batch_norm=batch_norm, linear_sparse_combiner=linear_sparse_combiner),
            model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNLinearCombinedClassifierV2(DNNLinearCombinedEstimatorV2):
    """TF 2.15's `tf.estimator.DNNLinearCombinedClassifier`: as
    `DNNLinearCombinedEstimatorV2`, its loss the weighted mean over the batch."""

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer='Ftrl',
                 dnn_feature_columns=None, dnn_optimizer='Adagrad', dnn_hidden_units=None,
                 dnn_activation_fn=tf.nn.relu, dnn_dropout=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, config=None, warm_start_from=None,
                 loss_reduction=head_v2.SUM_OVER_BATCH_SIZE, batch_norm=False,
                 linear_sparse_combiner='sum'):
        super().__init__(
            head_lib.classification_head(n_classes, weight_column, label_vocabulary,
                                         loss_reduction, head_v2.CLASS_HEADS),
            model_dir, linear_feature_columns, linear_optimizer, dnn_feature_columns,
            dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout, config,
            linear_sparse_combiner, warm_start_from, batch_norm)


class DNNLinearCombinedRegressorV2(DNNLinearCombinedEstimatorV2):
    """TF 2.15's `tf.estimator.DNNLinearCombinedRegressor`: as `DNNLinearCombinedEstimatorV2`,
    its loss the mean over the batch."""

    def __init__(self, model_dir=None, linear_feature_columns=None, linear_optimizer='Ftrl',
                 dnn_feature_columns=None, dnn_optimizer='Adagrad', dnn_hidden_units=None,
                 dnn_activation_fn=tf.nn.relu, dnn_dropout=None, label_dimension=1,
                 weight_column=None, config=None, warm_start_from=None,
                 loss_reduction=head_v2.SUM_OVER_BATCH_SIZE, batch_norm=False,
                 linear_sparse_combiner='sum'):
        super().__init__(
            head_v2.RegressionHead(label_dimension, weight_column, loss_reduction),
            model_dir, linear_feature_columns, linear_optimizer, dnn_feature_columns,
            dnn_optimizer, dnn_hidden_units, dnn_activation_fn, dnn_dropout, config,
            linear_sparse_combiner, warm_start_from, batch_norm)
