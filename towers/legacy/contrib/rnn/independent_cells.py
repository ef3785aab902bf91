"""TF 1.15's cells whose recurrence is elementwise, each unit seeing only its own past:
`SRUCell` (Lei et al., arXiv:1709.02755), `IndRNNCell` (Li et al., arXiv:1803.04831), and
its gated forms `IndyGRUCell` and `IndyLSTMCell` (arXiv:1903.08023).

Input weights are `kernel_w` [input, n * units] (`kernel` for SRU and the Indy GRU's
candidate), recurrent weights `kernel_u` [1, n * units] drawn uniformly from [-1, 1], and
biases `bias`; the Indy GRU keeps them in `gates/` and `candidate/`.
"""
from towers.compat import tf
from towers.legacy.contrib.rnn.base import InputSpec, LayerRNNCell, LSTMStateTuple


def _recurrent_initializer():
    return tf.random_uniform_initializer(minval=-1, maxval=1)


class _IndependentCell(LayerRNNCell):
    """A layer cell of `num_units` with a 2-D input of known width."""

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None,
                 **kwargs):
        super().__init__(_reuse=reuse, name=name, dtype=dtype, **kwargs)
        self.input_spec = InputSpec(ndim=2)
        self._num_units = num_units
        self._activation = activation or tf.tanh

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def _input_depth(self, inputs_shape):
        depth = tf.compat.dimension_value(tf.TensorShape(inputs_shape)[1])
        if depth is None:
            raise ValueError('%s: the input width must be known, got shape %s'
                             % (self.name, inputs_shape))
        return depth


