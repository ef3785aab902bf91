"""TF 1.15's `tf.contrib.seq2seq.AttentionWrapper` and its state, with the attention mechanisms
(`seq2seq/attention.py`) under the names TF 1.15's module gave them.

The wrapper is an RNN cell of the runner's `tf.nn.rnn_cell` (tf-keras's legacy cells), so it
runs in `tf.nn.dynamic_rnn` and in a decoder's loop and names its variables as TF 1.15 did:
`<rnn scope>/attention_wrapper/<cell>/...`, `.../attention_layer/kernel` and the mechanisms'
score variables (`.../luong_attention/attention_g`, ...).
"""
import collections

from towers.compat import rnn_cells, tf, tf_layers
from towers.legacy.contrib.seq2seq.attention import (
    AttentionMechanism, BahdanauAttention, BahdanauMonotonicAttention, LuongAttention,
    LuongMonotonicAttention, hardmax, monotonic_attention, safe_cumprod)

__all__ = ['AttentionMechanism', 'AttentionWrapper', 'AttentionWrapperState', 'LuongAttention',
           'BahdanauAttention', 'hardmax', 'safe_cumprod', 'monotonic_attention',
           'BahdanauMonotonicAttention', 'LuongMonotonicAttention']

# The module of the runner's `tf.nn.rnn_cell.RNNCell`, read without `tf.nn.rnn_cell`, which
# refuses outside the runner (where `TF_USE_LEGACY_KERAS` is unset).
_legacy_cells = rnn_cells

_BATCH_MISMATCH = (
    'Non-matching batch sizes between the memory (encoder output) and %s.  Are you using the '
    'BeamSearchDecoder?  Then tile the memory, the memory_sequence_length and the encoder '
    'state with tf.contrib.seq2seq.tile_batch(..., multiplier=beam_width) and call '
    'zero_state with batch_size * beam_width.')


def _with_same_shape(old, new):
    """`new`, checked to have `old`'s shape (statically where both are known, else by an op
    that runs with it) and given `old`'s static shape; anything but two tensors: `new`."""
    if not (isinstance(old, tf.Tensor) and isinstance(new, tf.Tensor)):
        return new
    expected = old.shape
    with tf.name_scope('%s/' % new.op.name, values=[old, new]):
        if expected.is_fully_defined() and new.shape.is_fully_defined():
            if new.shape.is_compatible_with(expected):
                return new
            if expected.ndims == 0 and new.shape.is_compatible_with([1]):
                return tf.reshape(new, [])
            raise ValueError('AttentionWrapperState.clone: %s has shape %s, the state it '
                             'replaces has %s' % (new.name, new.shape, expected))
        if expected.is_fully_defined() and expected.ndims == 0:
            return tf.reshape(new, [])
        expected_shape = expected.as_list() if expected.is_fully_defined() else tf.shape(old)
        check = tf.assert_equal(tf.shape(new), expected_shape, message=(
            'AttentionWrapperState.clone: %s does not have the shape of the state it '
            'replaces' % new.name))
        with tf.control_dependencies([check]):
            result = tf.identity(new)
        if expected.is_fully_defined():
            result.set_shape(expected)
        return result


class AttentionWrapperState(collections.namedtuple(
        'AttentionWrapperState', ('cell_state', 'attention', 'time', 'alignments',
                                  'alignment_history', 'attention_state'))):
    """The state of an `AttentionWrapper`.

    cell_state: the wrapped cell's state.
    attention: the attention emitted at the previous step, `[batch, attention size]`.
    time: an int32 scalar, the step.
    alignments: the previous step's alignments `[batch, max_time]` (a tuple of them, one per
      mechanism, when the wrapper was given a list of mechanisms).
    alignment_history: with `alignment_history=True`, a `TensorArray` (or a tuple of them) of
      every step's alignments (`stack()` gives `[time, batch, max_time]`); else `()`.
    attention_state: each mechanism's state.
    """

    def clone(self, **kwargs):
        """This state with the fields in `kwargs` replaced, e.g.
        `wrapper.zero_state(batch_size, dtype).clone(cell_state=encoder_state)`; each new
        tensor must have the shape of the one it replaces, and takes its static shape."""
        replaced = super(AttentionWrapperState, self)._replace(**kwargs)
        return tf.nest.map_structure(_with_same_shape, self, replaced)


def _compute_attention(attention_mechanism, cell_output, attention_state, attention_layer):
    """(attention `[batch, depth]`, alignments, next attention state) of one mechanism: the
    alignments' weighted sum of its values (the context), through `attention_layer` applied to
    `[cell_output, context]` when there is one."""
    alignments, next_attention_state = attention_mechanism(cell_output, state=attention_state)
    context = tf.squeeze(tf.matmul(tf.expand_dims(alignments, 1), attention_mechanism.values),
                         [1])
    if attention_layer is not None:
        return (attention_layer(tf.concat([cell_output, context], 1)), alignments,
                next_attention_state)
    return context, alignments, next_attention_state


def _depth(tensor):
    return tf.compat.dimension_value(tensor.shape[-1])


