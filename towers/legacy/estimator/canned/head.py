"""The heads of TF 1.15's canned estimators: from logits [batch, logits_dimension] to the
`EstimatorSpec` of each mode (predictions, loss, train op, eval metrics, export outputs).

`classification_head(n_classes, ...)` is the logistic head for two classes (one logit per
example, sigmoid cross-entropy) and the softmax head for more (sparse softmax cross-entropy);
`RegressionHead(label_dimension, ...)` is the squared-error head. As in TF 1.15:
  * the training loss is `tf.losses.compute_weighted_loss` of the per-example loss with the
    `weight_column`'s weights, reduced by `loss_reduction` (the v1 estimators' default is SUM:
    the weighted sum over the batch, not the mean);
  * training writes the summaries 'loss' and, for SUM, 'average_loss' (the loss over the sum
    of the weights);
  * EVAL's metrics are those of `MetricKeys`; the Estimator adds 'loss' itself;
  * PREDICT exports 'serving_default' and 'classification' (ClassificationOutput: probabilities
    and class names) or 'regression' (RegressionOutput), and 'predict' (every prediction); the
    logistic head adds 'regression' (the logistic).
"""
import collections

from towers.compat import tf
from towers.legacy.estimator.canned import metrics
from towers.legacy.estimator.canned.keys import MetricKeys, PredictionKeys, SignatureKeys
from towers.legacy.estimator.export import (ClassificationOutput, PredictOutput,
                                            RegressionOutput)
from towers.legacy.estimator.spec import EstimatorError, EstimatorSpec, ModeKeys

# training_loss: the reduced weighted loss, a scalar; unreduced_loss: [batch, logits_dimension]
# before weights; weights: 1. or [batch, 1 or logits_dimension]; labels: as the loss saw them
# (class ids or floats, [batch, label dimension]).
LossSpec = collections.namedtuple('LossSpec',
                                  ['training_loss', 'unreduced_loss', 'weights', 'labels'])


def classification_head(n_classes, weight_column=None, label_vocabulary=None,
                        loss_reduction=tf.losses.Reduction.SUM, classes=None):
    """The head of a classifier of `n_classes`: `BinaryClassHead` for 2, `MultiClassHead` above
    (or the pair `classes` of TF 2's heads)."""
    binary, multi = classes or (BinaryClassHead, MultiClassHead)
    if n_classes == 2:
        return binary(weight_column=weight_column, label_vocabulary=label_vocabulary,
                      loss_reduction=loss_reduction)
    return multi(n_classes, weight_column=weight_column, label_vocabulary=label_vocabulary,
                 loss_reduction=loss_reduction)


