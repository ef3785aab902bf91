"""TF 2.15's `tf.estimator.MultiLabelHead` and `tf.estimator.MultiHead` (under `--tf2`), on the
heads of `canned.head` and `canned.head_v2`:

  * `MultiLabelHead(n_classes)`: zero or more of `n_classes` classes per example; the sigmoid
    cross-entropy of each logit against multi-hot labels [batch, n_classes] (or a SparseTensor
    of class ids, or of names in `label_vocabulary`), averaged over the classes. Evaluation:
    'average_loss', 'auc', 'auc_precision_recall', accuracy, precision and recall at each of
    `thresholds`, and 'probability_mean/class<i>', 'auc/class<i>',
    'auc_precision_recall/class<i>' (a name for 'class<i>' with a vocabulary) for each of
    `classes_for_class_based_metrics`;
  * `MultiHead(heads, head_weights)`: named heads on consecutive slices of one logits tensor
    (or on a dict of logits by head name), with a dict of labels by head name: the loss is the
    (weighted) sum of the heads' losses; evaluation has every head's metrics and the mean of
    each head's loss as 'loss/<name>'; predictions are keyed (name, key); the exports are the
    first head's 'serving_default', each head's '<name>' and '<name>/<signature>', and one
    'predict' of every head's predictions as '<name>/<key>'.
"""
from towers.compat import keras, tf
from towers.legacy.estimator.canned import head as head_lib
from towers.legacy.estimator.canned import head_v2
from towers.legacy.estimator.canned.keys import MetricKeys, PredictionKeys, SignatureKeys
from towers.legacy.estimator.export import ClassificationOutput, PredictOutput
from towers.legacy.estimator.spec import EstimatorError, EstimatorSpec, ModeKeys

# The prefixes of the metric keys of one class: 'probability_mean/class0', ...
_CLASS_METRICS = ('probability_mean', MetricKeys.AUC, MetricKeys.AUC_PR)


def _auc_pr(name):
    return keras.metrics.AUC(curve='PR', name=name)


