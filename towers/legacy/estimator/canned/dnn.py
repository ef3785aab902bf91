"""TF 1.15's `tf.estimator.DNNClassifier`, `DNNRegressor` and `DNNEstimator` (the v1 classes,
the last with a head of the caller's) and `dnn_logit_fn_builder`: a fully connected net over
`tf.feature_column.input_layer`, trained by Adagrad (learning rate 0.05) by default; and TF
2.15's `DNNClassifierV2`, `DNNRegressorV2`, `DNNEstimatorV2`: the same net, unpartitioned, of
resource variables, with TF 2's heads (`canned.head_v2`), trained by a Keras optimizer (Adagrad
at Keras' 0.001 by default).

Its variables are TF 1.15's, so checkpoints move both ways:
    dnn/input_from_feature_columns/input_layer/<column>_embedding/embedding_weights
    dnn/hiddenlayer_<i>/kernel, dnn/hiddenlayer_<i>/bias     (glorot-uniform, zeros)
    dnn/hiddenlayer_<i>/batchnorm_<i>/{gamma,beta,moving_mean,moving_variance}   (batch_norm)
    dnn/logits/kernel, dnn/logits/bias
(in the graph each is a partitioned variable, one '/part_0' without parameter servers; the V2
classes' are not partitioned, their optimizer's 'training/Adagrad/<variable>/accumulator').
"""
from towers.compat import tf, tf_layers
from towers.legacy.estimator.canned import head as head_lib
from towers.legacy.estimator.canned import head_v2
from towers.legacy.estimator.canned import model_fn as model_fn_lib
from towers.legacy.estimator.canned.optimizers import get_optimizer_instance
from towers.legacy.estimator.estimator import Estimator, EstimatorV2
from towers.legacy.estimator.spec import EstimatorError, ModeKeys

LEARNING_RATE = 0.05


def dnn_logits(features, mode, units, hidden_units, feature_columns, activation_fn, dropout,
               input_layer_partitioner, batch_norm):
    """Logits [batch, units] of the net, its variables made in the current variable scope.

    Args:
      features: dict key -> tensor, as `feature_columns` read them.
      mode: a `ModeKeys`; dropout and batch-norm statistics only in TRAIN.
      units: int, the logits' size.
      hidden_units: ints, the width of each hidden layer.
      feature_columns: the dense columns of the input layer.
      activation_fn: applied after each hidden layer.
      dropout: None, or the probability of dropping each hidden value while training.
      input_layer_partitioner: the input layer's variable partitioner.
      batch_norm: whether batch normalization (momentum 0.999) follows each hidden layer.
    """
    training = mode == ModeKeys.TRAIN
    with tf.variable_scope('input_from_feature_columns', values=tuple(features.values()),
                           partitioner=input_layer_partitioner):
        net = tf.feature_column.input_layer(features, feature_columns)
    for layer_id, width in enumerate(hidden_units):
        with tf.variable_scope('hiddenlayer_%d' % layer_id, values=(net,)) as scope:
            net = _dense(net, width, activation_fn)
            if dropout is not None and training:
                net = tf.nn.dropout(net, rate=dropout)
            if batch_norm:
                net = tf_layers.normalization.BatchNormalization(
                    momentum=0.999, name='batchnorm_%d' % layer_id)(net, training=training)
        model_fn_lib.layer_summary(net, scope.name)
    with tf.variable_scope('logits', values=(net,)) as scope:
        logits = _dense(net, units, None)
    model_fn_lib.layer_summary(logits, scope.name)
    return logits


def dnn_logit_fn_builder(units, hidden_units, feature_columns, activation_fn, dropout,
                         input_layer_partitioner, batch_norm):
    """TF 1.15's `tf.estimator.experimental.dnn_logit_fn_builder`: a logit_fn (features, mode)
    -> `dnn_logits` of these settings, its variables in the caller's variable scope (the DNN
    estimators' is 'dnn').

    Raises:
      EstimatorError: `units` is not an int.
    """
    if not isinstance(units, int):
        raise EstimatorError('dnn_logit_fn_builder: units must be an int.  Given type: %s'
                             % type(units))

    def dnn_logit_fn(features, mode):
        return dnn_logits(features, mode, units, hidden_units, feature_columns, activation_fn,
                          dropout, input_layer_partitioner, batch_norm)
    return dnn_logit_fn