class Head:
    """What every head shares; subclasses say how logits become predictions, labels, a loss and
    metrics.

    Args:
      logits_dimension: int, the size of the logits' last dimension.
      label_dimension: int, the size of the labels' last dimension.
      weight_column: None, a feature key, or a `tf.feature_column.numeric_column` whose value
        multiplies each example's loss.
      loss_reduction: a `tf.losses.Reduction` other than NONE.
    """

    def __init__(self, logits_dimension, label_dimension, weight_column, loss_reduction):
        if (loss_reduction not in tf.losses.Reduction.all()
                or loss_reduction == tf.losses.Reduction.NONE):
            raise EstimatorError('Invalid loss_reduction: %r; expected one of tf.losses.Reduction '
                                 'other than NONE' % (loss_reduction,))
        self.logits_dimension = logits_dimension
        self._label_dimension = label_dimension
        self._weight_column = as_weight_column(weight_column)
        self._loss_reduction = loss_reduction
        self._name = None

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None,
                              train_op_fn=None):
        """The `EstimatorSpec` of `mode` for `logits` [batch, logits_dimension].

        In TRAIN, exactly one of `optimizer` (whose `minimize` steps the global step) and
        `train_op_fn` (loss -> train op) makes the train op; the `UPDATE_OPS` run with it.
        """
        return self._estimator_spec(features, mode, logits, labels,
                                    lambda loss: _train_op(loss, optimizer, train_op_fn))

    def _estimator_spec(self, features, mode, logits, labels, make_train_op,
                        regularization_losses=None):
        """The spec of every mode; `make_train_op(loss)` the train op, `regularization_losses`
        None or scalars added to the loss (TF 2's heads)."""
        with tf.name_scope(self._name, 'head'):
            logits = checked_logits(logits, self.logits_dimension)
            with tf.name_scope('predictions'):
                predictions = self._predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode, predictions=predictions,
                                     export_outputs=self._export_outputs(predictions))
            loss = self.create_loss(features, logits, labels)
            total_loss = loss.training_loss
            if regularization_losses is not None:
                total_loss += tf.add_n(list(regularization_losses))
            if mode == ModeKeys.EVAL:
                with tf.name_scope('metrics'):
                    metric_ops = self._eval_metric_ops(loss, predictions, regularization_losses)
                return EstimatorSpec(mode, predictions=predictions, loss=total_loss,
                                     eval_metric_ops=metric_ops)
            train_op = make_train_op(total_loss)
        with tf.name_scope(''):
            self._write_summaries(loss, total_loss, regularization_losses)
        return EstimatorSpec(mode, predictions=predictions, loss=total_loss, train_op=train_op)

    def _eval_metric_ops(self, loss, predictions, regularization_losses):
        del regularization_losses  # TF 1's heads have none.
        return self._metrics(loss, predictions)

    def _write_summaries(self, loss, total_loss, regularization_losses):
        """'loss' and, for SUM, 'average_loss' (the loss over the sum of the weights)."""
        del regularization_losses  # TF 1's heads have none.
        tf.summary.scalar(MetricKeys.LOSS, total_loss)
        if self._loss_reduction == tf.losses.Reduction.SUM:
            tf.summary.scalar(MetricKeys.LOSS_MEAN, loss.training_loss / tf.reduce_sum(
                loss.weights * tf.ones_like(loss.unreduced_loss)))

    def create_loss(self, features, logits, labels):
        """The `LossSpec` of `logits` against `labels` ([batch] or [batch, label dimension])."""
        labels = self._processed_labels(_checked_labels(labels, logits, self._label_dimension))
        unreduced_loss = self._loss_of(labels, logits, features)
        weights = self._weights(features)
        training_loss = tf.losses.compute_weighted_loss(unreduced_loss, weights=weights,
                                                        reduction=self._loss_reduction)
        return LossSpec(training_loss, unreduced_loss, weights, labels)

    def _loss_of(self, labels, logits, features):
        """The unreduced loss [batch, loss dimension] (a TF 2 head's `loss_fn` may read
        `features`)."""
        del features  # The TF 1 heads' losses are of labels and logits alone.
        return self._unreduced_loss(labels, logits)

    def _weights(self, features):
        if self._weight_column is None:
            return 1.
        with tf.name_scope('weights'):
            return tf.feature_column.input_layer(features, [self._weight_column])

    def _predictions(self, logits):
        raise NotImplementedError

    def _export_outputs(self, predictions):
        raise NotImplementedError

    def _processed_labels(self, labels):
        raise NotImplementedError

    def _unreduced_loss(self, labels, logits):
        raise NotImplementedError

    def _metrics(self, loss, predictions):
        raise NotImplementedError


class _ClassHead(Head):
    """What the logistic and softmax heads share: class ids and names, their export."""

    def __init__(self, n_classes, logits_dimension, weight_column, label_vocabulary,
                 loss_reduction):
        super().__init__(logits_dimension, 1, weight_column, loss_reduction)
        if weight_column is not None and tuple(self._weight_column.shape) != (1,):
            raise EstimatorError('weight_column %r of a classifier must have shape (1,), got %s'
                                 % (self._weight_column.key, self._weight_column.shape))
        if label_vocabulary is not None:
            if not isinstance(label_vocabulary, (list, tuple)):
                raise EstimatorError('label_vocabulary should be a list or a tuple of strings, '
                                     'got %s' % type(label_vocabulary).__name__)
            if len(label_vocabulary) != n_classes:
                raise EstimatorError('label_vocabulary has %d entries; n_classes is %d'
                                     % (len(label_vocabulary), n_classes))
        self._n_classes = n_classes
        self._label_vocabulary = label_vocabulary

    def _class_predictions(self, logits, class_logits):
        """class_ids, classes [batch, 1] and all_class_ids, all_classes [batch, n_classes] of
        the argmax of `class_logits` [batch, n_classes]."""
        class_ids = tf.expand_dims(tf.argmax(class_logits, axis=-1), -1)
        if self._label_vocabulary:
            names = tf.constant(list(self._label_vocabulary))
            classes = lookup_table(tf.range(self._n_classes, dtype=tf.int64), names, 'UNK',
                                    'class_string_lookup').lookup(class_ids)
        else:
            names = tf.strings.as_string(tf.range(self._n_classes))
            classes = tf.strings.as_string(class_ids, name='str_classes')
        batch = tf.shape(logits)[:1]
        tile = tf.concat([batch, [1]], axis=0)
        return {
            PredictionKeys.CLASS_IDS: class_ids,
            PredictionKeys.CLASSES: classes,
            PredictionKeys.ALL_CLASS_IDS: tf.tile(tf.range(self._n_classes)[None], tile),
            PredictionKeys.ALL_CLASSES: tf.tile(names[None], tile),
        }

    def _label_ids(self, labels):
        """`labels` [batch, 1] as class ids, looked up in the vocabulary when there is one."""
        if self._label_vocabulary is None:
            if labels.dtype == tf.string:
                raise EstimatorError('Labels are strings: give the classifier their names as '
                                     'label_vocabulary')
            return labels
        if labels.dtype != tf.string:
            raise EstimatorError('Labels dtype should be string if there is a label_vocabulary; '
                                 'got %s' % labels.dtype.name)
        return lookup_table(tf.constant(list(self._label_vocabulary)),
                             tf.range(self._n_classes, dtype=tf.int64), -1,
                             'class_id_lookup').lookup(labels)

    def _export_outputs(self, predictions):
        classification = ClassificationOutput(
            scores=predictions[PredictionKeys.PROBABILITIES],
            classes=predictions[PredictionKeys.ALL_CLASSES])
        return {SignatureKeys.DEFAULT: classification,
                SignatureKeys.CLASSIFY: classification,
                SignatureKeys.PREDICT: PredictOutput(predictions)}