class MultiLabelHead(head_v2.HeadV2, head_lib.Head):
    """TF 2's `tf.estimator.MultiLabelHead`: `n_classes` > 1 independent binary labels per
    example from as many logits; predictions 'logits', 'probabilities' (the sigmoids) and
    'classes' (every class name) [batch, n_classes]."""

    def __init__(self, n_classes, weight_column=None, thresholds=None, label_vocabulary=None,
                 loss_reduction=head_v2.SUM_OVER_BATCH_SIZE, loss_fn=None,
                 classes_for_class_based_metrics=None, name=None):
        if n_classes is None or n_classes < 2:
            raise EstimatorError('n_classes must be > 1 for multi-label classification. '
                                 'Given: %s' % (n_classes,))
        self._thresholds = tuple(thresholds or ())
        for threshold in self._thresholds:
            if not 0. < threshold < 1.:
                raise EstimatorError('thresholds must be in (0, 1) range. Given: %s'
                                     % threshold)
        if label_vocabulary is not None:
            if not isinstance(label_vocabulary, (list, tuple)):
                raise EstimatorError('label_vocabulary must be a list or tuple. Given type: %s'
                                     % type(label_vocabulary))
            if len(label_vocabulary) != n_classes:
                raise EstimatorError('Length of label_vocabulary must be n_classes (%d). '
                                     'Given: %d' % (n_classes, len(label_vocabulary)))
        super().__init__(n_classes, n_classes, weight_column,
                         head_v2.v1_reduction(loss_reduction))
        self._set_v2(loss_reduction, loss_fn, name)
        self._n_classes = n_classes
        self._label_vocabulary = label_vocabulary
        self._class_ids = self._metric_class_ids(tuple(classes_for_class_based_metrics or ()))

    def _metric_class_ids(self, classes):
        """The class ids of `classes_for_class_based_metrics` (ids, or names of the
        vocabulary)."""
        if classes and isinstance(classes[0], str):
            if not self._label_vocabulary:
                raise EstimatorError('label_vocabulary must be provided when '
                                     'classes_for_class_based_metrics are strings.')
            return tuple(list(self._label_vocabulary).index(name) for name in classes)
        for class_id in classes:
            if not 0 <= class_id < self._n_classes:
                raise EstimatorError('All classes_for_class_based_metrics must be in range '
                                     '[0, %d]. Given: %s' % (self._n_classes - 1, class_id))
        return classes

    def _class_keys(self, class_id):
        """The keys of the metrics of one class: probability mean, AUC, PR AUC."""
        label = ('class%d' % class_id if self._label_vocabulary is None
                 else self._label_vocabulary[class_id])
        return tuple('%s/%s' % (prefix, label) for prefix in _CLASS_METRICS)

    def create_loss(self, features, logits, labels):
        return super().create_loss(features, logits, self._multi_hot(labels))

    def _multi_hot(self, labels):
        """Multi-hot int64 labels [batch, n_classes] of a SparseTensor of class ids (or names);
        dense labels as they are."""
        if not isinstance(labels, tf.SparseTensor):
            return labels
        ids = labels.values
        if ids.dtype == tf.string and self._label_vocabulary:
            table = head_lib.lookup_table(
                tf.constant(list(self._label_vocabulary)),
                tf.range(self._n_classes, dtype=tf.int64), -1, 'class_id_lookup')
            ids = table.lookup(ids)
        elif not ids.dtype.is_integer:
            raise EstimatorError('Labels dtype should be integer. Instead got %s.' % ids.dtype)
        else:
            ids = head_lib.asserted_range(
                ids, self._n_classes - 1,
                'labels must be an integer SparseTensor with values in [0, %d)'
                % self._n_classes)
        indicator = tf.sparse.to_indicator(
            tf.SparseTensor(labels.indices, ids, labels.dense_shape), self._n_classes)
        return tf.cast(indicator, tf.int64)

    def _processed_labels(self, labels):
        return head_lib.asserted_range(
            labels, 1, 'labels must be an integer indicator Tensor with values in [0, 1]')

    def _unreduced_loss(self, labels, logits):
        return tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(
            labels=tf.cast(labels, logits.dtype), logits=logits), axis=-1, keepdims=True)

    def _predictions(self, logits):
        names = (tf.constant(list(self._label_vocabulary)) if self._label_vocabulary
                 else tf.strings.as_string(tf.range(self._n_classes)))
        return {PredictionKeys.LOGITS: logits,
                PredictionKeys.PROBABILITIES: tf.sigmoid(logits,
                                                         name=PredictionKeys.PROBABILITIES),
                PredictionKeys.CLASSES: tf.tile(names[None], [tf.shape(logits)[0], 1])}

    def _export_outputs(self, predictions):
        classification = ClassificationOutput(scores=predictions[PredictionKeys.PROBABILITIES],
                                              classes=predictions[PredictionKeys.CLASSES])
        return {SignatureKeys.DEFAULT: classification, SignatureKeys.CLASSIFY: classification,
                SignatureKeys.PREDICT: PredictOutput(predictions)}

    def _label_plan(self):
        """The metrics of every class together: AUCs and the metrics at `thresholds`."""
        return [(MetricKeys.AUC, keras.metrics.AUC), (MetricKeys.AUC_PR, _auc_pr)
                ] + head_v2.threshold_plan(lambda key: key, self._thresholds)

    def _metric_plan(self):
        plan = self._label_plan()
        for class_id in self._class_ids:
            plan += zip(self._class_keys(class_id), (keras.metrics.Mean, keras.metrics.AUC,
                                                      _auc_pr))
        return plan

    def _metric_inputs(self, loss, predictions):
        probabilities = predictions[PredictionKeys.PROBABILITIES]
        labels = tf.cast(loss.labels, tf.float32)
        weights = loss.weights * tf.ones_like(probabilities)
        inputs = [(key, (labels, probabilities, weights)) for key, _ in self._label_plan()]
        for class_id in self._class_ids:
            class_probabilities = probabilities[..., class_id:class_id + 1]
            class_labels = labels[..., class_id:class_id + 1]
            class_weights = loss.weights * tf.ones_like(class_probabilities)
            mean, auc, auc_pr = self._class_keys(class_id)
            inputs += [(mean, (class_probabilities, class_weights)),
                       (auc, (class_labels, class_probabilities, class_weights)),
                       (auc_pr, (class_labels, class_probabilities, class_weights))]
        return inputs

    def update_metrics(self, eval_metrics, features, logits, labels,
                       regularization_losses=None):
        """`eval_metrics` (of `metrics()`) updated with a batch's logits and labels."""
        return super().update_metrics(eval_metrics, features, logits, labels,
                                      regularization_losses=regularization_losses)


