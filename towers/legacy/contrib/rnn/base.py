"""What the cells of this package share: TensorFlow's own v1 cell classes (tf-keras's, which
`tf.nn.rnn_cell` is), the linear map of the cells that make their variables while they run,
and layer normalisation on gain and shift variables made beforehand.

Under the runner `tf.nn.rnn_cell` is tf-keras's legacy cells (`TF_USE_LEGACY_KERAS=1`), so
the cells here are `tf.nn.rnn_cell.RNNCell`s: `MultiRNNCell`, `DropoutWrapper` and
`tf.nn.dynamic_rnn` take them, and they name their variables as TF 1.x's did.
"""
from towers.compat import keras, rnn_cells, slim, tf, tf_layers

# The module of the runner's `tf.nn.rnn_cell` classes, read directly (`towers.compat`): it also
# holds `LayerRNNCell`, and `tf.nn.rnn_cell` itself refuses outside the runner
# (`TF_USE_LEGACY_KERAS`).
legacy_cells = rnn_cells
RNNCell = legacy_cells.RNNCell
LayerRNNCell = legacy_cells.LayerRNNCell
LSTMStateTuple = legacy_cells.LSTMStateTuple
InputSpec = keras.layers.InputSpec
Layer = tf_layers.base.Layer


def static_width(tensor, axis=-1):
    """The static size of `tensor`'s `axis`, or a ValueError naming the tensor."""
    width = tf.TensorShape(tensor.shape).with_rank_at_least(1)[axis]
    width = tf.compat.dimension_value(width)
    if width is None:
        raise ValueError('the size of axis %d of %s must be known, but its shape is %s'
                         % (axis, getattr(tensor, 'name', tensor), tensor.shape))
    return width


class Linear:
    """`concat(args, 1) @ kernel + bias`, with `kernel` [total width, output_size] and `bias`
    [output_size] made (or reused) in the variable scope current at construction.

    Args:
      args: a [batch, n] tensor, or a list of [batch, n_i] tensors.
      output_size: the width of the result.
      build_bias: whether there is a `bias` (never partitioned).
      bias_initializer: `bias`'s initializer (default zeros).
      kernel_initializer: `kernel`'s initializer (default the scope's).
    """

    def __init__(self, args, output_size, build_bias, bias_initializer=None,
                 kernel_initializer=None):
        args = tf.nest.flatten(args)
        if not args:
            raise ValueError('Linear needs at least one input')
        for arg in args:
            if arg.shape.ndims != 2:
                raise ValueError('Linear takes 2-D inputs, got %s of shape %s'
                                 % (arg.name, arg.shape))
        dtype = args[0].dtype
        width = sum(static_width(arg) for arg in args)
        self._kernel = tf.get_variable('kernel', [width, output_size], dtype=dtype,
                                       initializer=kernel_initializer)
        self._bias = None
        if build_bias:
            with tf.variable_scope(tf.get_variable_scope()) as unpartitioned:
                unpartitioned.set_partitioner(None)
                self._bias = tf.get_variable(
                    'bias', [output_size], dtype=dtype,
                    initializer=bias_initializer or tf.constant_initializer(0.0, dtype=dtype))

    def matmul(self, args):
        """`concat(args, 1) @ kernel`, without the bias."""
        args = tf.nest.flatten(args)
        return tf.matmul(args[0] if len(args) == 1 else tf.concat(args, 1), self._kernel)

    def __call__(self, args):
        result = self.matmul(args)
        return result if self._bias is None else tf.nn.bias_add(result, self._bias)


def linear(args, output_size, bias, bias_initializer=None, kernel_initializer=None):
    """`Linear(...)(args)`: TF 1.x's `_linear`, for the code that imported it."""
    return Linear(args, output_size, bias, bias_initializer, kernel_initializer)(args)


def layer_norm(inputs, scope, gain, shift, dtype=tf.float32):
    """Layer normalisation of `inputs` [batch, n] over its last axis, with `gamma` and `beta`
    [n] made in variable scope `scope` starting at `gain` and `shift`."""
    with tf.variable_scope(scope):
        tf.get_variable('gamma', inputs.shape[-1:], dtype=dtype,
                        initializer=tf.constant_initializer(gain))
        tf.get_variable('beta', inputs.shape[-1:], dtype=dtype,
                        initializer=tf.constant_initializer(shift))
    return slim.layer_norm(inputs, reuse=True, scope=scope)


def lstm_state_sizes(num_units, num_proj):
    """(state_size, output_size) of an LSTM with `num_units` cells and an optional
    projection to `num_proj`."""
    output_size = num_proj or num_units
    return LSTMStateTuple(num_units, output_size), output_size


def register_gradient(op_type):
    """A decorator that registers the gradient of `op_type`, unless TensorFlow already has
    one (TF 1.x registered those of the block kernels in `tf.contrib.rnn`; TensorFlow 2
    keeps the kernels but registers only `BlockLSTM`'s)."""
    def register(gradient):
        try:
            tf.RegisterGradient(op_type)(gradient)
        except KeyError:
            pass
        return gradient
    return register


def check_cell(argument, cell):
    """Raises TypeError unless `cell` (the value of `argument`) acts as an RNN cell."""
    lacking = [attr for attr in ('output_size', 'state_size') if not hasattr(cell, attr)]
    if not (hasattr(cell, 'zero_state') or hasattr(cell, 'get_initial_state')):
        lacking.append('zero_state')
    if not callable(cell):
        lacking.append('__call__')
    if lacking:
        raise TypeError('%s must be an RNN cell, but %r has no %s'
                        % (argument, cell, ', '.join(lacking)))


class CellWrapper(RNNCell):
    """A cell that runs `cell` with changes to its inputs or outputs: `cell`'s state, and
    by default its output size."""

    def __init__(self, cell, reuse=None):
        super().__init__(_reuse=reuse)
        check_cell('cell', cell)
        self._cell = cell

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._cell.output_size

    def zero_state(self, batch_size, dtype):
        with tf.name_scope(type(self).__name__ + 'ZeroState', values=[batch_size]):
            return self._cell.zero_state(batch_size, dtype)