def _dense(inputs, units, activation_fn):
    """`activation_fn(inputs @ kernel + bias)` with TF 1.x's Dense variables, 'kernel' and
    'bias', in the current variable scope."""
    kernel = tf.get_variable('kernel', [inputs.shape[-1], units],
                             initializer=tf.glorot_uniform_initializer())
    bias = tf.get_variable('bias', [units], initializer=tf.zeros_initializer())
    outputs = tf.nn.bias_add(tf.matmul(inputs, kernel), bias)
    return activation_fn(outputs) if activation_fn is not None else outputs


def dnn_model_fn(features, labels, mode, head, hidden_units, feature_columns, optimizer,
                 activation_fn, dropout, input_layer_partitioner, config, batch_norm):
    """The `EstimatorSpec` of a DNN estimator, its variables under 'dnn'."""
    optimizer = get_optimizer_instance(optimizer, LEARNING_RATE)
    model_fn_lib.checked_features(features, 'DNN estimator')
    with model_fn_lib.v1_variable_scope('dnn', features,
                                        model_fn_lib.hidden_layer_partitioner(config)):
        logits = dnn_logit_fn_builder(
            head.logits_dimension, hidden_units, feature_columns, activation_fn, dropout,
            model_fn_lib.input_layer_partitioner(config, input_layer_partitioner),
            batch_norm)(features, mode)
        return head.create_estimator_spec(features=features, mode=mode, logits=logits,
                                          labels=labels, optimizer=optimizer)


class DNNEstimator(Estimator):
    """TF 1.15's `tf.compat.v1.estimator.DNNEstimator`: a DNN whose logits `head` turns into
    predictions, a loss and metrics.

    Args:
      head: a head of `canned.head` (or any object with `logits_dimension` and
        `create_estimator_spec(features, mode, logits, labels, optimizer)`).
      hidden_units: ints, the width of each hidden layer, e.g. [64, 32].
      feature_columns: the dense `tf.feature_column`s of the input.
      model_dir, config, warm_start_from: as `Estimator`'s.
      optimizer: 'Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD' (learning rate 0.05), a
        `tf.train.Optimizer` or a callable returning one.
      activation_fn: of the hidden layers, `tf.nn.relu` by default.
      dropout: None, or the probability of dropping a hidden value while training.
      input_layer_partitioner: the input layer's partitioner (64 MiB slices by default).
      batch_norm: whether batch normalization follows each hidden layer.
    """

    def __init__(self, head, hidden_units, feature_columns, model_dir=None,
                 optimizer='Adagrad', activation_fn=tf.nn.relu, dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None,
                 batch_norm=False):
        super().__init__(
            model_fn=model_fn_lib.estimator_model_fn(
                dnn_model_fn, head=head, hidden_units=hidden_units,
                feature_columns=tuple(feature_columns or ()), optimizer=optimizer,
                activation_fn=activation_fn, dropout=dropout,
                input_layer_partitioner=input_layer_partitioner, batch_norm=batch_norm),
            model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNClassifier(DNNEstimator):
    """TF 1.15's `tf.compat.v1.estimator.DNNClassifier`: a DNN classifier of `n_classes`.

    Labels are [batch] or [batch, 1]: class ids in [0, n_classes) (for 2 classes floats in
    [0, 1] too), or their names when `label_vocabulary` lists them. The loss is the weighted sum
    over the batch of the cross-entropy (`loss_reduction` SUM). `predict` yields 'logits',
    'probabilities', 'class_ids', 'classes', 'all_class_ids', 'all_classes' (and 'logistic' for
    2 classes); `evaluate` gives 'accuracy', 'average_loss', 'loss' (and for 2 classes
    'precision', 'recall', 'auc', 'auc_precision_recall', 'label/mean', 'prediction/mean',
    'accuracy_baseline').

    Args:
      n_classes: int >= 2.
      weight_column: None, a feature key or a `numeric_column` weighting each example's loss.
      label_vocabulary: None, or the n_classes label strings.
      loss_reduction: a `tf.losses.Reduction` other than NONE.
      The others: as `DNNEstimator`'s.
    """

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, optimizer='Adagrad',
                 activation_fn=tf.nn.relu, dropout=None, input_layer_partitioner=None,
                 config=None, warm_start_from=None, loss_reduction=tf.losses.Reduction.SUM,
                 batch_norm=False):
        super().__init__(
            head_lib.classification_head(n_classes, weight_column, label_vocabulary,
                                         loss_reduction),
            hidden_units, feature_columns, model_dir, optimizer, activation_fn, dropout,
            input_layer_partitioner, config, warm_start_from, batch_norm)


