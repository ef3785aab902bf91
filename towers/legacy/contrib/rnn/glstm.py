"""TF 1.15's `GLSTMCell`: the group LSTM of Kuchaiev and Ginsburg, 2017 ("Factorization
tricks for LSTM networks", arXiv:1703.10722)."""
from towers.compat import tf
from towers.legacy.contrib.rnn.base import LSTMStateTuple, RNNCell, linear, lstm_state_sizes

_GATES = ('i', 'j', 'f', 'o')


class GLSTMCell(RNNCell):
    """An LSTM split into `number_of_groups` sub-LSTMs: group k maps its slice of the input
    and of the previous output to its slice of the four gates (`group<k>/kernel`, no bias),
    the gates get biases `bias_i`, `bias_j`, `bias_f`, `bias_o`, and an optional projection
    (`projection/kernel`) maps the output to `num_proj`.

    Args:
      num_units: the number of cells, divisible by `number_of_groups`.
      initializer: the initializer of the weights (default the scope's).
      num_proj: the width of the projected output (divisible by `number_of_groups`), or
        None.
      number_of_groups: the number of groups; the input width must divide by it too.
      forget_bias: added to the forget gate's pre-activation.
      activation: the activation of the output (the new input's is tanh).
      reuse: whether to reuse the variables of an earlier cell of the same scope.
    """

    def __init__(self, num_units, initializer=None, num_proj=None, number_of_groups=1,
                 forget_bias=1.0, activation=tf.tanh, reuse=None):
        super().__init__(_reuse=reuse)
        if num_units % number_of_groups != 0:
            raise ValueError('GLSTMCell: num_units must be divisible by number_of_groups')
        if num_proj and num_proj % number_of_groups != 0:
            raise ValueError('GLSTMCell: num_proj must be divisible by number_of_groups')
        self._num_units = num_units
        self._initializer = initializer
        self._num_proj = num_proj
        self._forget_bias = forget_bias
        self._activation = activation
        self._number_of_groups = number_of_groups
        # The widths of each group's slice of the previous output and of its cells.
        self._group_shape = [(num_proj or num_units) // number_of_groups,
                             num_units // number_of_groups]
        self._state_size, self._output_size = lstm_state_sizes(num_units, num_proj)

    @property
    def state_size(self):
        return self._state_size

    @property
    def output_size(self):
        return self._output_size

    def call(self, inputs, state):
        c_prev, m_prev = state
        input_size = tf.compat.dimension_value(inputs.shape[1])
        groups = self._number_of_groups
        if input_size is None:
            raise ValueError('GLSTMCell: the input width must be known, got shape %s'
                             % inputs.shape)
        if input_size % groups != 0:
            raise ValueError('GLSTMCell: the input width (%d) must be divisible by '
                             'number_of_groups (%d)' % (input_size, groups))
        input_width = input_size // groups
        output_width, cell_width = self._group_shape
        dtype = inputs.dtype
        with tf.variable_scope(tf.get_variable_scope(), initializer=self._initializer):
            parts = []
            for k in range(groups):
                with tf.variable_scope('group%d' % k):
                    group_inputs = tf.concat(
                        [inputs[:, k * input_width:(k + 1) * input_width],
                         m_prev[:, k * output_width:(k + 1) * output_width]], axis=1)
                    parts.append(tf.split(linear(group_inputs, 4 * cell_width, False), 4, 1))
            i, j, f, o = [
                tf.nn.bias_add(tf.concat([part[n] for part in parts], axis=1),
                               tf.get_variable('bias_' + gate, [self._num_units], dtype=dtype,
                                               initializer=tf.constant_initializer(0.0,
                                                                                   dtype=dtype)))
                for n, gate in enumerate(_GATES)]
        c = tf.sigmoid(f + self._forget_bias) * c_prev + tf.sigmoid(i) * tf.tanh(j)
        m = tf.sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            with tf.variable_scope('projection'):
                m = linear(m, self._num_proj, False)
        return m, LSTMStateTuple(c, m)
