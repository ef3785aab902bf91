"""TF 2.15's heads (`tf.estimator.BinaryClassHead`, `MultiClassHead`, `RegressionHead`,
`PoissonRegressionHead`, `LogisticRegressionHead`; `MultiLabelHead` and `MultiHead` are in
`head_v2_multi`): TF 1.15's heads of `canned.head` (the same labels, losses, predictions and
export outputs) with TF 2's face:

  * `loss_reduction` is SUM_OVER_BATCH_SIZE by default: the weighted sum of the per-example
    losses over the number of them (Keras' 'sum_over_batch_size', 'sum', 'auto' or TF 1's
    `tf.losses.Reduction`s);
  * `loss`, `predictions(logits, keys)`, `metrics()` (Keras metric objects) and
    `update_metrics` are public; evaluation gives the same keys as TF 1's heads;
  * `create_estimator_spec(..., optimizer, trainable_variables, update_ops,
    regularization_losses)`: a Keras legacy optimizer's `get_updates` under the name scope
    'training', so that its variables are 'training/<Optimizer>/<variable>/<slot>';
  * `name` suffixes the metric and summary keys ('accuracy/<name>', 'loss/<name>');
  * `loss_fn(labels, logits[, features])` gives the per-example loss instead of the head's.
"""
from towers.compat import keras, tf
from towers.legacy.estimator.canned import head as head_lib
from towers.legacy.estimator.canned.keys import MetricKeys, PredictionKeys
from towers.legacy.estimator.spec import EstimatorError, fn_args

# Keras' reductions, which TF 2's `tf.losses.Reduction` is, as TF 1's arithmetic.
_V1_REDUCTIONS = {keras.losses.Reduction.AUTO: tf.losses.Reduction.SUM_OVER_BATCH_SIZE,
                  keras.losses.Reduction.SUM: tf.losses.Reduction.SUM,
                  keras.losses.Reduction.SUM_OVER_BATCH_SIZE:
                      tf.losses.Reduction.SUM_OVER_BATCH_SIZE}
SUM_OVER_BATCH_SIZE = keras.losses.Reduction.SUM_OVER_BATCH_SIZE


class Head:
    """TF 2's `tf.estimator.Head`: what a head gives a model_fn. A subclass has `name`,
    `logits_dimension`, `loss_reduction`, `loss`, `predictions`, `metrics`, `update_metrics`
    and `create_estimator_spec`."""

    @property
    def name(self):
        raise NotImplementedError('Calling an abstract method.')

    @property
    def loss_reduction(self):
        raise NotImplementedError('Calling an abstract method.')

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        raise NotImplementedError('Calling an abstract method.')

    def predictions(self, logits, keys=None):
        raise NotImplementedError('Calling an abstract method.')

    def metrics(self, regularization_losses=None):
        raise NotImplementedError('Calling an abstract method.')

    def update_metrics(self, eval_metrics, features, logits, labels, mode=None,
                       regularization_losses=None):
        raise NotImplementedError('Calling an abstract method.')

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None,
                              trainable_variables=None, train_op_fn=None, update_ops=None,
                              regularization_losses=None):
        raise NotImplementedError('Subclasses of Head must implement `create_estimator_spec()` '
                                  'or _create_tpu_estimator_spec().')


