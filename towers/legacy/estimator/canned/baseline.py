"""TF 1.15's `tf.estimator.BaselineClassifier`, `BaselineRegressor` and `BaselineEstimator` (the
v1 classes, the last with a head of the caller's): a model that learns only a bias,
'baseline/bias' [logits_dimension], the same logits for every example (the class prior, the
label mean), trained by FTRL (learning rate 0.3) by default. A yardstick for the other
estimators and a check of an input pipeline; the features only give the batch size.

TF 2.15's `BaselineClassifierV2`, `BaselineRegressorV2`, `BaselineEstimatorV2`: the same bias,
a resource variable, with TF 2's heads, trained by Keras' legacy Ftrl (learning rate 0.3).
"""
from towers.compat import tf
from towers.legacy.estimator.canned import head as head_lib
from towers.legacy.estimator.canned import head_v2
from towers.legacy.estimator.canned import model_fn as model_fn_lib
from towers.legacy.estimator.canned.optimizers import get_optimizer_instance
from towers.legacy.estimator.estimator import Estimator, EstimatorV2
from towers.legacy.estimator.spec import EstimatorError

LEARNING_RATE = 0.3


def baseline_logits(features, units, weight_column, use_resource=None):
    """The bias [units] tiled to [batch, units]; every feature but the weight must have the same
    first dimension (the weight is left out, so that serving need not give it); `use_resource`
as `tf.variable_scope`'s."""
    weight_key = getattr(weight_column, 'key', weight_column)
    sizes = [tf.shape(feature)[0] for key, feature in sorted(features.items())
             if key != weight_key]
    if not sizes:
        raise EstimatorError('A Baseline estimator needs at least one feature besides the '
                             'weight, for the batch size; got %s' % sorted(features))
    checks = [tf.assert_equal(sizes[0], size) for size in sizes[1:]]
    with tf.control_dependencies(checks):
        with tf.variable_scope('baseline', use_resource=use_resource):
            bias = tf.get_variable('bias', [units], initializer=tf.zeros_initializer())
            return bias * tf.ones(tf.stack([sizes[0], units]))


def baseline_model_fn(features, labels, mode, head, optimizer, weight_column, config):
    """The `EstimatorSpec` of a Baseline estimator."""
    del config  # Nothing to partition.
    model_fn_lib.checked_features(features, 'Baseline estimator')
    logits = baseline_logits(features, head.logits_dimension, weight_column)

    def train_op_fn(loss):
        return get_optimizer_instance(optimizer, LEARNING_RATE).minimize(
            loss, global_step=tf.train.get_global_step())

    return head.create_estimator_spec(features=features, mode=mode, logits=logits,
                                      labels=labels, train_op_fn=train_op_fn)


class BaselineClassifier(Estimator):
    """TF 1.15's `tf.compat.v1.estimator.BaselineClassifier`: predicts the class distribution
    of the training labels; labels, loss, predictions and metrics as `DNNClassifier`'s.

    Args:
      model_dir, config: as `Estimator`'s.
      n_classes, weight_column, label_vocabulary, loss_reduction: as `DNNClassifier`'s.
      optimizer: 'Ftrl' (learning rate 0.3), another name, a `tf.train.Optimizer` or a callable
        returning one.
    """

    def __init__(self, model_dir=None, n_classes=2, weight_column=None, label_vocabulary=None,
                 optimizer='Ftrl', config=None, loss_reduction=tf.losses.Reduction.SUM):
        head = head_lib.classification_head(n_classes, weight_column, label_vocabulary,
                                            loss_reduction)
        super().__init__(
            model_fn=model_fn_lib.estimator_model_fn(
                baseline_model_fn, head=head, optimizer=optimizer, weight_column=weight_column),
            model_dir=model_dir, config=config)


