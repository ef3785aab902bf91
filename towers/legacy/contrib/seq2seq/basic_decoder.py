"""`tf.contrib.seq2seq.BasicDecoder` of TF 1.15: an RNN cell, an optional output layer, and a
`Helper` that picks each step's sample and next input."""
import collections

from towers.compat import tf, tf_layers
from towers.legacy.contrib.seq2seq import decoder, helper as helper_lib


class BasicDecoderOutput(collections.namedtuple('BasicDecoderOutput',
                                                ('rnn_output', 'sample_id'))):
    """One step's (or, stacked, all steps') outputs: the cell's output after the output layer,
    [batch, ...], and the helper's samples, [batch, ...]."""


class BasicDecoder(decoder.Decoder):
    """Decodes with `cell`, reading its inputs and sampling through `helper`.

    Args:
      cell: an RNN cell (`tf.nn.rnn_cell.LSTMCell`, ...).
      helper: a `Helper`.
      initial_state: the cell's initial state (a structure of tensors); its first tensor's
        dtype is the outputs' dtype.
      output_layer: a `tf.layers.Layer` (`tf.layers.Dense`) applied to the cell's output
        before sampling, or None.

    Raises:
      TypeError: `cell` is not an RNN cell, `helper` not a `Helper`, or `output_layer` not a
        `tf.layers.Layer`.
    """

    def __init__(self, cell, helper, initial_state, output_layer=None):
        _check_cell(cell)
        if not isinstance(helper, helper_lib.Helper):
            raise TypeError('BasicDecoder: helper must be a tf.contrib.seq2seq.Helper, got %s'
                            % type(helper))
        if output_layer is not None and not isinstance(output_layer, tf_layers.base.Layer):
            raise TypeError('BasicDecoder: output_layer must be a tf.layers.Layer, got %s'
                            % type(output_layer))
        self._cell = cell
        self._helper = helper
        self._initial_state = initial_state
        self._output_layer = output_layer

    @property
    def batch_size(self):
        return self._helper.batch_size

    def _rnn_output_size(self):
        size = self._cell.output_size
        if self._output_layer is None:
            return size
        batched = tf.nest.map_structure(
            lambda s: tf.TensorShape([None]).concatenate(s), size)
        return tf.nest.map_structure(lambda s: s[1:],
                                     self._output_layer.compute_output_shape(batched))

    @property
    def output_size(self):
        return BasicDecoderOutput(rnn_output=self._rnn_output_size(),
                                  sample_id=self._helper.sample_ids_shape)

    @property
    def output_dtype(self):
        dtype = tf.nest.flatten(self._initial_state)[0].dtype
        return BasicDecoderOutput(tf.nest.map_structure(lambda _: dtype,
                                                        self._rnn_output_size()),
                                  self._helper.sample_ids_dtype)

    def initialize(self, name=None):
        """`(finished, first_inputs, initial_state)`: the helper's start and the initial
        state."""
        return self._helper.initialize() + (self._initial_state,)

    def step(self, time, inputs, state, name=None):
        """One step: the cell, the output layer, then the helper's sample and next inputs.

        Returns:
          `(BasicDecoderOutput(rnn_output, sample_id), next_state, next_inputs, finished)`.
        """
        with tf.name_scope(name, 'BasicDecoderStep', (time, inputs, state)):
            outputs, state = self._cell(inputs, state)
            if self._output_layer is not None:
                outputs = self._output_layer(outputs)
            sample_ids = self._helper.sample(time=time, outputs=outputs, state=state)
            finished, next_inputs, state = self._helper.next_inputs(
                time=time, outputs=outputs, state=state, sample_ids=sample_ids)
        return BasicDecoderOutput(outputs, sample_ids), state, next_inputs, finished


def _check_cell(cell):
    """Raises TypeError unless `cell` looks like an RNN cell, as TF 1.x checked it."""
    missing = [what for what, present in (
        ("'output_size' property", hasattr(cell, 'output_size')),
        ("'state_size' property", hasattr(cell, 'state_size')),
        ("either 'zero_state' or 'get_initial_state' method",
         hasattr(cell, 'zero_state') or hasattr(cell, 'get_initial_state')),
        ('being callable', callable(cell))) if not present]
    if missing:
        raise TypeError('BasicDecoder: cell (%s) is not an RNNCell: it lacks %s'
                        % (cell, ', '.join(missing)))
