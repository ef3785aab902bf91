"""The parameters of TF 1.15's cuDNN RNNs in their three forms, and the converters between
them (`CudnnParamsFormatConverter<Mode>`).

- opaque: the one flat buffer a layer keeps in its `opaque_kernel` variable;
- cuDNN canonical: per layer and direction, for each gate a matrix [units, width] applied to
  the layer's input, then one [units, units] applied to the state, and as many biases
  [units] (cuDNN adds the input's and the state's bias);
- TF canonical: the variables of the compatible cells (`kernel` [width + units, gates *
  units] with the gates in TF's order, and `bias`, the sum of cuDNN's two).

On a GPU, opaque and cuDNN canonical convert by TensorFlow's cuDNN kernels, whose layout
cuDNN chooses. Elsewhere the opaque buffer is the cuDNN canonical weights, each flattened
row-major, layer by layer and forward before backward, followed by the biases in the same
order: the layout cuDNN uses for these RNNs as far as is known (frameworks that hand cuDNN
such a buffer of their own rely on it). A checkpoint also holds the TF canonical weights
(the saveables of `saveable.py`), which restore on either kind of machine.
"""
from towers.compat import tf

CUDNN_RNN_UNIDIRECTION = 'unidirectional'
CUDNN_RNN_BIDIRECTION = 'bidirectional'
CUDNN_LSTM = 'lstm'
CUDNN_GRU = 'gru'
CUDNN_RNN_RELU = 'rnn_relu'
CUDNN_RNN_TANH = 'rnn_tanh'
CUDNN_LSTM_PARAMS_PER_LAYER = 8
CUDNN_GRU_PARAMS_PER_LAYER = 6
CUDNN_RNN_TANH_PARAMS_PER_LAYER = 2
CUDNN_RNN_RELU_PARAMS_PER_LAYER = 2
CUDNN_INPUT_LINEAR_MODE = 'linear_input'
CUDNN_INPUT_SKIP_MODE = 'skip_input'
CUDNN_INPUT_AUTO_MODE = 'auto_select'


def check_direction(direction):
    """Raises ValueError unless `direction` is 'unidirectional' or 'bidirectional'."""
    if direction not in (CUDNN_RNN_UNIDIRECTION, CUDNN_RNN_BIDIRECTION):
        raise ValueError('Invalid direction: %s, expecting %s or %s'
                         % (direction, CUDNN_RNN_UNIDIRECTION, CUDNN_RNN_BIDIRECTION))


def check_input_mode(input_mode):
    """Raises ValueError unless `input_mode` is one of cuDNN's three."""
    modes = (CUDNN_INPUT_LINEAR_MODE, CUDNN_INPUT_SKIP_MODE, CUDNN_INPUT_AUTO_MODE)
    if input_mode not in modes:
        raise ValueError('Invalid input_mode: %s, expect one of %s' % (input_mode, modes))


def cudnn_available():
    """Whether cuDNN's kernels can run: a GPU is visible to this process."""
    return bool(tf.config.list_physical_devices('GPU'))


def kernel_seeds(seed):
    """The (seed, seed2) attributes of the cuDNN kernels for op seed `seed`."""
    seed, seed2 = tf.get_seed(seed)
    return seed or 0, seed2 or 0


