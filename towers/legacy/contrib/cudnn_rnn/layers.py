"""TF 1.15's cuDNN RNN layers: `CudnnLSTM`, `CudnnGRU`, `CudnnRNNTanh`, `CudnnRNNRelu`.

A layer keeps all its layers' and directions' parameters in one variable, `opaque_kernel`
(in the layer's scope, `cudnn_lstm`, ...), and registers a saveable that writes them to
checkpoints as the compatible cells' canonical weights (`saveable.py`). On a GPU it runs
TensorFlow's cuDNN kernels, as TF 1.15 did; elsewhere it runs the compatible cells' steps
(`cells.py`) on the same parameters in `tf.nn.dynamic_rnn`, layer by layer, so that it
computes the same function and keeps one checkpoint format. The GPU path is TF 1.15's calls
of TensorFlow's kernels; this project's tests, which have no GPU, run the other.
"""
from towers.compat import tf
from towers.legacy.contrib.cudnn_rnn import cells, params, saveable
from towers.legacy.contrib.rnn.base import InputSpec, Layer, LSTMStateTuple

__all__ = ['CudnnLSTM', 'CudnnGRU', 'CudnnRNNTanh', 'CudnnRNNRelu']

_CONVERTERS = {params.CUDNN_LSTM: params.CudnnParamsFormatConverterLSTM,
               params.CUDNN_GRU: params.CudnnParamsFormatConverterGRU,
               params.CUDNN_RNN_TANH: params.CudnnParamsFormatConverterTanh,
               params.CUDNN_RNN_RELU: params.CudnnParamsFormatConverterRelu}


class _CanonicalCell:
    """A cuDNN-compatible cell on given TF canonical tensors of one layer and direction,
    for `tf.nn.dynamic_rnn`."""

    def __init__(self, rnn_mode, num_units, weights, biases):
        self._rnn_mode = rnn_mode
        self._num_units = num_units
        self._weights = list(weights) + list(biases)

    @property
    def state_size(self):
        if self._rnn_mode == params.CUDNN_LSTM:
            return LSTMStateTuple(self._num_units, self._num_units)
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    def zero_state(self, batch_size, dtype):
        return tf.nest.map_structure(lambda width: tf.zeros([batch_size, width], dtype),
                                     self.state_size)

    def __call__(self, inputs, state, scope=None):
        if self._rnn_mode == params.CUDNN_LSTM:
            return cells.lstm_step(inputs, state, *self._weights)
        if self._rnn_mode == params.CUDNN_GRU:
            new_state = cells.gru_step(inputs, state, *self._weights)
        else:
            activation = tf.tanh if self._rnn_mode == params.CUDNN_RNN_TANH else tf.nn.relu
            new_state = cells.basic_step(inputs, state, *self._weights, activation=activation)
        return new_state, new_state