class MultiHead(head_v2.Head):
    """TF 2's `tf.estimator.MultiHead`: several named heads trained together.

    Args:
      heads: heads, each with a `name`; the logits [batch, sum of their logits dimensions]
        are theirs in this order.
      head_weights: None, or a weight per head multiplying its loss.
    """

    def __init__(self, heads, head_weights=None):
        if not heads:
            raise EstimatorError('Must specify heads. Given: %s' % (heads,))
        if head_weights and len(head_weights) != len(heads):
            raise EstimatorError('heads and head_weights must have the same size. Given '
                                 'len(heads): %d. Given len(head_weights): %d.'
                                 % (len(heads), len(head_weights)))
        for head in heads:
            if head.name is None:
                raise EstimatorError('All given heads must have name specified. Given: %s'
                                     % head)
        self._heads = tuple(heads)
        self._head_weights = tuple(head_weights or ())

    @property
    def name(self):
        return '_'.join(head.name for head in self._heads)

    @property
    def logits_dimension(self):
        return sum(head.logits_dimension for head in self._heads)

    @property
    def loss_reduction(self):
        reductions = [head.loss_reduction for head in self._heads]
        if len(set(reductions)) > 1:
            raise EstimatorError('The loss_reduction must be the same for different heads. '
                                 'Given: %s' % reductions)
        return reductions[0]

    def _split(self, logits, labels=None):
        """dict head name -> its logits, of a dict of them or of one tensor [batch, sum of the
        heads' logits dimensions]; `labels` (if given) checked to be a dict of every head's."""
        names = [head.name for head in self._heads]
        if isinstance(logits, dict):
            missing = sorted(set(names) - set(logits))
            if missing:
                raise EstimatorError('logits has missing values for head(s): %s' % missing)
        else:
            logits = self._split_logits(logits)
        if labels is not None:
            if not isinstance(labels, dict):
                raise EstimatorError('labels must be a dict. Given: %s' % (labels,))
            missing = sorted(set(names) - set(labels))
            if missing:
                raise EstimatorError('labels has missing values for head(s): %s' % missing)
        return logits

    def _split_logits(self, logits):
        dimensions = [head.logits_dimension for head in self._heads]
        with tf.name_scope('split_logits'):
            logits = tf.convert_to_tensor(logits)
            last = logits.shape.as_list()[-1]
            if last is not None and last != sum(dimensions):
                raise EstimatorError(
                    'Could not split logits of shape %r among the heads with individual '
                    'logits dimensions: %r. The last dimension of the logits tensor should '
                    'equal %d but is %d.' % (logits.shape.as_list(), dimensions, last,
                                             sum(dimensions)))
            return dict(zip([head.name for head in self._heads],
                            tf.split(logits, dimensions, axis=-1)))

    def _head_losses(self, labels, logits, features, mode):
        return [head.loss(labels=labels[head.name], logits=logits[head.name],
                          features=features, mode=mode) for head in self._heads]

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        """The sum of the heads' losses (each times its weight) and `regularization_losses`."""
        losses = self._head_losses(labels, self._split(logits, labels), features, mode)
        with tf.name_scope('merge_losses'):
            if self._head_weights:
                losses = [loss * weight for loss, weight in zip(losses, self._head_weights)]
            loss = tf.add_n(losses)
            if regularization_losses is not None:
                loss += tf.add_n(list(regularization_losses))
            return loss

    def predictions(self, logits, keys=None):
        """dict (head name, key) -> every prediction of every head (TF 2.15 ignored `keys`)."""
        del keys
        logits = self._split(logits)
        with tf.name_scope('merge_pred'):
            return {(head.name, key): value for head in self._heads
                    for key, value in head.predictions(logits[head.name]).items()}

    def metrics(self, regularization_losses=None):
        """dict key -> a Keras mean of each head's loss ('loss/<name>') and of
        `regularization_losses`; `update_metrics` adds the heads' own."""
        eval_metrics = {}
        if regularization_losses is not None:
            key = '%s/%s' % (MetricKeys.LOSS_REGULARIZATION, self.name)
            eval_metrics[key] = keras.metrics.Mean(name=MetricKeys.LOSS_REGULARIZATION)
        with tf.name_scope('merge_eval'):
            for head in self._heads:
                key = '%s/%s' % (MetricKeys.LOSS, head.name)
                eval_metrics[key] = keras.metrics.Mean(name=key)
        return eval_metrics

    def update_metrics(self, eval_metrics, features, logits, labels,
                       regularization_losses=None):
        """`eval_metrics` (of `metrics()`) updated, with each head's metrics added."""
        logits = self._split(logits, labels)
        if regularization_losses is not None:
            eval_metrics['%s/%s' % (MetricKeys.LOSS_REGULARIZATION, self.name)].update_state(
                tf.add_n(list(regularization_losses)))
        for head, loss in zip(self._heads, self._head_losses(labels, logits, features, None)):
            eval_metrics['%s/%s' % (MetricKeys.LOSS, head.name)].update_state(loss)
            eval_metrics.update(head.update_metrics(head.metrics(), features, logits[head.name],
                                                    labels[head.name]) or {})
        return eval_metrics

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None,
                              trainable_variables=None, train_op_fn=None, update_ops=None,
                              regularization_losses=None):
        """The `EstimatorSpec` of `mode` for `logits` (a tensor or a dict by head name) and
        `labels` (a dict by head name); TRAIN as a single head's."""
        with tf.name_scope(self.name, 'multi_head'):
            split = self._split(logits, labels)
            specs = [head.create_estimator_spec(
                features=features, mode=mode, logits=split[head.name],
                labels=labels[head.name] if labels else None,
                train_op_fn=lambda loss: tf.no_op()) for head in self._heads]
            predictions = self.predictions(logits)
            if mode == ModeKeys.PREDICT:
                return EstimatorSpec(mode, predictions=predictions,
                                     export_outputs=self._export_outputs(specs))
            loss = self.loss(labels, logits, features, mode, regularization_losses)
            if mode == ModeKeys.EVAL:
                return EstimatorSpec(mode, predictions=predictions, loss=loss,
                                     eval_metric_ops=self.update_metrics(
                                         self.metrics(regularization_losses), features,
                                         logits, labels, regularization_losses))
            train_op = head_v2.v2_train_op(
                loss, optimizer, trainable_variables, train_op_fn, update_ops,
                head_v2.v1_reduction(self.loss_reduction))
        with tf.name_scope(''):
            tf.summary.scalar(MetricKeys.LOSS, loss)
            if regularization_losses is not None:
                tf.summary.scalar(MetricKeys.LOSS_REGULARIZATION,
                                  tf.add_n(list(regularization_losses)))
        return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op,
                             eval_metric_ops={})

    def _export_outputs(self, specs):
        """The first head's default export, each head's under '<name>[/<signature>]', and
        one 'predict' of them all."""
        first = specs[0].export_outputs
        if len(first) == 1:
            default = next(iter(first.values()))
        elif SignatureKeys.DEFAULT in first:
            default = first[SignatureKeys.DEFAULT]
        else:
            raise EstimatorError(
                '%s did not specify default export_outputs. Given: %s Suggested fix: Use one '
                'of the heads in tf.estimator, or include key %s in export_outputs.'
                % (self._heads[0].name, first, SignatureKeys.DEFAULT))
        outputs, merged = {SignatureKeys.DEFAULT: default}, {}
        for head, spec in zip(self._heads, specs):
            for key, output in spec.export_outputs.items():
                outputs[head.name if key == SignatureKeys.DEFAULT
                        else '%s/%s' % (head.name, key)] = output
                if key == SignatureKeys.PREDICT and isinstance(output, PredictOutput):
                    merged.update({'%s/%s' % (head.name, name): value
                                   for name, value in output.outputs.items()})
        outputs[SignatureKeys.PREDICT] = PredictOutput(merged)
        return outputs
