"""TF 1.15's LSTM variants with optional layer normalisation (Ba et al., 2016,
arXiv:1607.06450, applied before the nonlinearities): `LayerNormBasicLSTMCell` (with
recurrent dropout), `LayerNormLSTMCell` (peepholes, clipping, projection) and
`CoupledInputForgetGateLSTMCell` (one gate for input and forgetting).

Gates split in the order i, j, f, o (j the new input). Each normalisation `<gate>` has
variables `<gate>/gamma` and `<gate>/beta`, starting at `norm_gain` and `norm_shift`, and
the cell state's is `state`. All three make their variables as they run, in the scope of
the cell (`layer_norm_basic_lstm_cell`, ...).
"""
from towers.compat import tf
from towers.legacy.contrib.rnn.base import (Linear, LSTMStateTuple, RNNCell, layer_norm,
                                            linear, lstm_state_sizes, static_width)


class LayerNormBasicLSTMCell(RNNCell):
    """A basic LSTM with layer normalisation and recurrent dropout of the new input
    (Semeniuta et al., 2016, arXiv:1603.05118).

    Args:
      num_units: the number of cells.
      forget_bias: added to the forget gate's pre-activation.
      input_size: ignored (TF 1.x had deprecated it).
      activation: the activation of the new input and of the output.
      layer_norm: whether the gates and the cell state are normalised (without, a `bias`
        is added to the gates).
      norm_gain: the initial gain of the normalisations.
      norm_shift: the initial shift of the normalisations.
      dropout_keep_prob: the keep probability of the new input (a float or a tensor); a
        float 1.0 means no dropout.
      dropout_prob_seed: the op seed of the dropout.
      reuse: whether to reuse the variables of an earlier cell of the same scope.
    """

    def __init__(self, num_units, forget_bias=1.0, input_size=None, activation=tf.tanh,
                 layer_norm=True, norm_gain=1.0, norm_shift=0.0, dropout_keep_prob=1.0,
                 dropout_prob_seed=None, reuse=None):
        super().__init__(_reuse=reuse)
        if input_size is not None:
            tf.logging.warn('%s: The input_size parameter is deprecated.', self)
        self._num_units = num_units
        self._activation = activation
        self._forget_bias = forget_bias
        self._keep_prob = dropout_keep_prob
        self._seed = dropout_prob_seed
        self._layer_norm = layer_norm
        self._norm_gain = norm_gain
        self._norm_shift = norm_shift

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._num_units)

    @property
    def output_size(self):
        return self._num_units

    def _norm(self, inputs, scope):
        return layer_norm(inputs, scope, self._norm_gain, self._norm_shift, inputs.dtype)

    def call(self, inputs, state):
        c, h = state
        args = tf.concat([inputs, h], 1)
        width = 4 * self._num_units
        kernel = tf.get_variable('kernel', [args.shape[-1], width], dtype=args.dtype)
        gates = tf.matmul(args, kernel)
        if not self._layer_norm:
            gates = tf.nn.bias_add(gates, tf.get_variable('bias', [width], dtype=args.dtype))
        i, j, f, o = tf.split(gates, 4, axis=1)
        if self._layer_norm:
            i, j, f, o = [self._norm(gate, scope) for gate, scope in
                          zip((i, j, f, o), ('input', 'transform', 'forget', 'output'))]
        g = self._activation(j)
        if not isinstance(self._keep_prob, float) or self._keep_prob < 1:
            g = tf.nn.dropout(g, self._keep_prob, seed=self._seed)
        new_c = c * tf.sigmoid(f + self._forget_bias) + tf.sigmoid(i) * g
        if self._layer_norm:
            new_c = self._norm(new_c, 'state')
        new_h = self._activation(new_c) * tf.sigmoid(o)
        return new_h, LSTMStateTuple(new_c, new_h)


