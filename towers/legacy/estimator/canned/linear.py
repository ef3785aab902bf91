"""TF 1.15's `tf.estimator.LinearClassifier`, `LinearRegressor` and `LinearEstimator` (the v1
classes, the last with a head of the caller's) and `linear_logit_fn_builder`: a linear model
over `tf.feature_column.linear_model`, trained by FTRL (learning rate 0.2) by default.

Its variables are TF 1.15's: 'linear/linear_model/<column>/weights' and
'linear/linear_model/bias_weights' (in the graph each a partitioned variable, '/part_0' without
parameter servers). Training writes the summaries 'linear/bias' and
'linear/fraction_of_zero_weights'. An optimizer `LinearSDCA` (`canned.linear_sdca`) trains the
same variables by SDCA.

TF 2.15's `LinearClassifierV2`, `LinearRegressorV2`, `LinearEstimatorV2`: the same model,
unpartitioned, of resource variables, with TF 2's heads, trained by Keras' legacy Ftrl
(learning rate 0.2 by name; min(0.2, 1/sqrt(columns)) for None), whose slots are
'training/Ftrl/<variable>/{accumulator,linear}'.
"""
import math

from towers.compat import tf
from towers.legacy.estimator.canned import head as head_lib
from towers.legacy.estimator.canned import head_v2, linear_sdca
from towers.legacy.estimator.canned import model_fn as model_fn_lib
from towers.legacy.estimator.canned.linear_sdca import LinearSDCA
from towers.legacy.estimator.canned.optimizers import (OPTIMIZERS_V2_BY_NAME,
                                                       get_optimizer_instance)
from towers.legacy.estimator.estimator import Estimator, EstimatorV2

LEARNING_RATE = 0.2


def linear_logits(features, units, feature_columns, sparse_combiner, cols_to_vars=None):
    """Logits [batch, units] of a linear model, its variables under 'linear_model' in the current
    variable scope; `sparse_combiner` ('sum', 'mean' or 'sqrtn') reduces a multivalent
    categorical column. `cols_to_vars`, a dict, gets column -> its variable's parts and 'bias'
    -> the bias's."""
    cols_to_vars = {} if cols_to_vars is None else cols_to_vars
    logits = tf.feature_column.linear_model(features, feature_columns, units=units,
                                            sparse_combiner=sparse_combiner,
                                            cols_to_vars=cols_to_vars)
    bias = cols_to_vars['bias']
    if units > 1:
        tf.summary.histogram('bias', bias)
    else:
        tf.summary.scalar('bias', bias[0][0])
    weights = [part for column, parts in cols_to_vars.items() if column != 'bias'
               for part in parts]
    with tf.name_scope('zero_fraction'):
        zero_fraction = tf.nn.zero_fraction(
            tf.concat([tf.reshape(part, [-1]) for part in weights], axis=0))
    tf.summary.scalar('fraction_of_zero_weights', zero_fraction)
    return logits


def linear_logit_fn_builder(units, feature_columns, sparse_combiner='sum'):
    """TF 1.15's `tf.estimator.experimental.linear_logit_fn_builder`: a logit_fn (features) ->
    `linear_logits` of these settings, its variables under 'linear_model' in the caller's
    variable scope (the linear estimators' is 'linear')."""
    def linear_logit_fn(features):
        return linear_logits(features, units, feature_columns, sparse_combiner)
    return linear_logit_fn


def default_learning_rate(feature_columns, highest):
    """TF 1.x's learning rate of FTRL when the optimizer was not given: 1/sqrt(columns), at most
    `highest`."""
    return min(highest, 1. / math.sqrt(len(feature_columns)))


def linear_model_fn(features, labels, mode, head, feature_columns, optimizer, partitioner,
                    config, sparse_combiner):
    """The `EstimatorSpec` of a linear estimator, its variables under 'linear'.

    `optimizer` None is FTRL at `default_learning_rate`; a name gets `LEARNING_RATE`; a
    `LinearSDCA` trains by SDCA.
    """
    model_fn_lib.checked_features(features, 'Linear estimator')
    with model_fn_lib.v1_variable_scope(
            'linear', features, model_fn_lib.input_layer_partitioner(config, partitioner)):
        cols_to_vars = {}
        logits = linear_logits(features, head.logits_dimension, feature_columns,
                               sparse_combiner, cols_to_vars)
        if isinstance(optimizer, LinearSDCA):
            return linear_sdca.estimator_spec(optimizer, head, features, labels, mode, logits,
                                              feature_columns, cols_to_vars)
        optimizer = get_optimizer_instance(
            optimizer or tf.train.FtrlOptimizer(
                default_learning_rate(feature_columns, LEARNING_RATE)),
            LEARNING_RATE)
        return head.create_estimator_spec(features=features, mode=mode, logits=logits,
                                          labels=labels, optimizer=optimizer)


