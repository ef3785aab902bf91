"""TF 1.15's LSTMs on TensorFlow's block kernels: `LSTMBlockCell` (one step, the
`LSTMBlockCell` op) and `LSTMBlockFusedCell` (a whole sequence, the `BlockLSTM` op), with
`LSTMBlockWrapper`, the base of fused LSTMs.

Both compute, with gates in the order i, j, f, o of `kernel` [input + units, 4 * units]:
`c = sigmoid(f + forget_bias) * c_prev + sigmoid(i) * tanh(j)`, clipped to `cell_clip`,
`h = sigmoid(o) * tanh(c)`, with peephole terms `w_i_diag * c_prev`, `w_f_diag * c_prev`
and `w_o_diag * c` when `use_peephole`. Their variables are named as `tf.nn.rnn_cell.LSTMCell`'s
(`kernel`, `bias`, `w_i_diag`, `w_f_diag`, `w_o_diag`), in scope `lstm_cell` or
`lstm_fused_cell`.
"""
import abc

from towers.compat import tf
from towers.legacy.contrib.rnn.base import (InputSpec, Layer, LayerRNNCell, LSTMStateTuple,
                                            register_gradient, static_width)


@register_gradient('LSTMBlockCell')
def _lstm_block_cell_grad(op, *grads):
    """Gradients of the `LSTMBlockCell` op's inputs from those of its `cs` and `h`."""
    x, cs_prev, h_prev, w, wci, wcf, wco, b = op.inputs
    i, cs, f, o, ci, co, _ = op.outputs
    cs_prev_grad, dgates, wci_grad, wcf_grad, wco_grad = tf.raw_ops.LSTMBlockCellGrad(
        x=x, cs_prev=cs_prev, h_prev=h_prev, w=w, wci=wci, wcf=wcf, wco=wco, b=b, i=i, cs=cs,
        f=f, o=o, ci=ci, co=co, cs_grad=grads[1], h_grad=grads[6],
        use_peephole=op.get_attr('use_peephole'))
    x_grad, h_prev_grad = tf.split(tf.matmul(dgates, w, transpose_b=True),
                                   [static_width(x), static_width(cs_prev)], axis=1)
    w_grad = tf.matmul(tf.concat([x, h_prev], 1), dgates, transpose_a=True)
    b_grad = tf.raw_ops.BiasAddGrad(out_backprop=dgates)
    return x_grad, cs_prev_grad, h_prev_grad, w_grad, wci_grad, wcf_grad, wco_grad, b_grad


def _clip_attr(cell_clip):
    """The kernels' `cell_clip`: -1 for none."""
    return -1 if cell_clip is None else cell_clip


def lstm_block_step(inputs, state, kernel, bias, diagonals=None, forget_bias=1.0,
                    cell_clip=None):
    """One LSTM step by the `LSTMBlockCell` kernel.

    Args:
      inputs: [batch, input].
      state: (c, h), each [batch, units].
      kernel: [input + units, 4 * units], gates i, j, f, o.
      bias: [4 * units].
      diagonals: the peephole weights (w_i_diag, w_f_diag, w_o_diag), each [units], or
        None for no peepholes.
      forget_bias: added to the forget gate's pre-activation.
      cell_clip: the bound of `c`, or None.

    Returns:
      (h, LSTMStateTuple(c, h)).
    """
    cs_prev, h_prev = state
    use_peephole = diagonals is not None
    if not use_peephole:
        diagonals = [tf.zeros([static_width(cs_prev)], dtype=inputs.dtype)] * 3
    wci, wcf, wco = diagonals
    _, cs, _, _, _, _, h = tf.raw_ops.LSTMBlockCell(
        x=inputs, cs_prev=cs_prev, h_prev=h_prev, w=kernel, wci=wci, wcf=wcf, wco=wco, b=bias,
        forget_bias=forget_bias, cell_clip=_clip_attr(cell_clip), use_peephole=use_peephole)
    return h, LSTMStateTuple(cs, h)


class _BlockLSTMWeights:
    """The variables of both block LSTMs, for a layer with `_num_units` and `_use_peephole`."""

    def _add_lstm_weights(self, input_size):
        """Adds `kernel`, `bias` (zeros) and, with peepholes, the three diagonals."""
        units = self._num_units
        self._kernel = self.add_weight('kernel', [input_size + units, 4 * units])
        self._bias = self.add_weight('bias', [4 * units],
                                     initializer=tf.constant_initializer(0.0))
        if self._use_peephole:
            self._diagonals = [self.add_weight(name, [units])
                               for name in ('w_i_diag', 'w_f_diag', 'w_o_diag')]


class LSTMBlockCell(_BlockLSTMWeights, LayerRNNCell):
    """An LSTM cell computed by one `LSTMBlockCell` kernel per step.

    Args:
      num_units: the number of cells (the width of `c`, `h` and the output).
      forget_bias: added to the forget gate's pre-activation.
      cell_clip: `c` is clipped to [-cell_clip, cell_clip]; None for no clipping.
      use_peephole: whether the gates see the cell state through diagonal weights.
      dtype: the variables' dtype (default the first input's).
      reuse: whether to reuse the variables of an earlier cell of the same scope.
      name: the layer's name and variable scope.

    Called on inputs [batch, input] and a state `LSTMStateTuple(c, h)` of [batch, num_units]
    tensors, it returns (h, LSTMStateTuple(c, h)).
    """

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False,
                 dtype=None, reuse=None, name='lstm_cell'):
        super().__init__(_reuse=reuse, dtype=dtype, name=name)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._use_peephole = use_peephole
        self._cell_clip = cell_clip
        self.input_spec = InputSpec(ndim=2)

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self):
        return self._num_units

    def build(self, inputs_shape):
        input_size = tf.compat.dimension_value(tf.TensorShape(inputs_shape)[1])
        if not input_size:
            raise ValueError('%s: the input width must be known, got shape %s'
                             % (self.name, inputs_shape))
        self._add_lstm_weights(input_size)
        self.built = True

    def call(self, inputs, state):
        if len(state) != 2:
            raise ValueError('%s: the state must be a (c, h) pair, got %d tensors'
                             % (self.name, len(state)))
        return lstm_block_step(inputs, state, self._kernel, self._bias,
                               self._diagonals if self._use_peephole else None,
                               self._forget_bias, self._cell_clip)