class SRUCell(_IndependentCell):
    """A simple recurrent unit: from `[x_bar, f, r, x_tx] = x @ kernel`,
    `c = f * c_prev + (1 - f) * x_bar` and `h = r * activation(c) + (1 - r) * x_tx`, with
    sigmoid gates f and r (plus `bias`). Returns (h, c).

    Args:
      num_units: the number of units.
      activation: the activation of the cell state (default tanh).
      reuse: whether to reuse the variables of an earlier cell of the same scope.
      name: the layer's name and variable scope.
      **kwargs: more arguments of the layer.
    """

    def __init__(self, num_units, activation=None, reuse=None, name=None, **kwargs):
        super().__init__(num_units, activation, reuse, name, **kwargs)

    def build(self, inputs_shape):
        depth = self._input_depth(inputs_shape)
        self._kernel = self.add_weight('kernel', [depth, 4 * self._num_units])
        self._bias = self.add_weight('bias', [2 * self._num_units],
                                     initializer=tf.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        x_bar, f_in, r_in, x_tx = tf.split(tf.matmul(inputs, self._kernel), 4, axis=1)
        f, r = tf.split(tf.sigmoid(tf.nn.bias_add(tf.concat([f_in, r_in], 1), self._bias)),
                        2, axis=1)
        c = f * state + (1.0 - f) * x_bar
        return r * self._activation(c) + (1.0 - r) * x_tx, c


class IndRNNCell(_IndependentCell):
    """`h = activation(x @ kernel_w + h_prev * kernel_u + bias)`; returns (h, h).

    Args:
      num_units: the number of units.
      activation: the activation (default tanh).
      reuse: whether to reuse the variables of an earlier cell of the same scope.
      name: the layer's name and variable scope.
      dtype: the variables' dtype (default the first input's).
    """

    def build(self, inputs_shape):
        depth = self._input_depth(inputs_shape)
        self._kernel_w = self.add_weight('kernel_w', [depth, self._num_units])
        self._kernel_u = self.add_weight('kernel_u', [1, self._num_units],
                                         initializer=_recurrent_initializer())
        self._bias = self.add_weight('bias', [self._num_units],
                                     initializer=tf.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        gates = tf.matmul(inputs, self._kernel_w) + state * self._kernel_u
        output = self._activation(tf.nn.bias_add(gates, self._bias))
        return output, output


class IndyGRUCell(_IndependentCell):
    """A GRU whose recurrent matrices are diagonal: gates `[r, u] = sigmoid(x @ gates/kernel_w
    + tile(h_prev) * gates/kernel_u + gates/bias)`, candidate `c = activation(x @
    candidate/kernel + r * h_prev * candidate/kernel_u + candidate/bias)`, and
    `h = u * h_prev + (1 - u) * c`; returns (h, h).

    Args:
      num_units: the number of units.
      activation: the candidate's activation (default tanh).
      reuse: whether to reuse the variables of an earlier cell of the same scope.
      kernel_initializer: the initializer of the input weights.
      bias_initializer: the initializer of both biases (default ones for the gates, zeros
        for the candidate).
      name: the layer's name and variable scope.
      dtype: the variables' dtype (default the first input's).
    """

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None):
        super().__init__(num_units, activation, reuse, name, dtype)
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    def build(self, inputs_shape):
        depth, units = self._input_depth(inputs_shape), self._num_units
        self._gate_kernel_w = self.add_weight('gates/kernel_w', [depth, 2 * units],
                                              initializer=self._kernel_initializer)
        self._gate_kernel_u = self.add_weight('gates/kernel_u', [1, 2 * units],
                                              initializer=_recurrent_initializer())
        self._gate_bias = self.add_weight(
            'gates/bias', [2 * units],
            initializer=self._bias_initializer or tf.constant_initializer(1.0))
        self._candidate_kernel_w = self.add_weight('candidate/kernel', [depth, units],
                                                   initializer=self._kernel_initializer)
        self._candidate_kernel_u = self.add_weight('candidate/kernel_u', [1, units],
                                                   initializer=_recurrent_initializer())
        self._candidate_bias = self.add_weight(
            'candidate/bias', [units],
            initializer=self._bias_initializer or tf.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        gates = (tf.matmul(inputs, self._gate_kernel_w)
                 + tf.tile(state, [1, 2]) * self._gate_kernel_u)
        r, u = tf.split(tf.sigmoid(tf.nn.bias_add(gates, self._gate_bias)), 2, axis=1)
        candidate = (tf.matmul(inputs, self._candidate_kernel_w)
                     + r * state * self._candidate_kernel_u)
        c = self._activation(tf.nn.bias_add(candidate, self._candidate_bias))
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class IndyLSTMCell(_IndependentCell):
    """A basic LSTM whose recurrent matrices are diagonal: gates `[i, j, f, o] = x @ kernel_w
    + tile(h_prev) * kernel_u + bias`, `c = c_prev * sigmoid(f + forget_bias) + sigmoid(i) *
    activation(j)`, `h = activation(c) * sigmoid(o)`; returns (h, LSTMStateTuple(c, h)).

    Args:
      num_units: the number of cells.
      forget_bias: added to the forget gate's pre-activation.
      activation: the activation of the new input and of the output (default tanh).
      reuse: whether to reuse the variables of an earlier cell of the same scope.
      kernel_initializer: the initializer of the input weights.
      bias_initializer: the initializer of the bias (default zeros).
      name: the layer's name and variable scope.
      dtype: the variables' dtype (default the first input's).
    """

    def __init__(self, num_units, forget_bias=1.0, activation=None, reuse=None,
                 kernel_initializer=None, bias_initializer=None, name=None, dtype=None):
        super().__init__(num_units, activation, reuse, name, dtype)
        self._forget_bias = forget_bias
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_units)

    def build(self, inputs_shape):
        depth, units = self._input_depth(inputs_shape), self._num_units
        self._kernel_w = self.add_weight('kernel_w', [depth, 4 * units],
                                         initializer=self._kernel_initializer)
        self._kernel_u = self.add_weight('kernel_u', [1, 4 * units],
                                         initializer=_recurrent_initializer())
        self._bias = self.add_weight('bias', [4 * units],
                                     initializer=self._bias_initializer or tf.zeros_initializer())
        self.built = True

    def call(self, inputs, state):
        c, h = state
        gates = tf.matmul(inputs, self._kernel_w)
        gates += tf.tile(h, [1, 4]) * self._kernel_u
        i, j, f, o = tf.split(tf.nn.bias_add(gates, self._bias), 4, axis=1)
        forget_bias = tf.constant(self._forget_bias, dtype=f.dtype)
        new_c = c * tf.sigmoid(f + forget_bias) + tf.sigmoid(i) * self._activation(j)
        new_h = self._activation(new_c) * tf.sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)
