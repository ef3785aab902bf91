"""TF 1.15's fused RNN interface: `FusedRNNCell` (an RNN over a whole time-major sequence in
one call), `FusedRNNCellAdaptor` (an RNN cell run by `dynamic_rnn` or `static_rnn`) and
`TimeReversedFusedRNN` (a fused RNN run backwards over each sequence)."""
import abc

from towers.compat import tf


class FusedRNNCell(metaclass=abc.ABCMeta):
    """An RNN over a whole sequence.

    Called on inputs [time, batch, input] or a list of `time` [batch, input] tensors, with
    an optional `initial_state`, `dtype` (needed without `initial_state`),
    `sequence_length` [batch] and variable `scope`, it returns (outputs, final state): the
    outputs [time, batch, output] or a list, as the inputs were.
    """

    @abc.abstractmethod
    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        """Runs the RNN over `inputs`; see the class."""


class FusedRNNCellAdaptor(FusedRNNCell):
    """`cell` as a `FusedRNNCell`, run by `tf.nn.dynamic_rnn` (time-major) when
    `use_dynamic_rnn`, else by `tf.nn.static_rnn`."""

    def __init__(self, cell, use_dynamic_rnn=False):
        self._cell = cell
        self._use_dynamic_rnn = use_dynamic_rnn

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        is_list = isinstance(inputs, list)
        if self._use_dynamic_rnn:
            outputs, state = tf.nn.dynamic_rnn(
                self._cell, tf.stack(inputs) if is_list else inputs,
                sequence_length=sequence_length, initial_state=initial_state, dtype=dtype,
                time_major=True, scope=scope)
            return (tf.unstack(outputs) if is_list else outputs), state
        outputs, state = tf.nn.static_rnn(
            self._cell, inputs if is_list else tf.unstack(inputs),
            initial_state=initial_state, dtype=dtype, sequence_length=sequence_length,
            scope=scope)
        return (outputs if is_list else tf.stack(outputs)), state


class TimeReversedFusedRNN(FusedRNNCell):
    """Runs the fused RNN `cell` over each sequence reversed (its first `sequence_length`
    steps, or all of them) and reverses its outputs back."""

    def __init__(self, cell):
        self._cell = cell

    @staticmethod
    def _reverse(t, lengths):
        if isinstance(t, list):
            return list(reversed(t))
        if lengths is None:
            return tf.reverse_v2(t, [0])
        return tf.reverse_sequence(t, lengths, 0, 1)

    def __call__(self, inputs, initial_state=None, dtype=None, sequence_length=None,
                 scope=None):
        outputs, state = self._cell(self._reverse(inputs, sequence_length),
                                    initial_state=initial_state, dtype=dtype,
                                    sequence_length=sequence_length, scope=scope)
        return self._reverse(outputs, sequence_length), state