class LinearEstimator(Estimator):
    """TF 1.15's `tf.compat.v1.estimator.LinearEstimator`: a linear model whose logits `head`
    turns into predictions, a loss and metrics.

    Args:
      head: as `DNNEstimator`'s.
      feature_columns: the `tf.feature_column`s of the input (categorical ones too).
      model_dir, config, warm_start_from: as `Estimator`'s (TF 1.15's class lacked
        warm_start_from; its classifier and regressor had it).
      optimizer: 'Ftrl' (learning rate 0.2), another name, a `tf.train.Optimizer`, a callable
        returning one, None: FTRL at min(0.2, 1/sqrt(len(feature_columns))), or a
        `LinearSDCA` (for two classes or one label).
      partitioner: the variables' partitioner (64 MiB slices by default).
      sparse_combiner: 'sum', 'mean' or 'sqrtn', for multivalent categorical columns.
    """

    def __init__(self, head, feature_columns, model_dir=None, optimizer='Ftrl', config=None,
                 partitioner=None, sparse_combiner='sum', warm_start_from=None):
        feature_columns = tuple(feature_columns or ())
        linear_sdca.check_estimator(optimizer, head, feature_columns, sparse_combiner)
        super().__init__(
            model_fn=model_fn_lib.estimator_model_fn(
                linear_model_fn, head=head, feature_columns=feature_columns,
                optimizer=optimizer, partitioner=partitioner, sparse_combiner=sparse_combiner),
            model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class LinearClassifier(LinearEstimator):
    """TF 1.15's `tf.compat.v1.estimator.LinearClassifier`: a linear classifier of `n_classes`.

    Labels, loss, predictions and metrics are as `DNNClassifier`'s.

    Args:
      n_classes, weight_column, label_vocabulary, loss_reduction: as `DNNClassifier`'s.
      The others: as `LinearEstimator`'s.
    """

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer='Ftrl', config=None, partitioner=None,
                 warm_start_from=None, loss_reduction=tf.losses.Reduction.SUM,
                 sparse_combiner='sum'):
        super().__init__(
            head_lib.classification_head(n_classes, weight_column, label_vocabulary,
                                         loss_reduction),
            feature_columns, model_dir, optimizer, config, partitioner, sparse_combiner,
            warm_start_from)


class LinearRegressor(LinearEstimator):
    """TF 1.15's `tf.compat.v1.estimator.LinearRegressor`: a linear regressor of
    `label_dimension` values per example; labels, loss, predictions and metrics as
    `DNNRegressor`'s, the other arguments as `LinearClassifier`'s."""

    def __init__(self, feature_columns, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer='Ftrl', config=None, partitioner=None, warm_start_from=None,
                 loss_reduction=tf.losses.Reduction.SUM, sparse_combiner='sum'):
        super().__init__(
            head_lib.RegressionHead(label_dimension, weight_column, loss_reduction),
            feature_columns, model_dir, optimizer, config, partitioner, sparse_combiner,
            warm_start_from)


def linear_model_fn_v2(features, labels, mode, head, feature_columns, optimizer, config,
                       sparse_combiner):
    """The `EstimatorSpec` of a linear V2 estimator, its variables under 'linear'."""
    del config  # TF 2's canned variables are not partitioned.
    model_fn_lib.checked_features(features, 'Linear estimator')
    cols_to_vars = {}
    with model_fn_lib.v2_variable_scope('linear', features) as scope:
        logits = linear_logits(features, head.logits_dimension, feature_columns,
                               sparse_combiner, cols_to_vars)
    if isinstance(optimizer, LinearSDCA):
        return linear_sdca.estimator_spec(optimizer, head, features, labels, mode, logits,
                                          feature_columns, cols_to_vars)
    return model_fn_lib.v2_estimator_spec(
        head, features, mode, logits, labels,
        optimizer or (lambda: OPTIMIZERS_V2_BY_NAME['Ftrl'](
            default_learning_rate(feature_columns, LEARNING_RATE))),
        LEARNING_RATE, scope.name)


class LinearEstimatorV2(EstimatorV2):
    """TF 2.15's `tf.estimator.LinearEstimator`: `LinearEstimator` with a head of
    `canned.head_v2`, no `partitioner`, and a Keras optimizer ('Ftrl' by default, a name at
    the learning rate 0.2; a `tf.keras.optimizers.legacy.Optimizer`; a callable returning one;
    None: Ftrl at min(0.2, 1/sqrt(len(feature_columns))); a `LinearSDCA`)."""

    def __init__(self, head, feature_columns, model_dir=None, optimizer='Ftrl', config=None,
                 sparse_combiner='sum', warm_start_from=None):
        feature_columns = tuple(feature_columns or ())
        linear_sdca.check_estimator(optimizer, head, feature_columns, sparse_combiner)
        super().__init__(
            model_fn=model_fn_lib.estimator_model_fn(
                linear_model_fn_v2, head=head, feature_columns=feature_columns,
                optimizer=optimizer, sparse_combiner=sparse_combiner),
            model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class LinearClassifierV2(LinearEstimatorV2):
    """TF 2.15's `tf.estimator.LinearClassifier`: `LinearClassifier` as `LinearEstimatorV2`,
    its loss the weighted mean over the batch (`loss_reduction` SUM_OVER_BATCH_SIZE)."""

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer='Ftrl', config=None, warm_start_from=None,
                 loss_reduction=head_v2.SUM_OVER_BATCH_SIZE, sparse_combiner='sum'):
        super().__init__(
            head_lib.classification_head(n_classes, weight_column, label_vocabulary,
                                         loss_reduction, head_v2.CLASS_HEADS),
            feature_columns, model_dir, optimizer, config, sparse_combiner, warm_start_from)


class LinearRegressorV2(LinearEstimatorV2):
    """TF 2.15's `tf.estimator.LinearRegressor`: `LinearRegressor` as `LinearEstimatorV2`, its
    loss the mean over the batch (SUM_OVER_BATCH_SIZE)."""

    def __init__(self, feature_columns, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer='Ftrl', config=None, warm_start_from=None,
                 loss_reduction=head_v2.SUM_OVER_BATCH_SIZE, sparse_combiner='sum'):
        super().__init__(
            head_v2.RegressionHead(label_dimension, weight_column, loss_reduction),
            feature_columns, model_dir, optimizer, config, sparse_combiner, warm_start_from)
