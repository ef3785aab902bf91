"""TF 1.15's `PhasedLSTMCell` (Neil et al., 2016, arXiv:1610.09513): an LSTM whose units
update only while their time gate, an oscillation of learned period and phase, is open."""
from towers.compat import tf
from towers.legacy.contrib.rnn.base import LSTMStateTuple, RNNCell, linear


def _random_exp_initializer(minval, maxval, seed=None, dtype=tf.float32):
    """Draws `exp(U(log(minval), log(maxval)))`: log-uniform in [minval, maxval]."""
    def initializer(shape, dtype=dtype, partition_info=None):
        del partition_info
        return tf.exp(tf.random_uniform(shape, tf.log(minval), tf.log(maxval), dtype,
                                        seed=seed))
    return initializer


class PhasedLSTMCell(RNNCell):
    """A phased LSTM.

    Called on inputs (time [batch, 1], features [batch, input]) and a state
    LSTMStateTuple(c, h), it computes an LSTM step (gates in scopes `mask_gates`,
    `new_input` and `output_gate`, peepholes as extra inputs of the gates), then mixes the
    new and old state by the openness `k` of each unit's time gate: with `phase`, `period`
    and `ratio_on` [units] and `r` the fraction of the period elapsed, `k` rises from 0 to 1
    over the first half of the open fraction `ratio_on`, falls back over the second, and is
    `leak * r` while closed.

    Args:
      num_units: the number of cells.
      use_peepholes: whether the gates see the cell state.
      leak: the slope of `k` while the gate is closed (during training).
      ratio_on: the initial open fraction of the period.
      trainable_ratio_on: whether `ratio_on` is trained.
      period_init_min: the least initial period (periods start log-uniform).
      period_init_max: the greatest initial period.
      reuse: whether to reuse the variables of an earlier cell of the same scope.
    """

    def __init__(self, num_units, use_peepholes=False, leak=0.001, ratio_on=0.1,
                 trainable_ratio_on=True, period_init_min=1.0, period_init_max=1000.0,
                 reuse=None):
        super().__init__(_reuse=reuse, autocast=False)
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._leak = leak
        self._ratio_on = ratio_on
        self._trainable_ratio_on = trainable_ratio_on
        self._period_init_min = period_init_min
        self._period_init_max = period_init_max

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self):
        return self._num_units

    @staticmethod
    def _cycle_ratio(time, phase, period):
        """The elapsed fraction of the period at `time` (as float32), in `time`'s dtype,
        with the gradient of the time itself through the modulo."""
        shifted = time - tf.cast(phase, time.dtype)
        period = tf.cast(period, time.dtype)
        wrapped = tf.stop_gradient(tf.mod(shifted, period) - shifted) + shifted
        return tf.cast(wrapped / period, tf.float32)

    def _gates(self, x, c_prev, h_prev):
        """(new c, new h) of the plain LSTM step."""
        peephole = [c_prev] if self._use_peepholes else []
        with tf.variable_scope('mask_gates'):
            input_gate, forget_gate = tf.split(
                tf.sigmoid(linear([x, h_prev] + peephole, 2 * self._num_units, True)), 2, 1)
        with tf.variable_scope('new_input'):
            new_input = tf.tanh(linear([x, h_prev], self._num_units, True))
        new_c = c_prev * forget_gate + input_gate * new_input
        peephole = [new_c] if self._use_peepholes else []
        with tf.variable_scope('output_gate'):
            output_gate = tf.sigmoid(linear([x, h_prev] + peephole, self._num_units, True))
        return new_c, tf.tanh(new_c) * output_gate

    def call(self, inputs, state):
        c_prev, h_prev = state
        time, x = inputs
        new_c, new_h = self._gates(x, c_prev, h_prev)
        units = [self._num_units]
        period = tf.get_variable('period', units, initializer=_random_exp_initializer(
            self._period_init_min, self._period_init_max))
        phase = tf.get_variable('phase', units, initializer=tf.random_uniform_initializer(
            0., period.initial_value))
        ratio_on = tf.get_variable('ratio_on', units,
                                   initializer=tf.constant_initializer(self._ratio_on),
                                   trainable=self._trainable_ratio_on)
        ratio = self._cycle_ratio(time, phase, period)
        k_up = 2 * ratio / ratio_on
        k = tf.where(ratio < ratio_on, 2 - k_up, self._leak * ratio)
        k = tf.where(ratio < 0.5 * ratio_on, k_up, k)
        new_c = k * new_c + (1 - k) * c_prev
        new_h = k * new_h + (1 - k) * h_prev
        return new_h, LSTMStateTuple(new_c, new_h)