class LSTMBlockWrapper(Layer, metaclass=abc.ABCMeta):
    """The base of LSTMs that run a whole time-major sequence in one call: it makes the
    initial state, masks the outputs past each sequence's length and picks each sequence's
    final state. A subclass gives `num_units` and `_call_cell`.

    Called on inputs [time, batch, input] (or a list of `time` [batch, input] tensors), with
    an optional `initial_state` (c, h), `dtype` (needed without `initial_state`) and
    `sequence_length` [batch], it returns (outputs, LSTMStateTuple(c, h)): outputs
    [time, batch, num_units] (or a list, as the inputs were), zero past each length.
    """

    @property
    @abc.abstractmethod
    def num_units(self):
        """The width of the cell state and of the output."""

    @abc.abstractmethod
    def _call_cell(self, inputs, initial_cell_state, initial_output, dtype, sequence_length):
        """Runs the LSTM on `inputs` [time, batch, input] from (c, h) [batch, num_units]:
        returns the cell states and outputs, each [time, batch, num_units]."""

    def call(self, inputs, initial_state=None, dtype=None, sequence_length=None):
        is_list = isinstance(inputs, list)
        if is_list:
            inputs = tf.stack(inputs)
        shape = inputs.shape.with_rank(3)
        if not shape[2]:
            raise ValueError('%s: the input width must be known, got shape %s'
                             % (self.name, shape))
        batch_size = tf.compat.dimension_value(shape[1]) or tf.shape(inputs)[1]
        time_len = tf.compat.dimension_value(shape[0]) or tf.shape(inputs)[0]
        if initial_state is None:
            if dtype is None:
                raise ValueError('%s: give either initial_state or dtype' % self.name)
            zeros = tf.zeros(tf.stack([batch_size, self.num_units]), dtype=dtype)
            initial_state = zeros, zeros
        elif len(initial_state) != 2:
            raise ValueError('%s: initial_state must be a (c, h) pair or None' % self.name)
        elif dtype is None:
            dtype = initial_state[0].dtype
        if sequence_length is not None:
            sequence_length = tf.convert_to_tensor(sequence_length)
        initial_cell_state, initial_output = initial_state
        cell_states, outputs = self._call_cell(inputs, initial_cell_state, initial_output,
                                               dtype, sequence_length)
        if sequence_length is None:
            final_cell_state, final_output = cell_states[-1], outputs[-1]
        else:
            mask = tf.transpose(tf.sequence_mask(sequence_length, time_len, dtype=dtype))
            outputs *= mask[:, :, None]
            # Step 0 of these is the initial state, so a sequence of length n ends at step n.
            picks = tf.stack([sequence_length, tf.range(batch_size)], axis=1)
            final_cell_state = tf.gather_nd(
                tf.concat([initial_cell_state[None], cell_states], 0), picks)
            final_output = tf.gather_nd(tf.concat([initial_output[None], outputs], 0), picks)
        if is_list:
            outputs = tf.unstack(outputs)
        return outputs, LSTMStateTuple(final_cell_state, final_output)


class LSTMBlockFusedCell(_BlockLSTMWeights, LSTMBlockWrapper):
    """An LSTM over a whole sequence in one `BlockLSTM` kernel (see `LSTMBlockWrapper` for
    the call), with `LSTMBlockCell`'s arguments and variable names, in scope `name`."""

    def __init__(self, num_units, forget_bias=1.0, cell_clip=None, use_peephole=False,
                 reuse=None, dtype=None, name='lstm_fused_cell'):
        super().__init__(_reuse=reuse, name=name, dtype=dtype)
        self._num_units = num_units
        self._forget_bias = forget_bias
        self._cell_clip = cell_clip
        self._use_peephole = use_peephole
        self.input_spec = InputSpec(ndim=3)

    @property
    def num_units(self):
        return self._num_units

    def build(self, input_shape):
        input_size = tf.compat.dimension_value(tf.TensorShape(input_shape)[2])
        self._add_lstm_weights(input_size)
        self.built = True

    def _call_cell(self, inputs, initial_cell_state=None, initial_output=None, dtype=None,
                   sequence_length=None):
        if sequence_length is None:
            time_len = (tf.compat.dimension_value(inputs.shape.with_rank(3)[0])
                        or tf.shape(inputs)[0])
            max_len = tf.cast(time_len, tf.int64)
        else:
            max_len = tf.cast(tf.reduce_max(sequence_length), tf.int64)
        wci, wcf, wco = (self._diagonals if self._use_peephole
                         else [tf.zeros([self._num_units], dtype=dtype)] * 3)
        _, cs, _, _, _, _, h = tf.raw_ops.BlockLSTM(
            seq_len_max=max_len, x=inputs, cs_prev=initial_cell_state, h_prev=initial_output,
            w=self._kernel, wci=wci, wcf=wcf, wco=wco, b=self._bias,
            forget_bias=self._forget_bias, cell_clip=_clip_attr(self._cell_clip),
            use_peephole=self._use_peephole)
        return cs, h