class LayerNormLSTMCell(RNNCell):
    """`tf.nn.rnn_cell.LSTMCell` with optional layer normalisation (its `kernel`, `bias`,
    `w_*_diag` and `projection/kernel`; the bias is made but not added when normalising).

    Args:
      num_units: the number of cells.
      use_peepholes: whether the gates see the cell state through diagonal weights.
      cell_clip: the cell state is clipped to [-cell_clip, cell_clip] (None: no clipping).
      initializer: the initializer of the weights (default the scope's).
      num_proj: the width of a linear projection of the output, or None.
      proj_clip: the projection is clipped to [-proj_clip, proj_clip] (None: no clipping).
      forget_bias: added to the forget gate's pre-activation.
      activation: the activation of the new input and of the output (default tanh).
      layer_norm: whether the gates and the cell state are normalised.
      norm_gain: the initial gain of the normalisations.
      norm_shift: the initial shift of the normalisations.
      reuse: whether to reuse the variables of an earlier cell of the same scope.
    """

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, forget_bias=1.0, activation=None,
                 layer_norm=False, norm_gain=1.0, norm_shift=0.0, reuse=None):
        super().__init__(_reuse=reuse)
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._forget_bias = forget_bias
        self._activation = activation or tf.tanh
        self._layer_norm = layer_norm
        self._norm_gain = norm_gain
        self._norm_shift = norm_shift
        self._state_size, self._output_size = lstm_state_sizes(num_units, num_proj)

    @property
    def state_size(self):
        return self._state_size

    @property
    def output_size(self):
        return self._output_size

    def call(self, inputs, state):
        c_prev, m_prev = state
        static_width(inputs)  # raises unless the input width is known
        sigmoid, act = tf.sigmoid, self._activation
        with tf.variable_scope(tf.get_variable_scope(), initializer=self._initializer):
            gate_map = Linear([inputs, m_prev], 4 * self._num_units, True)
            gates = (gate_map.matmul if self._layer_norm else gate_map)([inputs, m_prev])
            i, j, f, o = tf.split(gates, 4, axis=1)
            if self._layer_norm:
                i, j, f, o = [layer_norm(gate, scope, self._norm_gain, self._norm_shift)
                              for gate, scope in zip((i, j, f, o),
                                                     ('input', 'transform', 'forget', 'output'))]
            if self._use_peepholes:
                w_f_diag, w_i_diag, w_o_diag = [
                    tf.get_variable(name, [self._num_units], dtype=inputs.dtype)
                    for name in ('w_f_diag', 'w_i_diag', 'w_o_diag')]
                c = (sigmoid(f + self._forget_bias + w_f_diag * c_prev) * c_prev
                     + sigmoid(i + w_i_diag * c_prev) * act(j))
            else:
                c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * act(j)
            if self._layer_norm:
                c = layer_norm(c, 'state', self._norm_gain, self._norm_shift)
            if self._cell_clip is not None:
                c = tf.clip_by_value(c, -self._cell_clip, self._cell_clip)
            if self._use_peepholes:
                m = sigmoid(o + w_o_diag * c) * act(c)
            else:
                m = sigmoid(o) * act(c)
            if self._num_proj is not None:
                with tf.variable_scope('projection'):
                    m = linear(m, self._num_proj, False)
                if self._proj_clip is not None:
                    m = tf.clip_by_value(m, -self._proj_clip, self._proj_clip)
        return m, LSTMStateTuple(c, m)


def _concat_variable(name, shape, dtype, num_shards):
    """A variable of `shape` kept in `num_shards` row shards `<name>_0`, `<name>_1`, ...:
    the one shard, or the shards' concatenation (made once per scope)."""
    if num_shards > shape[0]:
        raise ValueError('%s: %d shards are more than the %d rows of shape %s'
                         % (name, num_shards, shape[0], shape))
    rows, extra = divmod(shape[0], num_shards)
    shards = [tf.get_variable('%s_%d' % (name, i), [rows + (i < extra)] + shape[1:],
                              dtype=dtype) for i in range(num_shards)]
    if len(shards) == 1:
        return shards[0]
    concat_name = name + '/concat'
    full_name = '%s/%s:0' % (tf.get_variable_scope().name, concat_name)
    for value in tf.get_collection(tf.GraphKeys.CONCATENATED_VARIABLES):
        if value.name == full_name:
            return value
    joined = tf.concat(shards, 0, name=concat_name)
    tf.add_to_collection(tf.GraphKeys.CONCATENATED_VARIABLES, joined)
    return joined


