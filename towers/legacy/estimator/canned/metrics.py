"""The evaluation metrics of the canned heads, TF 1.15's: dicts `MetricKeys` name -> (value,
update op) of `tf.metrics`, weighted by the examples' weights (1. or [batch, 1]).

'auc' and 'auc_precision_recall' are `tf.metrics.auc` as TF 1.15 computed them: the trapezoidal
rule over 200 thresholds evenly spaced on [0, 1], so examples whose logistic falls between the
same two thresholds count as ties; they differ from the exact area by at most half the share of
(positive, negative) pairs that tie so.
"""
from towers.compat import tf
from towers.legacy.estimator.canned.keys import MetricKeys


def regression_metrics(labels, predictions, weights, unreduced_loss):
    """'average_loss', 'prediction/mean', 'label/mean' of [batch, label_dimension] tensors."""
    return {
        MetricKeys.LOSS_MEAN: _mean(unreduced_loss, weights, MetricKeys.LOSS_MEAN),
        MetricKeys.PREDICTION_MEAN: _mean(predictions, weights, MetricKeys.PREDICTION_MEAN),
        MetricKeys.LABEL_MEAN: _mean(labels, weights, MetricKeys.LABEL_MEAN),
    }


def multi_class_metrics(label_ids, class_ids, weights, unreduced_loss):
    """'average_loss' and 'accuracy' of class ids [batch, 1]."""
    return {
        MetricKeys.LOSS_MEAN: _mean(unreduced_loss, weights, MetricKeys.LOSS_MEAN),
        MetricKeys.ACCURACY: tf.metrics.accuracy(label_ids, class_ids, weights=weights,
                                                 name=MetricKeys.ACCURACY),
    }


def binary_class_metrics(labels, logistic, class_ids, weights, unreduced_loss, thresholds):
    """The logistic head's metrics, of labels and logistic [batch, 1] in [0, 1] and class ids
    [batch, 1]; accuracy, precision and recall at each of `thresholds` besides (at 0.5)."""
    labels_mean = _mean(labels, weights, MetricKeys.LABEL_MEAN)
    metric_ops = {
        MetricKeys.LOSS_MEAN: _mean(unreduced_loss, weights, MetricKeys.LOSS_MEAN),
        MetricKeys.ACCURACY: tf.metrics.accuracy(labels, class_ids, weights=weights,
                                                 name=MetricKeys.ACCURACY),
        MetricKeys.PRECISION: tf.metrics.precision(labels, class_ids, weights=weights,
                                                   name=MetricKeys.PRECISION),
        MetricKeys.RECALL: tf.metrics.recall(labels, class_ids, weights=weights,
                                             name=MetricKeys.RECALL),
        MetricKeys.PREDICTION_MEAN: _mean(logistic, weights, MetricKeys.PREDICTION_MEAN),
        MetricKeys.LABEL_MEAN: labels_mean,
        MetricKeys.ACCURACY_BASELINE: _accuracy_baseline(labels_mean),
        MetricKeys.AUC: tf.metrics.auc(labels, logistic, weights=weights, curve='ROC',
                                       name=MetricKeys.AUC),
        MetricKeys.AUC_PR: tf.metrics.auc(labels, logistic, weights=weights, curve='PR',
                                          name=MetricKeys.AUC_PR),
    }
    for threshold in thresholds:
        key = MetricKeys.ACCURACY_AT_THRESHOLD % threshold
        metric_ops[key] = tf.metrics.accuracy(
            labels, tf.cast(logistic >= threshold, tf.float32), weights=weights, name=key)
        for key, metric in ((MetricKeys.PRECISION_AT_THRESHOLD % threshold,
                             tf.metrics.precision_at_thresholds),
                            (MetricKeys.RECALL_AT_THRESHOLD % threshold,
                             tf.metrics.recall_at_thresholds)):
            value, update = metric(labels, logistic, [threshold], weights=weights, name=key)
            metric_ops[key] = (tf.squeeze(value), tf.squeeze(update))
    return metric_ops


def _mean(values, weights, name):
    return tf.metrics.mean(tf.cast(values, tf.float32), weights=weights, name=name)


def _accuracy_baseline(labels_mean):
    """The accuracy of always predicting the more frequent class: max(mean, 1 - mean)."""
    with tf.name_scope(None, 'accuracy_baseline', labels_mean):
        value, update = labels_mean
        return (tf.maximum(value, 1. - value, name='value'),
                tf.maximum(update, 1. - update, name='update_op'))