class HeadV2(Head):
    """TF 2's face on a head of `canned.head`; a subclass lists its metrics in `_metric_plan`
    and what updates them in `_metric_inputs`."""

    def _set_v2(self, loss_reduction, loss_fn, name):
        self._given_reduction = loss_reduction
        if loss_fn is not None:
            unexpected = set(fn_args(loss_fn)) - {'labels', 'logits', 'features',
                                                  'loss_reduction'}
            missing = {'labels', 'logits'} - set(fn_args(loss_fn))
            if missing:
                raise EstimatorError('loss_fn must contain argument: %s. Given arguments: %s'
                                     % (sorted(missing)[0], fn_args(loss_fn)))
            if unexpected:
                raise EstimatorError('loss_fn has unexpected args: %s' % sorted(unexpected))
        self._loss_fn = loss_fn
        self._name = name

    @property
    def name(self):
        return self._name

    @property
    def loss_reduction(self):
        return self._given_reduction

    def _summary_key(self, key):
        return '%s/%s' % (key, self._name) if self._name else key

    def _loss_of(self, labels, logits, features):
        if self._loss_fn is None:
            return super()._loss_of(labels, logits, features)
        kwargs = {'features': features} if 'features' in fn_args(self._loss_fn) else {}
        loss = self._loss_fn(labels=labels, logits=logits, **kwargs)
        expected = tf.concat([tf.shape(logits)[:-1], [self._loss_dimension()]], axis=0)
        check = tf.assert_equal(tf.shape(loss), expected, message=(
            'loss_fn must return Tensor of shape [D0, D1, ... DN, %d].'
            % self._loss_dimension()))
        with tf.control_dependencies([check]):
            return tf.identity(loss)

    def _loss_dimension(self):
        return 1

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        """The training loss, a scalar: the reduced weighted loss plus `regularization_losses`."""
        del mode  # The same in every mode.
        with tf.name_scope('losses'):
            logits = head_lib.checked_logits(logits, self.logits_dimension)
            loss = self.create_loss(features or {}, logits, labels).training_loss
            if regularization_losses is not None:
                loss += tf.add_n(list(regularization_losses))
            return loss

    def predictions(self, logits, keys=None):
        """dict key -> prediction of `logits` [batch, logits_dimension], all keys or `keys`."""
        with tf.name_scope('predictions'):
            predictions = self._predictions(
                head_lib.checked_logits(logits, self.logits_dimension))
        for key in keys or ():
            if key not in predictions:
                raise EstimatorError('Prediction key must be in PredictionKeys, given: %s.Valid '
                                     'prediction keys include %s.' % (key, list(predictions)))
        return {key: predictions[key] for key in keys} if keys else predictions

    def metrics(self, regularization_losses=None):
        """dict key -> a new Keras metric object, the head's evaluation metrics."""
        plan = [(MetricKeys.LOSS_MEAN, keras.metrics.Mean)] + self._metric_plan()
        if regularization_losses is not None:
            plan.append((MetricKeys.LOSS_REGULARIZATION, keras.metrics.Mean))
        with tf.name_scope('metrics'):
            return {self._summary_key(key): make(name=key) for key, make in plan}

    def update_metrics(self, eval_metrics, features, logits, labels, mode=None,
                       regularization_losses=None):
        """`eval_metrics` (of `metrics()`) updated with a batch's logits and labels."""
        del mode  # The same in every mode.
        logits = head_lib.checked_logits(logits, self.logits_dimension)
        return self._updated(eval_metrics, self.create_loss(features, logits, labels),
                             self._predictions(logits), regularization_losses)

    def _updated(self, eval_metrics, loss, predictions, regularization_losses):
        inputs = [(MetricKeys.LOSS_MEAN, _weighted(loss.unreduced_loss, loss.weights))]
        inputs += self._metric_inputs(loss, predictions)
        if regularization_losses is not None:
            inputs.append((MetricKeys.LOSS_REGULARIZATION,
                           (tf.add_n(list(regularization_losses)),)))
        for key, args in inputs:
            eval_metrics[self._summary_key(key)].update_state(*args)
        return eval_metrics

    def _eval_metric_ops(self, loss, predictions, regularization_losses):
        return self._updated(self.metrics(regularization_losses), loss, predictions,
                             regularization_losses)

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None,
                              trainable_variables=None, train_op_fn=None, update_ops=None,
                              regularization_losses=None):
        """The `EstimatorSpec` of `mode` for `logits` [batch, logits_dimension].

        In TRAIN, exactly one of `optimizer` (a Keras legacy optimizer, which updates
        `trainable_variables`) and `train_op_fn` (loss -> train op) makes the train op;
        `update_ops` run with it.
        """
        def make_train_op(loss):
            return v2_train_op(loss, optimizer, trainable_variables, train_op_fn, update_ops,
                             self._loss_reduction)
        return self._estimator_spec(features, mode, logits, labels, make_train_op,
                                    regularization_losses)

    def _write_summaries(self, loss, total_loss, regularization_losses):
        del loss  # TF 2's heads write the loss they reduced alone.
        tf.summary.scalar(self._summary_key(MetricKeys.LOSS), total_loss)
        if regularization_losses is not None:
            tf.summary.scalar(self._summary_key(MetricKeys.LOSS_REGULARIZATION),
                              tf.add_n(list(regularization_losses)))

    def _metric_plan(self):
        raise NotImplementedError

    def _metric_inputs(self, loss, predictions):
        raise NotImplementedError


def _weighted(values, weights):
    """(values, weights) of a Keras mean, the weights (1. or [batch, 1]) broadcast to the
    values' shape [batch, d]."""
    values = tf.cast(values, tf.float32)
    return values, weights * tf.ones_like(values)


