"""TF 1.15's convolutional LSTMs (Shi et al., 2015, arXiv:1506.04214): `ConvLSTMCell` and
its 1-D, 2-D and 3-D forms, whose gates are 'SAME' convolutions of [inputs, h]."""
from towers.compat import tf
from towers.legacy.contrib.rnn.base import LSTMStateTuple, RNNCell

_CONVOLUTIONS = {3: tf.nn.conv1d, 4: tf.nn.conv2d, 5: tf.nn.conv3d}


def _conv(args, filter_size, num_features, bias, bias_start=0.0):
    """A stride-1 'SAME' convolution of the channel concatenation of `args` (each
    [batch, ..., channels], of rank 3 to 5) to `num_features`: `kernel`
    [*filter_size, channels, num_features], and `biases` [num_features] if `bias`."""
    shapes = [arg.shape.as_list() for arg in args]
    rank = len(shapes[0])
    for shape in shapes:
        if len(shape) not in _CONVOLUTIONS or len(shape) != rank:
            raise ValueError('ConvLSTMCell: the inputs and state must all be of one rank '
                             'among 3, 4 and 5, got shapes %s' % shapes)
    dtype = args[0].dtype
    kernel = tf.get_variable('kernel', filter_size + [sum(s[-1] for s in shapes), num_features],
                             dtype=dtype)
    strides = 1 if rank == 3 else [1] * rank
    joined = args[0] if len(args) == 1 else tf.concat(args, axis=rank - 1)
    result = _CONVOLUTIONS[rank](joined, kernel, strides, padding='SAME')
    if not bias:
        return result
    return result + tf.get_variable('biases', [num_features], dtype=dtype,
                                    initializer=tf.constant_initializer(bias_start,
                                                                        dtype=dtype))


class ConvLSTMCell(RNNCell):
    """A convolutional LSTM: the state (c, h) has the inputs' spatial shape with
    `output_channels` channels, and the gates i, j, f, o come from one convolution.

    Args:
      conv_ndims: the number of spatial dimensions (1, 2 or 3).
      input_shape: the shape of one input without the batch, channels last.
      output_channels: the channels of the state and output.
      kernel_shape: the spatial shape of the convolution.
      use_bias: whether the convolution has `biases`.
      skip_connection: whether the output is [h, inputs] (channels concatenated).
      forget_bias: added to the forget gate's pre-activation.
      initializers: unused, as in TF 1.x.
      name: the cell's name and variable scope.
    """

    def __init__(self, conv_ndims, input_shape, output_channels, kernel_shape, use_bias=True,
                 skip_connection=False, forget_bias=1.0, initializers=None,
                 name='conv_lstm_cell'):
        super().__init__(name=name)
        if conv_ndims != len(input_shape) - 1:
            raise ValueError('Invalid input_shape {} for conv_ndims={}.'.format(input_shape,
                                                                                conv_ndims))
        self._conv_ndims = conv_ndims
        self._output_channels = output_channels
        self._kernel_shape = list(kernel_shape)
        self._use_bias = use_bias
        self._forget_bias = forget_bias
        self._skip_connection = skip_connection
        state_shape = tf.TensorShape(list(input_shape[:-1]) + [output_channels])
        self._state_size = LSTMStateTuple(state_shape, state_shape)
        total_channels = output_channels + (input_shape[-1] if skip_connection else 0)
        self._output_size = tf.TensorShape(list(input_shape[:-1]) + [total_channels])

    @property
    def output_size(self):
        return self._output_size

    @property
    def state_size(self):
        return self._state_size

    def call(self, inputs, state, scope=None):
        cell, hidden = state
        gates = _conv([inputs, hidden], self._kernel_shape, 4 * self._output_channels,
                      self._use_bias)
        input_gate, new_input, forget_gate, output_gate = tf.split(
            gates, 4, axis=self._conv_ndims + 1)
        new_cell = tf.sigmoid(forget_gate + self._forget_bias) * cell
        new_cell += tf.sigmoid(input_gate) * tf.tanh(new_input)
        output = tf.tanh(new_cell) * tf.sigmoid(output_gate)
        if self._skip_connection:
            output = tf.concat([output, inputs], axis=-1)
        return output, LSTMStateTuple(new_cell, output)


class Conv1DLSTMCell(ConvLSTMCell):
    """`ConvLSTMCell` over one spatial dimension."""

    def __init__(self, name='conv_1d_lstm_cell', **kwargs):
        super().__init__(conv_ndims=1, name=name, **kwargs)


class Conv2DLSTMCell(ConvLSTMCell):
    """`ConvLSTMCell` over two spatial dimensions."""

    def __init__(self, name='conv_2d_lstm_cell', **kwargs):
        super().__init__(conv_ndims=2, name=name, **kwargs)


class Conv3DLSTMCell(ConvLSTMCell):
    """`ConvLSTMCell` over three spatial dimensions."""

    def __init__(self, name='conv_3d_lstm_cell', **kwargs):
        super().__init__(conv_ndims=3, name=name, **kwargs)
