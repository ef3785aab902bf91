"""TF 2.15's `tf.estimator.experimental.RNNClassifier` and `RNNEstimator` (`--tf2`): a Keras
RNN (SimpleRNN, LSTM or GRU layers of tf-keras, Keras 2) over `SequenceFeatures` of sequence
feature columns, masked by each example's sequence length, and a dense logits layer; the V2
heads of `canned.head_v2`; Adagrad at 0.05 with gradients clipped to norm 5 for an optimizer
given by name.

    columns = [tf.feature_column.sequence_numeric_column('x'), tf.feature_column.
               embedding_column(tf.feature_column.sequence_categorical_column_with_identity(
                   'tokens', 100), 8)]
    classifier = tf.estimator.experimental.RNNClassifier(columns, units=16, cell_type='lstm')

Its variables are TF 2.15's, so a checkpoint of either restores in the other:
    sequence_features/<column>_embedding/embedding_weights
    rnn_model/<lstm|gru|simple_rnn>/<cell>/{kernel,recurrent_kernel,bias}   (`units` an int)
    rnn_model/rnn/<cell>/...                           (a list of units, or `rnn_cell_fn`)
    rnn_model/logits/kernel, rnn_model/logits/bias
    training/Adagrad/<variable>/accumulator, training/Adagrad/{learning_rate,decay}
Many-to-many (`return_sequences=True`): logits at every step, masked by the sequence length (or
the features' mask), through a sequential head (`head_sequential.SequentialHeadWrapper`, which
`RNNClassifier` makes of its head, as TF 2.15 did): one label per step, [batch, time].
"""
from towers.compat import keras, tf
from towers.legacy.estimator.canned import head as head_lib
from towers.legacy.estimator.canned import head_sequential, head_v2
from towers.legacy.estimator.canned import model_fn as model_fn_lib
from towers.legacy.estimator.estimator import EstimatorV2
from towers.legacy.estimator.spec import EstimatorError, ModeKeys

LEARNING_RATE = 0.05
CLIP_NORM = 5.0
# cell_type name -> (the Keras RNN layer of one cell of `units` int, the Keras cell).
CELL_TYPES = {'simple_rnn': (keras.layers.SimpleRNN, keras.layers.SimpleRNNCell),
              'lstm': (keras.layers.LSTM, keras.layers.LSTMCell),
              'gru': (keras.layers.GRU, keras.layers.GRUCell)}
# `cell_type` when the caller gives none (TF 2.15's `USE_DEFAULT`): 'simple_rnn' cells.
USE_DEFAULT = object()


def check_cell_arguments(rnn_cell_fn, units, cell_type):
    """Raises EstimatorError when `rnn_cell_fn` comes with `units` or a `cell_type`."""
    if rnn_cell_fn and (units or cell_type is not USE_DEFAULT):
        raise EstimatorError('units and cell_type must not be specified when using rnn_cell_fn')


def _cell(units, cell_type):
    """A Keras RNN cell of `units` made by `cell_type` (a name of `CELL_TYPES` or a class)."""
    make = CELL_TYPES[cell_type][1] if cell_type in CELL_TYPES else cell_type
    if not callable(make):
        raise EstimatorError(
            '`cell_type` should be a class producing a RNN cell, or a string specifying the '
            'cell type. Supported strings are: %s.' % list(CELL_TYPES))
    cell = make(units=units)
    if not hasattr(cell, 'call') or not hasattr(cell, 'state_size'):
        raise EstimatorError('RNN cell should have a `call` and `state_size` method.')
    return cell


def rnn_layer(rnn_cell_fn, units, cell_type, return_sequences):
    """The Keras RNN layer of the estimator's arguments.

    Args:
      rnn_cell_fn: None, or a function () -> a Keras RNN cell (or a list of them, stacked).
      units: an int (with a `cell_type` name: that Keras layer, e.g. `LSTM(units)`), or the
        width of each stacked cell.
      cell_type: a name of `CELL_TYPES`, a cell class, or `USE_DEFAULT` ('simple_rnn').
      return_sequences: whether the layer outputs every step ([batch, time, units]) or the
        last unmasked one ([batch, units]).
    """
    check_cell_arguments(rnn_cell_fn, units, cell_type)
    if cell_type in CELL_TYPES and isinstance(units, int):
        return CELL_TYPES[cell_type][0](units=units, return_sequences=return_sequences)
    if not rnn_cell_fn:
        cell_type = 'simple_rnn' if cell_type is USE_DEFAULT else cell_type
        cells = [_cell(width, cell_type) for width in units]
        cell = cells[0] if len(cells) == 1 else cells
    else:
        cell = rnn_cell_fn()
    return keras.layers.RNN(cell=cell, return_sequences=return_sequences)


