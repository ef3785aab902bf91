"""TF 1.15's cuDNN-compatible cells: what `CudnnLSTM` and `CudnnGRU` compute, one step at a
time, with variables that hold their canonical weights (`tf.contrib.cudnn_rnn`'s saveables
name a checkpoint's weights after them).

The step functions here serve both the cells and the layers away from a GPU
(`towers.legacy.contrib.cudnn_rnn.layers`), so that both compute one function.
"""
from towers.compat import tf
from towers.legacy.contrib.rnn.base import legacy_cells
from towers.legacy.contrib.rnn.lstm_ops import LSTMBlockCell, lstm_block_step


def lstm_step(inputs, state, kernel, bias):
    """cuDNN's LSTM step: `LSTMBlockCell`'s without forget bias, clipping or peepholes."""
    return lstm_block_step(inputs, state, kernel, bias, forget_bias=0.0)


def gru_step(inputs, state, gate_kernel, input_kernel, hidden_kernel, gate_bias, input_bias,
             hidden_bias, activation=tf.tanh):
    """cuDNN's GRU step: the reset gate scales the projected state (with its bias), not
    the state.

    Args:
      inputs: [batch, input].
      state: [batch, units].
      gate_kernel: [input + units, 2 * units], reset then update gate.
      input_kernel: [input, units], the candidate's projection of the inputs.
      hidden_kernel: [units, units], the candidate's projection of the state.
      gate_bias: [2 * units].
      input_bias: [units].
      hidden_bias: [units].
      activation: the candidate's activation.

    Returns:
      The new state [batch, units] (also the output).
    """
    gates = tf.sigmoid(tf.nn.bias_add(tf.matmul(tf.concat([inputs, state], 1), gate_kernel),
                                      gate_bias))
    r, u = tf.split(gates, 2, axis=1)
    candidate = tf.nn.bias_add(tf.matmul(inputs, input_kernel), input_bias)
    candidate += r * tf.nn.bias_add(tf.matmul(state, hidden_kernel), hidden_bias)
    return (1 - u) * activation(candidate) + u * state


def basic_step(inputs, state, kernel, bias, activation):
    """A plain RNN step, as `tf.nn.rnn_cell.BasicRNNCell`'s: the new state and output."""
    return activation(tf.nn.bias_add(tf.matmul(tf.concat([inputs, state], 1), kernel), bias))


class CudnnCompatibleLSTMCell(LSTMBlockCell):
    """An `LSTMBlockCell` that computes what `CudnnLSTM` computes (no forget bias, no
    clipping, no peepholes), in scope `cudnn_compatible_lstm_cell`.

    Args:
      num_units: the number of cells.
      reuse: whether to reuse the variables of an earlier cell of the same scope.
    """

    def __init__(self, num_units, reuse=None):
        super().__init__(num_units, forget_bias=0, cell_clip=None, use_peephole=False,
                         reuse=reuse, name='cudnn_compatible_lstm_cell')


_GRU_WEIGHTS = ('gates/kernel', 'candidate/input_projection/kernel',
                'candidate/hidden_projection/kernel')
_GRU_BIASES = ('gates/bias', 'candidate/input_projection/bias',
               'candidate/hidden_projection/bias')


class CudnnCompatibleGRUCell(legacy_cells.GRUCell):
    """A GRU cell that computes what `CudnnGRU` computes (see `gru_step`), with variables
    `gates/kernel`, `gates/bias` (starting at ones) and `candidate/input_projection/...`,
    `candidate/hidden_projection/...` (`kernel` and `bias`, starting at zeros).

    Args:
      num_units: the width of the state and output.
      reuse: whether to reuse the variables of an earlier cell of the same scope.
      kernel_initializer: the initializer of the weights.
    """

    def __init__(self, num_units, reuse=None, kernel_initializer=None):
        super().__init__(num_units, activation=None, reuse=reuse,
                         kernel_initializer=kernel_initializer)

    def build(self, inputs_shape):
        depth = tf.compat.dimension_value(tf.TensorShape(inputs_shape)[1])
        if depth is None:
            raise ValueError('%s: the input width must be known, got shape %s'
                             % (self.name, inputs_shape))
        units = self._num_units
        shapes = ([depth + units, 2 * units], [depth, units], [units, units])
        self._weights_of_step = [
            self.add_weight(name, shape, initializer=self._kernel_initializer)
            for name, shape in zip(_GRU_WEIGHTS, shapes)]
        first_bias = tf.constant_initializer(1.0, dtype=self.dtype)
        self._weights_of_step += [
            self.add_weight(name, [width], initializer=(
                self._bias_initializer or (first_bias if n == 0
                                           else tf.zeros_initializer(dtype=self.dtype))))
            for n, (name, width) in enumerate(zip(_GRU_BIASES, (2 * units, units, units)))]
        self.built = True

    def call(self, inputs, state):
        new_h = gru_step(inputs, state, *self._weights_of_step, activation=self._activation)
        return new_h, new_h