class BaselineRegressor(Estimator):
    """TF 1.15's `tf.compat.v1.estimator.BaselineRegressor`: predicts the (weighted) mean of the
    training labels; labels, loss, predictions and metrics as `DNNRegressor`'s, the other
    arguments as `BaselineClassifier`'s."""

    def __init__(self, model_dir=None, label_dimension=1, weight_column=None, optimizer='Ftrl',
                 config=None, loss_reduction=tf.losses.Reduction.SUM):
        head = head_lib.RegressionHead(label_dimension, weight_column, loss_reduction)
        super().__init__(
            model_fn=model_fn_lib.estimator_model_fn(
                baseline_model_fn, head=head, optimizer=optimizer, weight_column=weight_column),
            model_dir=model_dir, config=config)


class BaselineEstimator(Estimator):
    """TF 1.15's `tf.compat.v1.estimator.BaselineEstimator`: a bias [logits_dimension] that
    `head` (as `DNNEstimator`'s) turns into predictions, a loss and metrics; the other
    arguments as `BaselineClassifier`'s."""

    def __init__(self, head, model_dir=None, optimizer='Ftrl', config=None):
        super().__init__(
            model_fn=model_fn_lib.estimator_model_fn(
                baseline_model_fn, head=head, optimizer=optimizer, weight_column=None),
            model_dir=model_dir, config=config)


def baseline_model_fn_v2(features, labels, mode, head, optimizer, weight_column, config):
    """The `EstimatorSpec` of a Baseline V2 estimator."""
    del config  # Nothing to partition.
    model_fn_lib.checked_features(features, 'Baseline estimator')
    logits = baseline_logits(features, head.logits_dimension, weight_column, use_resource=True)
    variables = model_fn_lib.v2_trainable_variables('baseline')

    def train_op_fn(loss):
        return model_fn_lib.v2_optimizer(optimizer, LEARNING_RATE).get_updates(loss,
                                                                               variables)[0]

    return head.create_estimator_spec(features=features, mode=mode, logits=logits,
                                      labels=labels, train_op_fn=train_op_fn)


class BaselineEstimatorV2(EstimatorV2):
    """TF 2.15's `tf.estimator.BaselineEstimator`: `BaselineEstimator` with a head of
    `canned.head_v2` and a Keras optimizer ('Ftrl' at 0.3 by default, another name, a
    `tf.keras.optimizers.legacy.Optimizer` or a callable returning one)."""

    def __init__(self, head, model_dir=None, optimizer='Ftrl', config=None):
        super().__init__(
            model_fn=model_fn_lib.estimator_model_fn(
                baseline_model_fn_v2, head=head, optimizer=optimizer, weight_column=None),
            model_dir=model_dir, config=config)


class BaselineClassifierV2(EstimatorV2):
    """TF 2.15's `tf.estimator.BaselineClassifier`: `BaselineClassifier` as
    `BaselineEstimatorV2`, its loss the weighted mean over the batch (SUM_OVER_BATCH_SIZE)."""

    def __init__(self, model_dir=None, n_classes=2, weight_column=None, label_vocabulary=None,
                 optimizer='Ftrl', config=None, loss_reduction=head_v2.SUM_OVER_BATCH_SIZE):
        head = head_lib.classification_head(n_classes, weight_column, label_vocabulary,
                                            loss_reduction, head_v2.CLASS_HEADS)
        super().__init__(
            model_fn=model_fn_lib.estimator_model_fn(
                baseline_model_fn_v2, head=head, optimizer=optimizer,
                weight_column=weight_column),
            model_dir=model_dir, config=config)


class BaselineRegressorV2(EstimatorV2):
    """TF 2.15's `tf.estimator.BaselineRegressor`: `BaselineRegressor` as
    `BaselineEstimatorV2`, its loss the mean over the batch (SUM_OVER_BATCH_SIZE)."""

    def __init__(self, model_dir=None, label_dimension=1, weight_column=None, optimizer='Ftrl',
                 config=None, loss_reduction=head_v2.SUM_OVER_BATCH_SIZE):
        head = head_v2.RegressionHead(label_dimension, weight_column, loss_reduction)
        super().__init__(
            model_fn=model_fn_lib.estimator_model_fn(
                baseline_model_fn_v2, head=head, optimizer=optimizer,
                weight_column=weight_column),
            model_dir=model_dir, config=config)