def with_context(context_input, sequence_input):
    """`sequence_input` [batch, time, d0] with `context_input` [batch, d1] repeated at each
    step after its values: [batch, time, d0 + d1]."""
    for name, value, rank in (('sequence_input', sequence_input, 3),
                              ('context_input', context_input, 2)):
        if value.shape.rank is not None and value.shape.rank != rank:
            raise EstimatorError('%s must have rank %d, got %s' % (name, rank, value.shape))
        if value.dtype != tf.float32:
            raise EstimatorError('%s must have dtype float32; got %s.' % (name, value.dtype))
    steps = tf.shape(sequence_input)[1]
    tiled = tf.tile(tf.expand_dims(context_input, 1), tf.stack([1, steps, 1]))
    return tf.concat([sequence_input, tiled], 2)


class RNNModel(keras.Model):
    """The Keras model 'rnn_model': features (dict key -> tensor) -> logits [batch, units], or
    [batch, time, units] for a layer that returns sequences. After a call, `steps_mask`
    ([batch, time] bool) holds the steps within each example's sequence length.

    Args:
      layer: the Keras RNN layer (`rnn_layer`).
      units: int, the logits' size.
      sequence_feature_columns: sequence columns (`sequence_numeric_column`, an embedding or
        indicator of a `sequence_categorical_column_*`), read by `SequenceFeatures`.
      context_feature_columns: None, or dense columns read per example and repeated at each
        step.
    """

    def __init__(self, layer, units, sequence_feature_columns, context_feature_columns=None):
        super().__init__(name='rnn_model')
        if not isinstance(units, int):
            raise EstimatorError('units must be an int.  Given type: %s' % type(units))
        self._sequence_features = keras.experimental.SequenceFeatures(sequence_feature_columns)
        self._context_features = (keras.layers.DenseFeatures(context_feature_columns)
                                  if context_feature_columns else None)
        self._rnn = layer
        self._logits = keras.layers.Dense(units=units, name='logits')
        self.steps_mask = None

    def call(self, inputs, training=None):
        if not isinstance(inputs, dict):
            raise EstimatorError('inputs should be a dictionary of `Tensor`s. Given type: %s'
                                 % type(inputs))
        with tf.name_scope('sequence_input_layer'):
            sequence_input, sequence_length = self._sequence_features(inputs, training=training)
            tf.summary.histogram('sequence_length', sequence_length)
            if self._context_features:
                sequence_input = with_context(self._context_features(inputs, training=training),
                                              sequence_input)
        # Steps past an example's length are masked: the RNN carries its state over them.
        self.steps_mask = tf.sequence_mask(sequence_length)
        outputs = self._rnn(sequence_input, mask=self.steps_mask, training=training)
        return self._logits(outputs)


def rnn_model_fn(features, labels, mode, head, sequence_feature_columns,
                 context_feature_columns, units, cell_type, rnn_cell_fn, return_sequences,
                 optimizer, config):
    """The `EstimatorSpec` of an RNN estimator: `head` over `RNNModel`'s logits, trained in
    TRAIN by the Keras optimizer of `optimizer` (a name: at 0.05, gradients clipped to norm 5)
    stepping the global step. With `return_sequences` the features gain the steps' mask under
    the sequential head's key, unless they hold one there."""
    del config  # TF 2's RNN variables are not partitioned.
    model_fn_lib.checked_features(features, 'RNN estimator')
    keras_optimizer = None
    if mode == ModeKeys.TRAIN:
        keras_optimizer = model_fn_lib.v2_optimizer(optimizer, LEARNING_RATE)
        if isinstance(optimizer, str):
            keras_optimizer.clipnorm = CLIP_NORM
    model = RNNModel(rnn_layer(rnn_cell_fn, units, cell_type, return_sequences),
                     head.logits_dimension, sequence_feature_columns, context_feature_columns)
    logits = model(features, mode == ModeKeys.TRAIN)
    if return_sequences and head.input_sequence_mask_key not in features:
        features[head.input_sequence_mask_key] = model.steps_mask
    return head.create_estimator_spec(
        features=features, mode=mode, labels=labels, optimizer=keras_optimizer,
        logits=logits, update_ops=model.updates, trainable_variables=model.trainable_variables)


