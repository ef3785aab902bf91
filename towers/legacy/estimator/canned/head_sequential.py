"""TF 2.15's `SequentialHeadWrapper`, the head of a many-to-many RNN (`RNNClassifier(...,
return_sequences=True)`): a TF 2 head of `head_v2` (not `MultiHead`) applied to the steps a
sequence mask keeps.

In TRAIN and EVAL the logits [batch, time, n], the labels [batch, time(, n)] and the features
named in `feature_columns` (e.g. a weight per step) keep the steps where the mask (the features'
`sequence_length_mask` key, [batch, time] bool) is true, in row order, as one batch of examples
[steps, ...] for the wrapped head: its loss, metrics and train op are those of the steps. A
SparseTensor label or feature gives its values in index order instead. In PREDICT the wrapped
head predicts every step, and the mask is added to the predictions under its key.
"""
from towers.compat import tf
from towers.legacy.estimator.canned import head_v2
from towers.legacy.estimator.spec import EstimatorError, ModeKeys


class SequentialHeadWrapper(head_v2.Head):
    """A sequential head over `static_head`.

    Args:
      static_head: a TF 2 head (`BinaryClassHead`, `MultiClassHead`, `RegressionHead`, ...).
      sequence_length_mask: the features' key of the mask [batch, time] of the steps to count.
      feature_columns: a feature key, or a list of them, to flatten like the labels and give
        the wrapped head (its weight column).

    Raises:
      EstimatorError: `sequence_length_mask` or a feature key is not a string;
        `static_head` is a `MultiHead`.
    """

    def __init__(self, static_head, sequence_length_mask='sequence_length_mask',
                 feature_columns=None):
        if not isinstance(sequence_length_mask, str):
            raise EstimatorError('`sequence_mask` column must be a string. Given type: %s.'
                                 % type(sequence_length_mask))
        feature_columns = feature_columns or []
        if isinstance(feature_columns, str):
            feature_columns = [feature_columns]
        for column in feature_columns:
            if not isinstance(column, str):
                raise EstimatorError('Column must a string. Given type: %s.' % type(column))
        if type(static_head).__name__ == 'MultiHead':
            raise EstimatorError('`MultiHead` is not supported with `SequentialHeadWrapper`.')
        self._mask_key = sequence_length_mask
        self._feature_columns = list(feature_columns)
        self._static_head = static_head

    @property
    def input_sequence_mask_key(self):
        return self._mask_key

    @property
    def static_head(self):
        return self._static_head

    @property
    def logits_dimension(self):
        return self._static_head.logits_dimension

    @property
    def loss_reduction(self):
        return self._static_head.loss_reduction

    @property
    def name(self):
        return '%s_sequential' % self._static_head.name if self._static_head.name else None

    def _flatten(self, labels, logits, features):
        """(labels, logits, features of `feature_columns`) of the masked steps."""
        if self._mask_key not in features:
            raise EstimatorError('The provided sequence_length_mask key `%s` should be included '
                                 'in the features dictionary, but was not found. Found keys: '
                                 '%s.' % (self._mask_key, list(features)))
        mask = features[self._mask_key]
        if mask.shape.ndims != 2:
            raise EstimatorError('Mask is expected to have two dimensions, got %s instead.'
                                 % mask.shape.ndims)
        with tf.name_scope('flatten'):
            steps = tf.reduce_sum(tf.cast(mask, tf.int32))
            flat = {}
            for column in self._feature_columns:
                if column not in features:
                    raise EstimatorError('`%s` column expected in features dictionary.'
                                         % column)
                flat[column] = _flattened(features[column], mask, steps)
            return _flattened(labels, mask, steps), _flattened(logits, mask, steps), flat

    def loss(self, labels, logits, features=None, mode=None, regularization_losses=None):
        labels, logits, flat = self._flatten(labels, logits, features)
        return self._static_head.loss(labels, logits, flat, mode, regularization_losses)

    def predictions(self, logits, keys=None):
        return self._static_head.predictions(logits, keys)

    def metrics(self, regularization_losses=None):
        return self._static_head.metrics(regularization_losses)

    def update_metrics(self, eval_metrics, features, logits, labels, mode=None,
                       regularization_losses=None):
        labels, logits, flat = self._flatten(labels, logits, features)
        return self._static_head.update_metrics(eval_metrics, flat, logits, labels,
                                                regularization_losses=regularization_losses)

    def create_estimator_spec(self, features, mode, logits, labels=None, optimizer=None,
                              trainable_variables=None, train_op_fn=None, update_ops=None,
                              regularization_losses=None):
        """The wrapped head's spec: of every step with the mask among the predictions in
        PREDICT, of the masked steps otherwise."""
        if mode == ModeKeys.PREDICT:
            spec = self._static_head.create_estimator_spec(features, mode, logits)
            spec.predictions[self._mask_key] = features[self._mask_key]
            return spec
        labels, logits, flat = self._flatten(labels, logits, features)
        return self._static_head.create_estimator_spec(
            flat, mode, logits, labels, optimizer, trainable_variables, train_op_fn,
            update_ops, regularization_losses)


def _flattened(tensor, mask, steps):
    """`tensor` [batch, time, ...] as [steps, ...] (a last dimension of 1 added to [batch,
    time]): the dense one's steps where `mask` is true, a SparseTensor's values in index order;
    a run-time error unless that is `steps` rows."""
    shape = tensor.shape
    if shape.ndims is None or shape.ndims < 2:
        raise EstimatorError('Input tensor expected to have at least 2 dimensions, got %s '
                             'instead.' % shape.ndims)
    if isinstance(tensor, tf.SparseTensor):
        flat = tf.sparse.reorder(tensor).values
        if shape.ndims > 2:  # TF 2.15 took these values in the order given, not reordered.
            flat = tf.reshape(tensor.values, tf.concat([[-1], shape[2:]], axis=0))
    else:
        flat = tf.boolean_mask(tensor, mask)
    if shape.ndims == 2:
        flat = tf.expand_dims(flat, -1)
        expected = tf.concat([[steps], [1]], axis=0)
    else:
        expected = tf.concat([[steps], shape[2:]], axis=0)
    check = tf.assert_equal(tf.shape(flat), expected,
                            message='Tensor shape is incompatible with provided mask.')
    with tf.control_dependencies([check]):
        return tf.identity(flat)