def v1_reduction(loss_reduction):
    """TF 1's `tf.losses.Reduction` of a Keras (TF 2) or TF 1 `loss_reduction`."""
    return _V1_REDUCTIONS.get(loss_reduction, loss_reduction)


class _AccuracyBaseline(keras.metrics.Mean):
    """The accuracy of always predicting the more frequent class, of labels in [0, 1]:
    max(label mean, 1 - label mean)."""

    def result(self):
        mean = super().result()
        return tf.maximum(mean, 1. - mean)


def threshold_plan(keys, thresholds):
    """Accuracy, precision and recall at each threshold: [(key, make_metric)]."""
    plan = []
    for threshold in thresholds:
        plan += [(MetricKeys.ACCURACY_AT_THRESHOLD % threshold,
                  lambda name, t=threshold: keras.metrics.BinaryAccuracy(name, threshold=t)),
                 (MetricKeys.PRECISION_AT_THRESHOLD % threshold,
                  lambda name, t=threshold: keras.metrics.Precision(thresholds=t, name=name)),
                 (MetricKeys.RECALL_AT_THRESHOLD % threshold,
                  lambda name, t=threshold: keras.metrics.Recall(thresholds=t, name=name))]
    return [(keys(key), make) for key, make in plan]


class BinaryClassHead(HeadV2, head_lib.BinaryClassHead):
    """TF 2's `tf.estimator.BinaryClassHead`: as TF 1's logistic head (sigmoid cross-entropy
    of one logit), `thresholds` in (0, 1) adding accuracy, precision and recall at each."""

    def __init__(self, weight_column=None, thresholds=None, label_vocabulary=None,
                 loss_reduction=SUM_OVER_BATCH_SIZE, loss_fn=None, name=None):
        super().__init__(weight_column, label_vocabulary, v1_reduction(loss_reduction),
                         thresholds)
        self._set_v2(loss_reduction, loss_fn, name)

    def _metric_plan(self):
        return [(MetricKeys.ACCURACY, keras.metrics.Accuracy),
                (MetricKeys.PRECISION, keras.metrics.Precision),
                (MetricKeys.RECALL, keras.metrics.Recall),
                (MetricKeys.PREDICTION_MEAN, keras.metrics.Mean),
                (MetricKeys.LABEL_MEAN, keras.metrics.Mean),
                (MetricKeys.ACCURACY_BASELINE, _AccuracyBaseline),
                (MetricKeys.AUC, keras.metrics.AUC),
                (MetricKeys.AUC_PR, lambda name: keras.metrics.AUC(curve='PR', name=name))
                ] + threshold_plan(lambda key: key, self._thresholds)

    def _metric_inputs(self, loss, predictions):
        class_ids = predictions[PredictionKeys.CLASS_IDS]
        logistic = predictions[PredictionKeys.LOGISTIC]
        weights = loss.weights * tf.ones_like(logistic)
        inputs = [(MetricKeys.ACCURACY, (loss.labels, class_ids, weights)),
                  (MetricKeys.PRECISION, (loss.labels, class_ids, weights)),
                  (MetricKeys.RECALL, (loss.labels, class_ids, weights)),
                  (MetricKeys.PREDICTION_MEAN, (logistic, weights)),
                  (MetricKeys.LABEL_MEAN, (loss.labels, weights)),
                  (MetricKeys.ACCURACY_BASELINE, (loss.labels, weights)),
                  (MetricKeys.AUC, (loss.labels, logistic, weights)),
                  (MetricKeys.AUC_PR, (loss.labels, logistic, weights))]
        return inputs + [(key, (loss.labels, logistic, weights))
                         for key, _ in threshold_plan(lambda key: key, self._thresholds)]


class MultiClassHead(HeadV2, head_lib.MultiClassHead):
    """TF 2's `tf.estimator.MultiClassHead`: as TF 1's softmax head of `n_classes` > 2."""

    def __init__(self, n_classes, weight_column=None, label_vocabulary=None,
                 loss_reduction=SUM_OVER_BATCH_SIZE, loss_fn=None, name=None):
        if n_classes is None:
            raise EstimatorError('n_classes cannot be None')
        super().__init__(n_classes, weight_column, label_vocabulary,
                         v1_reduction(loss_reduction))
        self._set_v2(loss_reduction, loss_fn, name)

    def _metric_plan(self):
        return [(MetricKeys.ACCURACY, keras.metrics.Accuracy)]

    def _metric_inputs(self, loss, predictions):
        return [(MetricKeys.ACCURACY,
                 (loss.labels, predictions[PredictionKeys.CLASS_IDS], loss.weights))]