class DNNRegressor(DNNEstimator):
    """TF 1.15's `tf.compat.v1.estimator.DNNRegressor`: a DNN regressor of `label_dimension`
    values per example.

    Labels are floats [batch, label_dimension] ([batch] for 1). The loss is the weighted sum of
    squared errors over the batch and the label values (`loss_reduction` SUM). `predict` yields
    'predictions'; `evaluate` gives 'average_loss', 'loss', 'label/mean', 'prediction/mean'.

    Args:
      label_dimension: int, the values per example; the others as `DNNClassifier`'s.
    """

    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer='Adagrad', activation_fn=tf.nn.relu,
                 dropout=None, input_layer_partitioner=None, config=None, warm_start_from=None,
                 loss_reduction=tf.losses.Reduction.SUM, batch_norm=False):
        super().__init__(
            head_lib.RegressionHead(label_dimension, weight_column, loss_reduction),
            hidden_units, feature_columns, model_dir, optimizer, activation_fn, dropout,
            input_layer_partitioner, config, warm_start_from, batch_norm)


def dnn_model_fn_v2(features, labels, mode, head, hidden_units, feature_columns, optimizer,
                    activation_fn, dropout, config, batch_norm):
    """The `EstimatorSpec` of a DNN V2 estimator, its variables under 'dnn'."""
    del config  # TF 2's canned variables are not partitioned.
    model_fn_lib.checked_features(features, 'DNN estimator')
    with model_fn_lib.v2_variable_scope('dnn', features) as scope:
        logits = dnn_logit_fn_builder(head.logits_dimension, hidden_units, feature_columns,
                                      activation_fn, dropout, None, batch_norm)(features, mode)
    return model_fn_lib.v2_estimator_spec(head, features, mode, logits, labels, optimizer,
                                          None, scope.name)


class DNNEstimatorV2(EstimatorV2):
    """TF 2.15's `tf.estimator.DNNEstimator`: `DNNEstimator` with a head of `canned.head_v2`,
    no `input_layer_partitioner`, and a Keras optimizer: 'Adagrad', 'Adam', 'Ftrl', 'RMSProp',
    'SGD' (at Keras' default learning rate), a `tf.keras.optimizers.legacy.Optimizer` or a
    callable returning one."""

    def __init__(self, head, hidden_units, feature_columns, model_dir=None,
                 optimizer='Adagrad', activation_fn=tf.nn.relu, dropout=None, config=None,
                 warm_start_from=None, batch_norm=False):
        super().__init__(
            model_fn=model_fn_lib.estimator_model_fn(
                dnn_model_fn_v2, head=head, hidden_units=hidden_units,
                feature_columns=tuple(feature_columns or ()), optimizer=optimizer,
                activation_fn=activation_fn, dropout=dropout, batch_norm=batch_norm),
            model_dir=model_dir, config=config, warm_start_from=warm_start_from)


class DNNClassifierV2(DNNEstimatorV2):
    """TF 2.15's `tf.estimator.DNNClassifier`: `DNNClassifier` as `DNNEstimatorV2`, its loss
    the weighted mean over the batch (`loss_reduction` SUM_OVER_BATCH_SIZE), so that
    evaluation's 'loss' is its 'average_loss' (without weights)."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, optimizer='Adagrad',
                 activation_fn=tf.nn.relu, dropout=None, config=None, warm_start_from=None,
                 loss_reduction=head_v2.SUM_OVER_BATCH_SIZE, batch_norm=False):
        super().__init__(
            head_lib.classification_head(n_classes, weight_column, label_vocabulary,
                                         loss_reduction, head_v2.CLASS_HEADS),
            hidden_units, feature_columns, model_dir, optimizer, activation_fn, dropout,
            config, warm_start_from, batch_norm)


class DNNRegressorV2(DNNEstimatorV2):
    """TF 2.15's `tf.estimator.DNNRegressor`: `DNNRegressor` as `DNNEstimatorV2`, its loss the
    weighted sum of squared errors over the number of label values (SUM_OVER_BATCH_SIZE)."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer='Adagrad', activation_fn=tf.nn.relu,
                 dropout=None, config=None, warm_start_from=None,
                 loss_reduction=head_v2.SUM_OVER_BATCH_SIZE, batch_norm=False):
        super().__init__(
            head_v2.RegressionHead(label_dimension, weight_column, loss_reduction),
            hidden_units, feature_columns, model_dir, optimizer, activation_fn, dropout,
            config, warm_start_from, batch_norm)