class _CudnnRNN(Layer):
    """A multi-layer RNN of one of cuDNN's kinds over time-major (or batch-major) inputs.

    Args:
      num_layers: the number of layers.
      num_units: the units of each layer and direction.
      input_mode: 'linear_input' (the default: the first layer projects its inputs),
        'skip_input' or 'auto_select' (which need a GPU, as cuDNN decides them).
      direction: 'unidirectional' or 'bidirectional' (each layer's output concatenates
        the forward and backward outputs).
      dropout: the dropout rate between layers in training.
      seed: the op seed of the dropout and of the default weight initializer.
      dtype: float16, float32 or float64.
      kernel_initializer: the initializer of each cuDNN canonical weight matrix (default
        Glorot uniform).
      bias_initializer: the initializer of each cuDNN canonical bias (default zeros).
      name: the layer's name and variable scope (default from the class: `cudnn_lstm`).

    Called on inputs [time, batch, input] (with `time_major`, else [batch, time, input]),
    an optional `initial_state` (a tuple: (h, c) for an LSTM, (h,) otherwise, each
    [layers * directions, batch, units], or [batch, layers * directions, units] without
    `time_major`), optional `sequence_lengths` [batch] and `training`, it returns
    (outputs [time, batch, directions * units] (batch-major without `time_major`), final
    states of the initial state's structure). Past a sequence's length the outputs are
    zero and the states are those at its end.
    """

    _rnn_mode = None
    _num_params_per_layer = None
    _saveable_cls = None

    def __init__(self, num_layers, num_units, input_mode=params.CUDNN_INPUT_LINEAR_MODE,
                 direction=params.CUDNN_RNN_UNIDIRECTION, dropout=0., seed=None,
                 dtype=tf.float32, kernel_initializer=None, bias_initializer=None, name=None):
        super().__init__(dtype=dtype, name=name)
        params.check_direction(direction)
        params.check_input_mode(input_mode)
        if dtype not in (tf.float16, tf.float32, tf.float64):
            raise ValueError('%s: only float16, float32 and float64 are supported, got %s'
                             % (type(self).__name__, dtype))
        self._plain_dtype = tf.as_dtype(dtype)
        self._num_layers = num_layers
        self._num_units = num_units
        self._input_mode = input_mode
        self._direction = direction
        self._dropout = dropout
        self._seed = seed
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer
        self._input_size = None
        self._saveable = None

    num_layers = property(lambda self: self._num_layers)
    num_units = property(lambda self: self._num_units)
    input_mode = property(lambda self: self._input_mode, doc="cuDNN's input mode.")
    rnn_mode = property(lambda self: self._rnn_mode,
                        doc="'lstm', 'gru', 'rnn_relu' or 'rnn_tanh'.")
    direction = property(lambda self: self._direction)
    saveable = property(lambda self: self._saveable)

    @property
    def num_dirs(self):
        return 1 if self._direction == params.CUDNN_RNN_UNIDIRECTION else 2

    @property
    def input_size(self):
        if not self._input_size:
            raise ValueError('%s: the input size is unknown until the layer is built'
                             % self.name)
        return self._input_size

    def _converter(self):
        if not self._input_size:
            raise RuntimeError('%s: the input size is unknown before the layer is built'
                               % type(self).__name__)
        return _CONVERTERS[self._rnn_mode](
            self._num_layers, self._num_units, self._input_size, input_mode=self._input_mode,
            direction=self._direction, dropout=self._dropout, seed=self._seed)

    @property
    def canonical_weight_shapes(self):
        """The shapes of the cuDNN canonical weights: [units, width] per gate, on the inputs
        then on the state, per layer and direction."""
        return [list(shape) for shape in self._converter().cu_weight_shapes()]

    @property
    def canonical_bias_shapes(self):
        """The shapes of the cuDNN canonical biases."""
        per_layer = [[self._num_units]] * self.num_dirs * self._num_params_per_layer
        return per_layer * self._num_layers

    def state_shape(self, batch_size):
        """The shapes of the states: [layers * directions, batch_size, units] each."""
        shape = [self._num_layers * self.num_dirs, batch_size, self._num_units]
        return (shape, shape) if self._rnn_mode == params.CUDNN_LSTM else (shape,)

    def _update_trainable_weights(self, getter, *args, **kwargs):
        variable = getter(*args, **kwargs)
        weights = (self._trainable_weights if kwargs.get('trainable', True)
                   else self._non_trainable_weights)
        if all(variable is not known for known in weights):
            weights.append(variable)
        return variable

    def build(self, input_shape):
        if self.built:
            return
        input_shape = tf.TensorShape(input_shape)
        if input_shape.ndims != 3:
            raise ValueError('%s: the inputs must have 3 dimensions, got shape %s'
                             % (type(self).__name__, input_shape))
        self._input_size = tf.compat.dimension_value(input_shape[-1])
        if self._input_size is None:
            raise ValueError('%s: the last dimension of the inputs must be known, got shape '
                             '%s' % (type(self).__name__, input_shape))
        self.input_spec = InputSpec(ndim=3, axes={-1: self._input_size})
        self._set_scope(None)
        with tf.variable_scope(self._scope, reuse=self.built,
                               custom_getter=self._update_trainable_weights):
            if self._kernel_initializer is None:
                self._kernel_initializer = tf.glorot_uniform_initializer(
                    seed=self._seed, dtype=self._plain_dtype)
            if self._bias_initializer is None:
                self._bias_initializer = tf.constant_initializer(0.0, dtype=self._plain_dtype)
            weights = [self._kernel_initializer(shape, dtype=self._plain_dtype)
                       for shape in self.canonical_weight_shapes]
            biases = [self._bias_initializer(shape, dtype=self._plain_dtype)
                      for shape in self.canonical_bias_shapes]
            opaque = self._converter().cu_canonical_to_opaque(weights, biases)
            if tf.get_variable_scope().partitioner is not None:
                tf.logging.warn('Partitioner is not supported for Cudnn RNN layer variables, '
                                'using it will create forward-compatibility issues with '
                                'future CUDA/CuDNN generations.')
            self.kernel = tf.get_variable('opaque_kernel', dtype=self._plain_dtype,
                                          initializer=opaque, validate_shape=False)
        if not (self.built or tf.get_variable_scope().reuse is True):
            self._create_saveable()
        self.built = True

    def _create_saveable(self):
        if self._saveable is not None:
            raise RuntimeError('%s: its saveable exists already' % self.name)
        opaque = self.trainable_variables[0]
        self._saveable = self._saveable_cls(
            opaque_params=opaque, num_layers=self._num_layers, num_units=self._num_units,
            input_size=self._input_size, input_mode=self._input_mode,
            direction=self._direction, scope=tf.get_variable_scope(),
            name='%s_saveable' % opaque.name.split(':')[0])
        tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS, self._saveable)

    def call(self, inputs, initial_state=None, sequence_lengths=None, time_major=True,
             training=True):
        if initial_state is not None and not isinstance(initial_state, tuple):
            raise TypeError('Invalid initial_state type: %s, expecting tuple.' % initial_state)
        inputs = tf.convert_to_tensor(inputs, dtype=self.dtype)
        if initial_state is None:
            batch_size = tf.shape(inputs)[1 if time_major else 0]
            initial_state = tuple(tf.zeros(shape, dtype=self.dtype)
                                  for shape in self.state_shape(batch_size))
            if not time_major:
                initial_state = tuple(tf.transpose(s, [1, 0, 2]) for s in initial_state)
        states = [tf.convert_to_tensor(s, dtype=self.dtype) for s in initial_state]
        h = states[0]
        c = states[1] if self._rnn_mode == params.CUDNN_LSTM else tf.constant([], self.dtype)
        forward = self._forward_cudnn if params.cudnn_available() else self._forward_steps
        outputs, output_h, output_c = forward(inputs, h, c, sequence_lengths, time_major,
                                              training)
        if self._rnn_mode == params.CUDNN_LSTM:
            return outputs, (output_h, output_c)
        return outputs, (output_h,)

    def _forward_cudnn(self, inputs, h, c, sequence_lengths, time_major, training):
        """TensorFlow's cuDNN kernel, called as TF 1.15 called it."""
        seed, seed2 = params.kernel_seeds(self._seed)
        args = dict(input=inputs, input_h=h, input_c=c, params=self.kernel,
                    is_training=training, rnn_mode=self._rnn_mode,
                    input_mode=self._input_mode, direction=self._direction,
                    dropout=self._dropout, seed=seed, seed2=seed2)
        if sequence_lengths is None and time_major:
            outputs, output_h, output_c, _ = tf.raw_ops.CudnnRNN(**args)
            return outputs, output_h, output_c
        if sequence_lengths is None:
            shape = tf.shape(inputs)
            sequence_lengths = tf.fill([shape[0]], shape[1])
        outputs, output_h, output_c, _, _ = tf.raw_ops.CudnnRNNV3(
            sequence_lengths=sequence_lengths, time_major=time_major, num_proj=0, **args)
        return outputs, output_h, output_c

    def _canonical_cells(self):
        """A `_CanonicalCell` per layer and direction, on the weights of `opaque_kernel`."""
        weights, biases = self._converter().opaque_to_tf_canonical(self.kernel)
        count = self._num_layers * self.num_dirs
        per_cell = len(weights) // count
        return [_CanonicalCell(self._rnn_mode, self._num_units,
                               weights[k * per_cell:(k + 1) * per_cell],
                               biases[k * per_cell:(k + 1) * per_cell]) for k in range(count)]

    def _forward_steps(self, inputs, h, c, sequence_lengths, time_major, training):
        """The compatible cells' steps on the canonical weights of `opaque_kernel`."""
        if self._input_mode == params.CUDNN_INPUT_SKIP_MODE or (
                self._input_mode == params.CUDNN_INPUT_AUTO_MODE
                and self._input_size == self._num_units):
            raise ValueError("%s: input_mode 'skip_input' needs cuDNN, on a GPU"
                             % type(self).__name__)
        lstm = self._rnn_mode == params.CUDNN_LSTM
        if not time_major:
            inputs, h = tf.transpose(inputs, [1, 0, 2]), tf.transpose(h, [1, 0, 2])
            if lstm:
                c = tf.transpose(c, [1, 0, 2])
        cells_in_order = self._canonical_cells()
        initial = [LSTMStateTuple(c[k], h[k]) if lstm else h[k]
                   for k in range(self._num_layers * self.num_dirs)]
        finals = []
        layer_inputs = inputs
        for layer in range(self._num_layers):
            if layer and training and self._dropout > 0:
                layer_inputs = tf.nn.dropout(layer_inputs, rate=self._dropout, seed=self._seed)
            first = layer * self.num_dirs
            layer_cells = cells_in_order[first:first + self.num_dirs]
            with tf.variable_scope('layer_%d' % layer):
                if self.num_dirs == 1:
                    layer_inputs, final = tf.nn.dynamic_rnn(
                        layer_cells[0], layer_inputs, sequence_length=sequence_lengths,
                        initial_state=initial[first], time_major=True)
                    finals.append(final)
                else:
                    outputs, layer_finals = tf.nn.bidirectional_dynamic_rnn(
                        layer_cells[0], layer_cells[1], layer_inputs,
                        sequence_length=sequence_lengths, initial_state_fw=initial[first],
                        initial_state_bw=initial[first + 1], time_major=True)
                    layer_inputs = tf.concat(outputs, 2)
                    finals += list(layer_finals)
        output_h = tf.stack([final.h if lstm else final for final in finals])
        output_c = tf.stack([final.c for final in finals]) if lstm else c
        if not time_major:
            layer_inputs = tf.transpose(layer_inputs, [1, 0, 2])
            output_h = tf.transpose(output_h, [1, 0, 2])
            if lstm:
                output_c = tf.transpose(output_c, [1, 0, 2])
        return layer_inputs, output_h, output_c