class BinaryClassHead(_ClassHead):
    """Two classes from one logit per example: sigmoid cross-entropy against labels in [0, 1]
    (or their names in `label_vocabulary`); metrics for each of `thresholds` in (0, 1)."""

    def __init__(self, weight_column=None, label_vocabulary=None,
                 loss_reduction=tf.losses.Reduction.SUM, thresholds=None):
        super().__init__(2, 1, weight_column, label_vocabulary, loss_reduction)
        self._thresholds = tuple(thresholds or ())
        for threshold in self._thresholds:
            if not 0. < threshold < 1.:
                raise EstimatorError('thresholds not in (0, 1): %s' % (self._thresholds,))

    def _predictions(self, logits):
        two_class_logits = tf.concat([tf.zeros_like(logits), logits], axis=-1,
                                     name='two_class_logits')
        predictions = {
            PredictionKeys.LOGITS: logits,
            PredictionKeys.LOGISTIC: tf.sigmoid(logits, name=PredictionKeys.LOGISTIC),
            PredictionKeys.PROBABILITIES: tf.nn.softmax(two_class_logits,
                                                        name=PredictionKeys.PROBABILITIES),
        }
        predictions.update(self._class_predictions(logits, two_class_logits))
        return predictions

    def _export_outputs(self, predictions):
        outputs = super()._export_outputs(predictions)
        outputs[SignatureKeys.REGRESS] = RegressionOutput(
            value=predictions[PredictionKeys.LOGISTIC])
        return outputs

    def _processed_labels(self, labels):
        labels = tf.cast(self._label_ids(labels), tf.float32)
        return asserted_range(labels, 1, 'Labels must be in [0, 1]')

    def _unreduced_loss(self, labels, logits):
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits)

    def _metrics(self, loss, predictions):
        return metrics.binary_class_metrics(
            loss.labels, predictions[PredictionKeys.LOGISTIC],
            predictions[PredictionKeys.CLASS_IDS], loss.weights, loss.unreduced_loss,
            self._thresholds)


class MultiClassHead(_ClassHead):
    """`n_classes` > 2 classes from as many logits: softmax cross-entropy against integer labels
    in [0, n_classes) (or their names in `label_vocabulary`)."""

    def __init__(self, n_classes, weight_column=None, label_vocabulary=None,
                 loss_reduction=tf.losses.Reduction.SUM):
        if not isinstance(n_classes, int) or n_classes <= 2:
            raise EstimatorError('n_classes must be > 2: %r' % (n_classes,))
        super().__init__(n_classes, n_classes, weight_column, label_vocabulary, loss_reduction)

    def _predictions(self, logits):
        predictions = {
            PredictionKeys.LOGITS: logits,
            PredictionKeys.PROBABILITIES: tf.nn.softmax(logits,
                                                        name=PredictionKeys.PROBABILITIES),
        }
        predictions.update(self._class_predictions(logits, logits))
        return predictions

    def _processed_labels(self, labels):
        if self._label_vocabulary is None and not labels.dtype.is_integer:
            raise EstimatorError('Labels dtype should be integer (class ids in [0, %d)); got %s'
                                 % (self._n_classes, labels.dtype.name))
        return asserted_range(self._label_ids(labels), self._n_classes - 1,
                               'Labels must be in [0, n_classes - 1]')

    def _unreduced_loss(self, labels, logits):
        return tf.expand_dims(tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.squeeze(labels, axis=-1), logits=logits), -1)

    def _metrics(self, loss, predictions):
        return metrics.multi_class_metrics(loss.labels, predictions[PredictionKeys.CLASS_IDS],
                                           loss.weights, loss.unreduced_loss)


