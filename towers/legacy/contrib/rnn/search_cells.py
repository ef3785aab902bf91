"""TF 1.15's `NASCell` (the recurrent cell found by neural architecture search, Zoph and Le,
2017, arXiv:1611.01578) and the two cells of Collins et al., 2017 (arXiv:1611.09913):
`UGRNNCell` (one update gate) and `IntersectionRNNCell` (+RNN: coupled gates through time and
through depth)."""
from towers.compat import tf
from towers.legacy.contrib.rnn.base import (LayerRNNCell, LSTMStateTuple, RNNCell, linear,
                                            lstm_state_sizes, static_width)

_NAS_BASE = 8


class NASCell(LayerRNNCell):
    """The NAS cell: eight branches of `x @ kernel` and `m_prev @ recurrent_kernel` (plus an
    optional `bias`), combined in the tree the search found, with an optional projection
    `projection_weights` of the output.

    Args:
      num_units: the number of cells.
      num_proj: the width of the projected output, or None.
      use_bias: whether the recurrent branches have a bias.
      reuse: whether to reuse the variables of an earlier cell of the same scope.
      **kwargs: more arguments of the layer (name, dtype).

    Its state is LSTMStateTuple(c [batch, num_units], m [batch, num_proj or num_units]).
    """

    def __init__(self, num_units, num_proj=None, use_bias=False, reuse=None, **kwargs):
        super().__init__(_reuse=reuse, **kwargs)
        self._num_units = num_units
        self._num_proj = num_proj
        self._use_bias = use_bias
        self._state_size, self._output_size = lstm_state_sizes(num_units, num_proj)

    @property
    def state_size(self):
        return self._state_size

    @property
    def output_size(self):
        return self._output_size

    def build(self, inputs_shape):
        input_size = tf.compat.dimension_value(tf.TensorShape(inputs_shape).with_rank(2)[1])
        if input_size is None:
            raise ValueError('%s: the input width must be known, got shape %s'
                             % (self.name, inputs_shape))
        width = _NAS_BASE * self._num_units
        recurrent_size = self._num_units if self._num_proj is None else self._num_proj
        self.recurrent_kernel = self.add_weight('recurrent_kernel', [recurrent_size, width])
        self.kernel = self.add_weight('kernel', [input_size, width])
        if self._use_bias:
            self.bias = self.add_weight('bias', [width], initializer=tf.zeros_initializer())
        if self._num_proj is not None:
            self.projection_weights = self.add_weight('projection_weights',
                                                      [self._num_units, self._num_proj])
        self.built = True

    def call(self, inputs, state):
        c_prev, m_prev = state
        m_matrix = tf.matmul(m_prev, self.recurrent_kernel)
        if self._use_bias:
            m_matrix = tf.nn.bias_add(m_matrix, self.bias)
        m = tf.split(m_matrix, _NAS_BASE, axis=1)
        x = tf.split(tf.matmul(inputs, self.kernel), _NAS_BASE, axis=1)
        sigmoid, tanh, relu = tf.sigmoid, tf.tanh, tf.nn.relu
        first = [sigmoid(x[0] + m[0]), relu(x[1] + m[1]), sigmoid(x[2] + m[2]),
                 relu(x[3] * m[3]), tanh(x[4] + m[4]), sigmoid(x[5] + m[5]),
                 tanh(x[6] + m[6]), sigmoid(x[7] + m[7])]
        second = [tanh(first[0] * first[1]), tanh(first[2] + first[3]),
                  tanh(first[4] * first[5]), sigmoid(first[6] + first[7])]
        new_c = tanh(second[0] + c_prev) * second[1]
        new_m = tanh(new_c * tanh(second[2] + second[3]))
        if self._num_proj is not None:
            new_m = tf.matmul(new_m, self.projection_weights)
        return new_m, LSTMStateTuple(new_c, new_m)


class UGRNNCell(RNNCell):
    """The update-gate RNN: from `[g, c] = [x, h_prev] @ kernel + bias`,
    `h = sigmoid(g + forget_bias) * h_prev + (1 - sigmoid(...)) * activation(c)`; returns
    (h, h).

    Args:
      num_units: the number of units.
      initializer: the initializer of the weights (default the scope's).
      forget_bias: added to the gate's pre-activation.
      activation: the activation of the candidate.
      reuse: whether to reuse the variables of an earlier cell of the same scope.
    """

    def __init__(self, num_units, initializer=None, forget_bias=1.0, activation=tf.tanh,
                 reuse=None):
        super().__init__(_reuse=reuse)
        self._num_units = num_units
        self._initializer = initializer
        self._forget_bias = forget_bias
        self._activation = activation

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def call(self, inputs, state):
        static_width(inputs)  # raises unless the input width is known
        with tf.variable_scope(tf.get_variable_scope(), initializer=self._initializer):
            gate, candidate = tf.split(
                linear(tf.concat([inputs, state], 1), 2 * self._num_units, True), 2, axis=1)
            g = tf.sigmoid(gate + self._forget_bias)
            new_state = g * state + (1.0 - g) * self._activation(candidate)
        return new_state, new_state


class IntersectionRNNCell(RNNCell):
    """The +RNN: from `[gh, h, gy, y] = [x, h_prev] @ kernel + bias`, the state
    `sigmoid(gh + forget_bias) * h_prev + (1 - ...) * tanh(h)` goes on through time and the
    output `sigmoid(gy + forget_bias) * x + (1 - ...) * y_activation(y)` through depth, so
    the input width must be `num_units`: a first layer projects its inputs (`num_in_proj`).

    Args:
      num_units: the number of units.
      num_in_proj: set to `num_units` to project wider or narrower inputs (variables
        `in_projection/kernel` and `in_projection/bias`).
      initializer: the initializer of the weights (default the scope's).
      forget_bias: added to both gates' pre-activations.
      y_activation: the activation of the output candidate.
      reuse: whether to reuse the variables of an earlier cell of the same scope.
    """

    def __init__(self, num_units, num_in_proj=None, initializer=None, forget_bias=1.0,
                 y_activation=tf.nn.relu, reuse=None):
        super().__init__(_reuse=reuse)
        self._num_units = num_units
        self._initializer = initializer
        self._forget_bias = forget_bias
        self._num_input_proj = num_in_proj
        self._y_activation = y_activation

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def call(self, inputs, state):
        units = self._num_units
        with tf.variable_scope(tf.get_variable_scope(), initializer=self._initializer):
            if static_width(inputs) != units:
                if not self._num_input_proj:
                    raise ValueError('IntersectionRNNCell: the input width %d must equal '
                                     'num_units %d; set num_in_proj=num_units to project it'
                                     % (static_width(inputs), units))
                with tf.variable_scope('in_projection'):
                    inputs = linear(inputs, units, True)
            matrix = linear(tf.concat([inputs, state], 1), 4 * units, True)
            gh, h, gy, y = (matrix[:, k * units:(k + 1) * units] for k in range(4))
            gh = tf.sigmoid(gh + self._forget_bias)
            gy = tf.sigmoid(gy + self._forget_bias)
            new_state = gh * state + (1.0 - gh) * tf.tanh(h)
            new_y = gy * inputs + (1.0 - gy) * self._y_activation(y)
        return new_y, new_state