class CudnnParamsFormatConverter:
    """Converts the parameters of one cuDNN RNN between the opaque buffer and the TF
    canonical weights (see the module).

    Args:
      num_layers: the number of layers.
      num_units: the units of each layer and direction.
      input_size: the width of the inputs of the first layer.
      num_proj: LSTM projections, which are not supported (None or 0).
      input_mode: cuDNN's input mode ('linear_input' off a GPU).
      direction: 'unidirectional' or 'bidirectional'.
      dropout: the dropout attribute of the GPU kernels.
      seed: the op seed of the GPU kernels.
    """

    _rnn_mode = None
    _num_params_per_layer = None

    def __init__(self, num_layers, num_units, input_size, num_proj=None,
                 input_mode=CUDNN_INPUT_LINEAR_MODE, direction=CUDNN_RNN_UNIDIRECTION,
                 dropout=0.0, seed=None):
        if num_proj:
            raise ValueError('%s: LSTM projections (num_proj) are not supported'
                             % type(self).__name__)
        check_input_mode(input_mode)
        check_direction(direction)
        self._num_layers = num_layers
        self._num_units = num_units
        self._input_size = input_size
        self._input_mode = input_mode
        self._direction = direction
        self._num_dirs = 1 if direction == CUDNN_RNN_UNIDIRECTION else 2
        self._dropout = dropout
        self._seed = seed

    @property
    def _num_gates(self):
        return self._num_params_per_layer // 2

    def _input_width(self, layer):
        return self._input_size if layer == 0 else self._num_units * self._num_dirs

    def cu_weight_shapes(self):
        """The shapes of the cuDNN canonical weights, in order."""
        shapes = []
        for layer in range(self._num_layers):
            per_direction = ([(self._num_units, self._input_width(layer))] * self._num_gates
                             + [(self._num_units, self._num_units)] * self._num_gates)
            shapes += per_direction * self._num_dirs
        return shapes

    def cu_bias_shapes(self):
        """The shapes of the cuDNN canonical biases, in order."""
        count = self._num_params_per_layer * self._num_layers * self._num_dirs
        return [(self._num_units,)] * count

    def _kernel_attrs(self):
        seed, seed2 = kernel_seeds(self._seed)
        return dict(num_layers=self._num_layers, num_units=self._num_units,
                    input_size=self._input_size, rnn_mode=self._rnn_mode,
                    input_mode=self._input_mode, direction=self._direction, seed=seed,
                    seed2=seed2)

    def cu_canonical_to_opaque(self, cu_weights, cu_biases):
        """The opaque buffer of cuDNN canonical weights and biases (lists of tensors)."""
        if cudnn_available():
            with tf.device('/gpu:0'):
                return tf.raw_ops.CudnnRNNCanonicalToParams(
                    weights=[tf.reshape(w, [-1]) for w in cu_weights], biases=cu_biases,
                    dropout=self._dropout, **self._kernel_attrs())
        return tf.concat([tf.reshape(t, [-1]) for t in list(cu_weights) + list(cu_biases)], 0)

    def opaque_to_cu_canonical(self, opaque):
        """(cuDNN canonical weights, biases) of the opaque buffer `opaque`."""
        weight_shapes, bias_shapes = self.cu_weight_shapes(), self.cu_bias_shapes()
        if cudnn_available():
            with tf.device('/gpu:0'):
                weights, biases = tf.raw_ops.CudnnRNNParamsToCanonical(
                    params=opaque, num_params=len(weight_shapes), **self._kernel_attrs())
            return list(weights), list(biases)
        sizes = [rows * cols for rows, cols in weight_shapes] + [n for n, in bias_shapes]
        pieces = tf.split(opaque[:sum(sizes)], sizes)
        weights = [tf.reshape(piece, shape) for piece, shape in zip(pieces, weight_shapes)]
        return weights, pieces[len(weight_shapes):]

    def _groups(self, items, per_group):
        """`items` in consecutive groups of `per_group`."""
        return [items[i:i + per_group] for i in range(0, len(items), per_group)]

    def cu_to_tf_canonical(self, cu_weights, cu_biases):
        """(TF canonical weights, biases): lists over layers and directions."""
        weights, biases = [], []
        per = self._num_params_per_layer
        for cu_w, cu_b in zip(self._groups(cu_weights, per), self._groups(cu_biases, per)):
            weights += self._tf_weights(cu_w)
            biases += self._tf_biases(cu_b)
        return weights, biases

    def tf_to_cu_canonical(self, tf_weights, tf_biases):
        """(cuDNN canonical weights, biases) of TF canonical ones."""
        per = len(tf_weights) // (self._num_layers * self._num_dirs)
        cu_weights, cu_biases = [], []
        for index, (tf_w, tf_b) in enumerate(zip(self._groups(tf_weights, per),
                                                 self._groups(tf_biases, per))):
            cu_weights += self._cu_weights(self._input_width(index // self._num_dirs), tf_w)
            cu_biases += self._cu_biases(tf_b)
        return cu_weights, cu_biases

    def opaque_to_tf_canonical(self, opaque_param):
        """(TF canonical weights, biases) of the opaque buffer."""
        return self.cu_to_tf_canonical(*self.opaque_to_cu_canonical(opaque_param))

    def tf_canonical_to_opaque(self, tf_canonicals, weights_proj=None):
        """The opaque buffer of TF canonical weights followed by biases (one list)."""
        if weights_proj is not None:
            raise ValueError('%s: LSTM projections are not supported' % type(self).__name__)
        half = len(tf_canonicals) // 2
        return self.cu_canonical_to_opaque(*self.tf_to_cu_canonical(tf_canonicals[:half],
                                                                    tf_canonicals[half:]))

    def _tf_weights(self, cu_weights):
        raise NotImplementedError

    def _tf_biases(self, cu_biases):
        raise NotImplementedError

    def _cu_weights(self, input_width, tf_weights):
        raise NotImplementedError

    def _cu_biases(self, tf_biases):
        raise NotImplementedError


def _joined_kernel(gate_inputs, gate_states):
    """A TF kernel [width + units, gates * units] of per-gate cuDNN matrices."""
    return tf.transpose(tf.concat([tf.concat([w, r], axis=1)
                                   for w, r in zip(gate_inputs, gate_states)], axis=0))


def _split_kernel(kernel, gates, input_width):
    """The per-gate cuDNN matrices (on inputs, on states) of a TF kernel."""
    rows = tf.split(tf.transpose(kernel), gates, axis=0)
    pairs = [tf.split(row, [input_width, -1], axis=1) for row in rows]
    return [w for w, _ in pairs], [r for _, r in pairs]


class CudnnParamsFormatConverterLSTM(CudnnParamsFormatConverter):
    """LSTM parameters: cuDNN's gates i, f, c, o are TF's i, c (j), f, o."""

    _rnn_mode = CUDNN_LSTM
    _num_params_per_layer = CUDNN_LSTM_PARAMS_PER_LAYER
    _TF_ORDER = (0, 2, 1, 3)  # TF gate k is cuDNN gate _TF_ORDER[k], and back.

    def _reorder(self, items):
        return [items[k] for k in self._TF_ORDER]

    def _tf_weights(self, cu_weights):
        return [_joined_kernel(self._reorder(cu_weights[:4]), self._reorder(cu_weights[4:]))]

    def _tf_biases(self, cu_biases):
        return [tf.concat(self._reorder([w + r for w, r in zip(cu_biases[:4], cu_biases[4:])]),
                          axis=0)]

    def _cu_weights(self, input_width, tf_weights):
        inputs, states = _split_kernel(tf_weights[0], 4, input_width)
        return self._reorder(inputs) + self._reorder(states)

    def _cu_biases(self, tf_biases):
        halves = self._reorder([b * 0.5 for b in tf.split(tf_biases[0], 4, axis=0)])
        return halves + halves


class CudnnParamsFormatConverterGRU(CudnnParamsFormatConverter):
    """GRU parameters: TF's `gates/kernel` joins cuDNN's reset and update gates; the new
    memory gate's two matrices and biases stay apart (`candidate/input_projection`,
    `candidate/hidden_projection`)."""

    _rnn_mode = CUDNN_GRU
    _num_params_per_layer = CUDNN_GRU_PARAMS_PER_LAYER

    def _tf_weights(self, cu_weights):
        w_r, w_u, w_h, r_r, r_u, r_h = cu_weights
        return [_joined_kernel([w_r, w_u], [r_r, r_u]), tf.transpose(w_h), tf.transpose(r_h)]

    def _tf_biases(self, cu_biases):
        b_wr, b_wu, b_wh, b_rr, b_ru, b_rh = cu_biases
        return [tf.concat([b_wr, b_wu], 0) + tf.concat([b_rr, b_ru], 0), b_wh, b_rh]

    def _cu_weights(self, input_width, tf_weights):
        gates, input_kernel, hidden_kernel = tf_weights
        (w_r, w_u), (r_r, r_u) = _split_kernel(gates, 2, input_width)
        return [w_r, w_u, tf.transpose(input_kernel), r_r, r_u, tf.transpose(hidden_kernel)]

    def _cu_biases(self, tf_biases):
        gates, input_bias, hidden_bias = tf_biases
        b_r, b_u = tf.split(gates * 0.5, 2, axis=0)
        return [b_r, b_u, input_bias, b_r, b_u, hidden_bias]


class _CudnnParamsFormatConverterBasic(CudnnParamsFormatConverter):
    """Plain RNN parameters: one matrix on the inputs, one on the state, two biases."""

    def _tf_weights(self, cu_weights):
        return [_joined_kernel(cu_weights[:1], cu_weights[1:])]

    def _tf_biases(self, cu_biases):
        return [cu_biases[0] + cu_biases[1]]

    def _cu_weights(self, input_width, tf_weights):
        (w,), (r,) = _split_kernel(tf_weights[0], 1, input_width)
        return [w, r]

    def _cu_biases(self, tf_biases):
        half = tf_biases[0] * 0.5
        return [half, half]


class CudnnParamsFormatConverterTanh(_CudnnParamsFormatConverterBasic):
    """Parameters of a tanh RNN."""

    _rnn_mode = CUDNN_RNN_TANH
    _num_params_per_layer = CUDNN_RNN_TANH_PARAMS_PER_LAYER


class CudnnParamsFormatConverterRelu(_CudnnParamsFormatConverterBasic):
    """Parameters of a relu RNN."""

    _rnn_mode = CUDNN_RNN_RELU
    _num_params_per_layer = CUDNN_RNN_RELU_PARAMS_PER_LAYER