class RNNEstimator(EstimatorV2):
    """TF 2.15's `tf.estimator.experimental.RNNEstimator`: an RNN whose logits (the last
    unmasked step's) `head` turns into predictions, a loss and metrics.

    Args:
      head: a head of `canned.head_v2` (`tf.estimator.RegressionHead()`, ...).
      sequence_feature_columns: the sequence columns of the input (see `RNNModel`); each
        example's sequence length is that of its SparseTensors' rows.
      context_feature_columns: None, or dense columns repeated at each step.
      units: an int (with a `cell_type` name: one Keras `LSTM`/`GRU`/`SimpleRNN` layer), or
        the width of each stacked cell (`tf.keras.layers.RNN` of them).
      cell_type: 'simple_rnn' (the default), 'lstm', 'gru', or a Keras cell class.
      rnn_cell_fn: instead of `units` and `cell_type`, a function () -> a Keras RNN cell.
      return_sequences: logits at every step (many-to-many), for a sequential `head`
        (`head_sequential.SequentialHeadWrapper`).
      model_dir, config: as `Estimator`'s.
      optimizer: 'Adagrad', 'Adam', 'Ftrl', 'RMSProp', 'SGD' (at 0.05, clip norm 5), a
        `tf.keras.optimizers.legacy.Optimizer` or a callable returning one.

    Raises:
      EstimatorError: `rnn_cell_fn` with `units` or `cell_type`; `return_sequences` with a
        head that is not sequential.
    """

    def __init__(self, head, sequence_feature_columns, context_feature_columns=None,
                 units=None, cell_type=USE_DEFAULT, rnn_cell_fn=None, return_sequences=False,
                 model_dir=None, optimizer='Adagrad', config=None):
        if return_sequences and not isinstance(head, head_sequential.SequentialHeadWrapper):
            raise EstimatorError('Provided head must be a `_SequentialHead` object when '
                                 '`return_sequences` is set to True.')
        check_cell_arguments(rnn_cell_fn, units, cell_type)
        super().__init__(
            model_fn=model_fn_lib.estimator_model_fn(
                rnn_model_fn, head=head, sequence_feature_columns=sequence_feature_columns,
                context_feature_columns=context_feature_columns, units=units,
                cell_type=cell_type, rnn_cell_fn=rnn_cell_fn,
                return_sequences=return_sequences, optimizer=optimizer),
            model_dir=model_dir, config=config)


class RNNClassifier(RNNEstimator):
    """TF 2.15's `tf.estimator.experimental.RNNClassifier`: `RNNEstimator` with the
    classification head of `n_classes` (`BinaryClassHead` for 2, `MultiClassHead` above), its
    loss the weighted mean over the batch (SUM_OVER_BATCH_SIZE).

    Labels are [batch] or [batch, 1] class ids (or names with `label_vocabulary`), one per
    sequence; with `return_sequences`, one per step ([batch, time]: the head is wrapped in a
    `SequentialHeadWrapper` over the features' `sequence_mask` key, the weight column's steps
    flattened with the labels'). `predict` yields 'logits', 'probabilities', 'class_ids', 'classes',
    'all_class_ids', 'all_classes' (and 'logistic' for 2 classes); `evaluate` gives
    'accuracy', 'average_loss', 'loss' (and for 2 classes 'precision', 'recall', 'auc',
    'auc_precision_recall', 'label/mean', 'prediction/mean', 'accuracy_baseline').

    Args:
      n_classes, weight_column, label_vocabulary, loss_reduction: as `DNNClassifierV2`'s.
      sequence_mask: the feature key of a many-to-many model's mask [batch, time] (the steps
        within each example's sequence length when the features lack it).
      The others: as `RNNEstimator`'s.
    """

    def __init__(self, sequence_feature_columns, context_feature_columns=None, units=None,
                 cell_type=USE_DEFAULT, rnn_cell_fn=None, return_sequences=False,
                 model_dir=None, n_classes=2, weight_column=None, label_vocabulary=None,
                 optimizer='Adagrad', loss_reduction=head_v2.SUM_OVER_BATCH_SIZE,
                 sequence_mask='sequence_mask', config=None):
        head = head_lib.classification_head(n_classes, weight_column, label_vocabulary,
                                            loss_reduction, head_v2.CLASS_HEADS)
        if return_sequences:
            tf.logging.info('Converting head to sequential head with `SequentialHeadWrapper` '
                            'to allow sequential predictions.')
            head = head_sequential.SequentialHeadWrapper(head, sequence_mask, weight_column)
        super().__init__(
            head, sequence_feature_columns, context_feature_columns, units, cell_type,
            rnn_cell_fn, return_sequences, model_dir, optimizer, config)