def _as_tuple(value):
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


class AttentionWrapper(_legacy_cells.RNNCell):
    """An RNN cell with attention over one or more mechanisms' memories.

    Each step feeds `cell_input_fn(inputs, previous attention)` (default: their concatenation)
    to `cell`, queries every mechanism with the cell's output, and concatenates the mechanisms'
    attentions (each the context, or `attention_layer(cell output, context)`). The step's output
    is that attention with `output_attention=True` (Luong style), else the cell's output.

    Args:
      cell: the wrapped RNN cell.
      attention_mechanism: an `AttentionMechanism` or a list of them.
      attention_layer_size: the depth of a bias-free Dense `attention_layer` (an int, or a list
        of them with a list of mechanisms); None: the attention is the context.
      alignment_history: whether the state keeps every step's alignments.
      cell_input_fn: (inputs, attention) -> the cell's input.
      output_attention: whether the step's output is the attention (else the cell's output).
      initial_cell_state: the cell state `zero_state` starts from (default the cell's zeros).
      name: the layer's name, the variable scope (default 'attention_wrapper').
      attention_layer: a layer (or a list of them) in place of the Dense attention layers;
        not together with `attention_layer_size`.
      attention_fn: (mechanism, cell output, attention state, attention layer) ->
        (attention, alignments, next attention state), in place of the default.
      dtype: the layer's dtype.

    Raises:
      TypeError: a mechanism that is not an `AttentionMechanism`, or a `cell_input_fn` that
        is not callable.
      ValueError: both `attention_layer_size` and `attention_layer`, or not one of them per
        mechanism.
    """

    def __init__(self, cell, attention_mechanism, attention_layer_size=None,
                 alignment_history=False, cell_input_fn=None, output_attention=True,
                 initial_cell_state=None, name=None, attention_layer=None, attention_fn=None,
                 dtype=None):
        super(AttentionWrapper, self).__init__(name=name, dtype=dtype)
        if not (callable(cell) and hasattr(cell, 'output_size') and hasattr(cell, 'state_size')
                and (hasattr(cell, 'get_initial_state') or hasattr(cell, 'zero_state'))):
            raise TypeError('AttentionWrapper: cell must be an RNNCell, saw type: %s'
                            % type(cell).__name__)
        self._is_multi = isinstance(attention_mechanism, (list, tuple))
        mechanisms = _as_tuple(attention_mechanism)
        for mechanism in mechanisms:
            if not isinstance(mechanism, AttentionMechanism):
                raise TypeError('AttentionWrapper: attention_mechanism must be an '
                                'AttentionMechanism or a list of them, saw type: %s'
                                % type(mechanism).__name__)
        if cell_input_fn is None:
            cell_input_fn = lambda inputs, attention: tf.concat([inputs, attention], -1)  # noqa: E731
        elif not callable(cell_input_fn):
            raise TypeError('AttentionWrapper: cell_input_fn must be callable, saw type: %s'
                            % type(cell_input_fn).__name__)
        if attention_layer_size is not None and attention_layer is not None:
            raise ValueError('AttentionWrapper: set only one of attention_layer_size and '
                             'attention_layer')
        if attention_layer_size is not None:
            sizes = _as_tuple(attention_layer_size)
            self._check_one_per_mechanism(sizes, mechanisms, 'attention_layer_size',
                                          'integer')
            self._attention_layers = tuple(
                tf_layers.core.Dense(size, name='attention_layer', use_bias=False,
                                     dtype=mechanism.dtype)
                for size, mechanism in zip(sizes, mechanisms))
            self._attention_layer_size = sum(sizes)
        elif attention_layer is not None:
            self._attention_layers = _as_tuple(attention_layer)
            self._check_one_per_mechanism(self._attention_layers, mechanisms,
                                          'attention_layer', 'layer')
            self._attention_layer_size = sum(
                tf.compat.dimension_value(layer.compute_output_shape(
                    [None, cell.output_size + _depth(mechanism.values)])[-1])
                for layer, mechanism in zip(self._attention_layers, mechanisms))
        else:
            self._attention_layers = None
            self._attention_layer_size = sum(_depth(mechanism.values)
                                             for mechanism in mechanisms)
        self._attention_fn = _compute_attention if attention_fn is None else attention_fn
        self._cell = cell
        self._attention_mechanisms = mechanisms
        self._cell_input_fn = cell_input_fn
        self._output_attention = output_attention
        self._alignment_history = alignment_history
        self._initial_cell_state = None
        if initial_cell_state is not None:
            with tf.name_scope(name, 'AttentionWrapperInit'):
                last = tf.nest.flatten(initial_cell_state)[-1]
                checks = self._batch_size_checks(
                    tf.compat.dimension_value(last.shape[0]) or tf.shape(last)[0],
                    'When constructing AttentionWrapper %s: ' % self._base_name
                    + _BATCH_MISMATCH % 'initial_cell_state')
                with tf.control_dependencies(checks):
                    self._initial_cell_state = tf.nest.map_structure(
                        lambda s: tf.identity(s, name='check_initial_cell_state'),
                        initial_cell_state)

    @staticmethod
    def _check_one_per_mechanism(items, mechanisms, argument, kind):
        if len(items) != len(mechanisms):
            raise ValueError('AttentionWrapper: %s must hold exactly one %s per '
                             'attention_mechanism, saw: %d vs %d'
                             % (argument, kind, len(items), len(mechanisms)))

    def _batch_size_checks(self, batch_size, message):
        return [tf.assert_equal(batch_size, mechanism.batch_size, message=message)
                for mechanism in self._attention_mechanisms]

    def _item_or_tuple(self, items):
        items = tuple(items)
        return items if self._is_multi else items[0]

    @property
    def output_size(self):
        return self._attention_layer_size if self._output_attention else self._cell.output_size

    @property
    def state_size(self):
        """An `AttentionWrapperState` of the sizes of the state's parts."""
        mechanisms = self._attention_mechanisms
        return AttentionWrapperState(
            cell_state=self._cell.state_size,
            time=tf.TensorShape([]),
            attention=self._attention_layer_size,
            alignments=self._item_or_tuple(m.alignments_size for m in mechanisms),
            attention_state=self._item_or_tuple(m.state_size for m in mechanisms),
            alignment_history=self._item_or_tuple(
                m.alignments_size if self._alignment_history else () for m in mechanisms))

    def zero_state(self, batch_size, dtype):
        """The first `AttentionWrapperState`: the cell's zero (or initial) state, zero
        attention, each mechanism's initial alignments and state, empty histories.

        Args:
          batch_size: an int or int32 scalar; with beam search, batch size * beam width.
          dtype: the state's float type.

        Returns:
          An `AttentionWrapperState`; its ops check that `batch_size` is the memory's.
        """
        with tf.name_scope(type(self).__name__ + 'ZeroState', values=[batch_size]):
            cell_state = self._initial_cell_state
            if cell_state is None:
                cell_state = self._cell.get_initial_state(batch_size=batch_size, dtype=dtype)
            checks = self._batch_size_checks(
                batch_size, 'When calling zero_state of AttentionWrapper %s: ' % self._base_name
                + _BATCH_MISMATCH % 'the requested batch size')
            with tf.control_dependencies(checks):
                cell_state = tf.nest.map_structure(
                    lambda s: tf.identity(s, name='checked_cell_state'), cell_state)
            alignments = [m.initial_alignments(batch_size, dtype)
                          for m in self._attention_mechanisms]
            return AttentionWrapperState(
                cell_state=cell_state,
                time=tf.zeros([], dtype=tf.int32),
                attention=tf.zeros([batch_size, self._attention_layer_size], dtype=dtype),
                alignments=self._item_or_tuple(alignments),
                attention_state=self._item_or_tuple(
                    m.initial_state(batch_size, dtype) for m in self._attention_mechanisms),
                alignment_history=self._item_or_tuple(
                    tf.TensorArray(dtype, size=0, dynamic_size=True,
                                   element_shape=alignment.shape)
                    if self._alignment_history else () for alignment in alignments))

    def call(self, inputs, state):
        """One step.

        Args:
          inputs: the step's input (a tensor or a structure), `[batch, ...]`.
          state: the previous `AttentionWrapperState`.

        Returns:
          (output `[batch, output_size]`, the next `AttentionWrapperState`).

        Raises:
          TypeError: `state` is not an `AttentionWrapperState`.
        """
        if not isinstance(state, AttentionWrapperState):
            raise TypeError('AttentionWrapper: expected the state to be an '
                            'AttentionWrapperState, got %s' % type(state))
        cell_output, next_cell_state = self._cell(
            self._cell_input_fn(inputs, state.attention), state.cell_state)
        checks = self._batch_size_checks(
            tf.compat.dimension_value(cell_output.shape[0]) or tf.shape(cell_output)[0],
            'When applying AttentionWrapper %s: ' % self.name
            + _BATCH_MISMATCH % 'the query (decoder output)')
        with tf.control_dependencies(checks):
            cell_output = tf.identity(cell_output, name='checked_cell_output')
        attention_states = state.attention_state if self._is_multi else [state.attention_state]
        histories = state.alignment_history if self._is_multi else [state.alignment_history]
        attentions, alignments, next_states, next_histories = [], [], [], []
        for i, mechanism in enumerate(self._attention_mechanisms):
            attention, alignment, next_state = self._attention_fn(
                mechanism, cell_output, attention_states[i],
                self._attention_layers[i] if self._attention_layers else None)
            attentions.append(attention)
            alignments.append(alignment)
            next_states.append(next_state)
            next_histories.append(histories[i].write(state.time, alignment)
                                  if self._alignment_history else ())
        attention = tf.concat(attentions, 1)
        next_state = AttentionWrapperState(
            time=state.time + 1, cell_state=next_cell_state, attention=attention,
            attention_state=self._item_or_tuple(next_states),
            alignments=self._item_or_tuple(alignments),
            alignment_history=self._item_or_tuple(next_histories))
        return (attention if self._output_attention else cell_output), next_state