class RegressionHead(HeadV2, head_lib.RegressionHead):
    """TF 2's `tf.estimator.RegressionHead`: as TF 1's squared-error head; with
    `inverse_link_fn`, 'predictions' are `inverse_link_fn(logits)` beside the 'logits'."""

    def __init__(self, label_dimension=1, weight_column=None,
                 loss_reduction=SUM_OVER_BATCH_SIZE, loss_fn=None, inverse_link_fn=None,
                 name=None):
        super().__init__(label_dimension, weight_column, v1_reduction(loss_reduction))
        self._set_v2(loss_reduction, loss_fn, name)
        self._inverse_link_fn = inverse_link_fn

    def _loss_dimension(self):
        return self.logits_dimension

    def _predictions(self, logits):
        if self._inverse_link_fn is None:
            return super()._predictions(logits)
        return {PredictionKeys.PREDICTIONS: self._inverse_link_fn(logits),
                PredictionKeys.LOGITS: logits}

    def _metric_plan(self):
        return [(MetricKeys.PREDICTION_MEAN, keras.metrics.Mean),
                (MetricKeys.LABEL_MEAN, keras.metrics.Mean)]

    def _metric_inputs(self, loss, predictions):
        return [(MetricKeys.PREDICTION_MEAN,
                 _weighted(predictions[PredictionKeys.PREDICTIONS], loss.weights)),
                (MetricKeys.LABEL_MEAN, _weighted(loss.labels, loss.weights))]


class PoissonRegressionHead(RegressionHead):
    """TF 2's `tf.estimator.PoissonRegressionHead`: `tf.nn.log_poisson_loss` of the logits (the
    log of the rate), 'predictions' exp(logits); `compute_full_loss` adds Stirling's term."""

    def __init__(self, label_dimension=1, weight_column=None,
                 loss_reduction=SUM_OVER_BATCH_SIZE, compute_full_loss=True, name=None):
        def poisson_loss(labels, logits):
            return tf.nn.log_poisson_loss(targets=labels, log_input=logits,
                                          compute_full_loss=compute_full_loss)
        super().__init__(label_dimension, weight_column, loss_reduction, poisson_loss,
                         tf.exp, name)


class LogisticRegressionHead(RegressionHead):
    """TF 2's `tf.estimator.LogisticRegressionHead`: sigmoid cross-entropy against float labels
    in [0, 1], 'predictions' sigmoid(logits); a regression head's metrics and export."""

    def __init__(self, weight_column=None, loss_reduction=SUM_OVER_BATCH_SIZE, name=None):
        def logistic_loss(labels, logits):
            labels = head_lib.asserted_range(labels, 1, 'Labels must be in range [0, 1]')
            return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)
        super().__init__(1, weight_column, loss_reduction, logistic_loss, tf.sigmoid, name)


# The heads of a V2 classifier: (of 2 classes, of more).
CLASS_HEADS = (BinaryClassHead, MultiClassHead)


def v2_train_op(loss, optimizer, trainable_variables, train_op_fn, update_ops, loss_reduction):
    """TF 2's train op: `optimizer.get_updates(loss, trainable_variables)` or
    `train_op_fn(loss)`, with `update_ops`, under the root name scope 'training'."""
    for value, what in ((update_ops, 'update_ops'), (trainable_variables, 'trainable_variables')):
        if value is not None and not isinstance(value, (list, tuple)):
            raise EstimatorError('%s should be a list or a tuple. Given type: %s.'
                                 % (what, type(value)))
    with tf.name_scope(''), tf.name_scope('training'):
        if optimizer is not None:
            if train_op_fn is not None:
                raise EstimatorError('train_op_fn and optimizer cannot both be set.')
            if not isinstance(optimizer, keras.optimizers.legacy.Optimizer):
                raise EstimatorError('The given optimizer is not a tf.keras.optimizers.'
                                     'Optimizer instance. Received optimizer of type %s'
                                     % type(optimizer))
            if trainable_variables is None:
                raise EstimatorError('trainable_variables cannot be None. Given None')
            replicas = tf.distribute.get_strategy().num_replicas_in_sync
            if loss_reduction == tf.losses.Reduction.SUM_OVER_BATCH_SIZE and replicas > 1:
                loss *= 1. / replicas
            train_op = optimizer.get_updates(loss, list(trainable_variables))[0]
        elif train_op_fn is not None:
            train_op = train_op_fn(loss)
        else:
            raise EstimatorError('train_op_fn and optimizer cannot both be None.')
        return tf.group(train_op, *update_ops) if update_ops else train_op