class RegressionHead(Head):
    """`label_dimension` values per example: squared error against float labels; the weights
    may be one per example or one per label value."""

    def __init__(self, label_dimension=1, weight_column=None,
                 loss_reduction=tf.losses.Reduction.SUM):
        if not isinstance(label_dimension, int) or label_dimension < 1:
            raise EstimatorError('Invalid label_dimension %r: expected an int >= 1'
                                 % (label_dimension,))
        super().__init__(label_dimension, label_dimension, weight_column, loss_reduction)
        if (weight_column is not None
                and tuple(self._weight_column.shape) not in ((1,), (label_dimension,))):
            raise EstimatorError('weight_column %r must have shape (1,) or (%d,), got %s'
                                 % (self._weight_column.key, label_dimension,
                                    self._weight_column.shape))

    def _predictions(self, logits):
        return {PredictionKeys.PREDICTIONS: logits}

    def _export_outputs(self, predictions):
        regression = RegressionOutput(
            value=predictions[PredictionKeys.PREDICTIONS])
        return {SignatureKeys.DEFAULT: regression,
                SignatureKeys.REGRESS: regression,
                SignatureKeys.PREDICT: PredictOutput(predictions)}

    def _processed_labels(self, labels):
        return tf.cast(labels, tf.float32)

    def _unreduced_loss(self, labels, logits):
        return tf.squared_difference(logits, labels)

    def _metrics(self, loss, predictions):
        return metrics.regression_metrics(loss.labels, predictions[PredictionKeys.PREDICTIONS],
                                          loss.weights, loss.unreduced_loss)


def as_weight_column(weight_column):
    """None, or `weight_column` as a numeric column (a key becomes one of shape (1,))."""
    if weight_column is None:
        return None
    if isinstance(weight_column, str):
        return tf.feature_column.numeric_column(weight_column, shape=(1,))
    if type(weight_column) is not type(tf.feature_column.numeric_column('weight')):
        raise EstimatorError('weight_column must be a feature key or a '
                             'tf.feature_column.numeric_column, got %s'
                             % type(weight_column).__name__)
    return weight_column


def checked_logits(logits, dimension):
    """`logits` as float32 [batch, ..., dimension]."""
    logits = tf.cast(logits, tf.float32, name='logits')
    if logits.shape.ndims is not None and (logits.shape.ndims < 2
                                           or logits.shape[-1] not in (None, dimension)):
        raise EstimatorError('logits shape must be [D0, D1, ... DN, %d], got %s'
                             % (dimension, logits.shape))
    return logits


def _checked_labels(labels, logits, dimension):
    """`labels` as [batch, ..., dimension] like `logits` (a missing last dimension of 1 added)."""
    if labels is None:
        raise EstimatorError('You must provide a labels Tensor. Given: None. Check that your '
                             'input_fn returns (features, labels).')
    with tf.name_scope('labels'):
        labels = tf.convert_to_tensor_or_sparse_tensor(labels)
        if isinstance(labels, tf.SparseTensor):
            raise EstimatorError('SparseTensor labels are not supported: labels must be a '
                                 'Tensor of shape [batch_size, %d]' % dimension)
        if None not in (labels.shape.ndims, logits.shape.ndims) and (
                labels.shape.ndims == logits.shape.ndims - 1):
            labels = tf.expand_dims(labels, -1)
        if labels.shape.ndims is not None and labels.shape[-1] not in (None, dimension):
            raise EstimatorError('Mismatched label shape: expected labels dimension=%d, received '
                                 '%s. Check n_classes or label_dimension, and the shape of '
                                 'the labels.' % (dimension, labels.shape))
        expected = tf.concat([tf.shape(logits)[:-1], [dimension]], axis=0)
        check = tf.assert_equal(expected, tf.shape(labels), message=(
            'labels shape must be [D0, D1, ... DN, %d]' % dimension))
        with tf.control_dependencies([check]):
            return tf.identity(labels)


def asserted_range(labels, highest, message):
    with tf.name_scope('assert_range'):
        checks = [tf.assert_less_equal(labels, tf.cast(highest, labels.dtype), message=message),
                  tf.assert_non_negative(labels, message=message)]
        with tf.control_dependencies(checks):
            return tf.identity(labels)


def lookup_table(keys, values, default, name):
    return tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(keys, values),
                                     default, name=name)


def _train_op(loss, optimizer, train_op_fn):
    if (optimizer is None) == (train_op_fn is None):
        raise EstimatorError('A head in TRAIN needs exactly one of optimizer and train_op_fn; '
                             'got %s' % ('both' if optimizer is not None else 'neither'))
    if optimizer is not None:
        train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    else:
        train_op = train_op_fn(loss)
    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    return tf.group(train_op, *update_ops) if update_ops else train_op