class CoupledInputForgetGateLSTMCell(RNNCell):
    """An LSTM whose input gate is one minus its forget gate (Greff et al., 2015,
    arXiv:1503.04069), with optional peepholes (`W_F_diag`, `W_O_diag`), projection
    (`W_P_<shard>`) and layer normalisation; its weights are `W_<shard>` and `B`.

    Args:
      num_units: the number of cells.
      use_peepholes: whether the gates see the cell state through diagonal weights.
      initializer: ignored, as TF 1.x did.
      num_proj: the width of a linear projection of the output, or None.
      proj_clip: the projection is clipped to [-proj_clip, proj_clip] (None: no clipping).
      num_unit_shards: the number of row shards of the weights.
      num_proj_shards: the number of row shards of the projection.
      forget_bias: added to the forget gate's pre-activation.
      state_is_tuple: whether the state is (c, m) or their concatenation.
      activation: the activation of the new input and of the output.
      reuse: whether to reuse the variables of an earlier cell of the same scope.
      layer_norm: whether the gates and the cell state are normalised (the bias is then
        made but not added).
      norm_gain: the initial gain of the normalisations.
      norm_shift: the initial shift of the normalisations.
    """

    def __init__(self, num_units, use_peepholes=False, initializer=None, num_proj=None,
                 proj_clip=None, num_unit_shards=1, num_proj_shards=1, forget_bias=1.0,
                 state_is_tuple=True, activation=tf.tanh, reuse=None, layer_norm=False,
                 norm_gain=1.0, norm_shift=0.0):
        super().__init__(_reuse=reuse)
        if not state_is_tuple:
            tf.logging.warn('%s: Using a concatenated state is slower and will soon be '
                            'deprecated.  Use state_is_tuple=True.', self)
        self._num_units = num_units
        self._use_peepholes = use_peepholes
        self._initializer = initializer
        self._num_proj = num_proj
        self._proj_clip = proj_clip
        self._num_unit_shards = num_unit_shards
        self._num_proj_shards = num_proj_shards
        self._forget_bias = forget_bias
        self._state_is_tuple = state_is_tuple
        self._activation = activation
        self._layer_norm = layer_norm
        self._norm_gain = norm_gain
        self._norm_shift = norm_shift
        state_size, self._output_size = lstm_state_sizes(num_units, num_proj)
        self._state_size = state_size if state_is_tuple else sum(state_size)

    @property
    def state_size(self):
        return self._state_size

    @property
    def output_size(self):
        return self._output_size

    def _norm(self, inputs, scope):
        return layer_norm(inputs, scope, self._norm_gain, self._norm_shift)

    def call(self, inputs, state):
        sigmoid = tf.sigmoid
        num_proj = self._num_units if self._num_proj is None else self._num_proj
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev, m_prev = tf.split(state, [self._num_units, num_proj], 1)
        dtype = inputs.dtype
        weights = _concat_variable('W', [static_width(inputs) + num_proj, 3 * self._num_units],
                                   dtype, self._num_unit_shards)
        bias = tf.get_variable('B', [3 * self._num_units], dtype=dtype,
                               initializer=tf.zeros_initializer())
        gates = tf.matmul(tf.concat([inputs, m_prev], 1), weights)
        if not self._layer_norm:
            gates = tf.nn.bias_add(gates, bias)
        j, f, o = tf.split(gates, 3, axis=1)
        if self._layer_norm:
            j, f, o = (self._norm(j, 'transform'), self._norm(f, 'forget'),
                       self._norm(o, 'output'))
        if self._use_peepholes:
            w_f_diag = tf.get_variable('W_F_diag', [self._num_units], dtype=dtype)
            w_o_diag = tf.get_variable('W_O_diag', [self._num_units], dtype=dtype)
            f_act = sigmoid(f + self._forget_bias + w_f_diag * c_prev)
        else:
            f_act = sigmoid(f + self._forget_bias)
        c = f_act * c_prev + (1 - f_act) * self._activation(j)
        if self._layer_norm:
            c = self._norm(c, 'state')
        if self._use_peepholes:
            m = sigmoid(o + w_o_diag * c) * self._activation(c)
        else:
            m = sigmoid(o) * self._activation(c)
        if self._num_proj is not None:
            m = tf.matmul(m, _concat_variable('W_P', [self._num_units, self._num_proj], dtype,
                                              self._num_proj_shards))
            if self._proj_clip is not None:
                m = tf.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else tf.concat([c, m], 1)
        return m, new_state