class CudnnLSTM(_CudnnRNN):
    """A cuDNN LSTM (`CudnnCompatibleLSTMCell`'s function); states (h, c)."""

    _rnn_mode = params.CUDNN_LSTM
    _num_params_per_layer = params.CUDNN_LSTM_PARAMS_PER_LAYER
    _saveable_cls = saveable.CudnnLSTMSaveable


class CudnnGRU(_CudnnRNN):
    """A cuDNN GRU (`CudnnCompatibleGRUCell`'s function); states (h,)."""

    _rnn_mode = params.CUDNN_GRU
    _num_params_per_layer = params.CUDNN_GRU_PARAMS_PER_LAYER
    _saveable_cls = saveable.CudnnGRUSaveable


class CudnnRNNTanh(_CudnnRNN):
    """A cuDNN tanh RNN (`BasicRNNCell`'s function); states (h,)."""

    _rnn_mode = params.CUDNN_RNN_TANH
    _num_params_per_layer = params.CUDNN_RNN_TANH_PARAMS_PER_LAYER
    _saveable_cls = saveable.CudnnRNNTanhSaveable


class CudnnRNNRelu(_CudnnRNN):
    """A cuDNN relu RNN (`BasicRNNCell`'s function with relu); states (h,)."""

    _rnn_mode = params.CUDNN_RNN_RELU
    _num_params_per_layer = params.CUDNN_RNN_RELU_PARAMS_PER_LAYER
    _saveable_cls = saveable.CudnnRNNReluSaveable
