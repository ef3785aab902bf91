"""TF 1.15's `GRUBlockCell` and `GRUBlockCellV2`: a GRU step in one `GRUBlockCell` kernel.

With `[r, u] = sigmoid([x, h_prev] @ w_ru + b_ru)` and
`c = tanh([x, r * h_prev] @ w_c + b_c)`, the new state and output are
`h = u * h_prev + (1 - u) * c`. `b_ru` starts at ones, `b_c` at zeros. The two classes
differ only in their variable names: `w_ru`, `b_ru`, `w_c`, `b_c` against `gates/kernel`,
`gates/bias`, `candidate/kernel`, `candidate/bias` (those of `tf.nn.rnn_cell.GRUCell`).
"""
from towers.compat import tf
from towers.legacy.contrib.rnn.base import InputSpec, LayerRNNCell, register_gradient


@register_gradient('GRUBlockCell')
def _gru_block_cell_grad(op, *grads):
    """Gradients of the `GRUBlockCell` op's inputs from that of its output `h`."""
    x, h_prev, w_ru, w_c, b_ru, b_c = op.inputs
    r, u, c, _ = op.outputs
    d_x, d_h_prev, d_c_bar, d_r_bar_u_bar = tf.raw_ops.GRUBlockCellGrad(
        x=x, h_prev=h_prev, w_ru=w_ru, w_c=w_c, b_ru=b_ru, b_c=b_c, r=r, u=u, c=c,
        d_h=grads[3])
    d_w_ru = tf.matmul(tf.concat([x, h_prev], 1), d_r_bar_u_bar, transpose_a=True)
    d_w_c = tf.matmul(tf.concat([x, h_prev * r], 1), d_c_bar, transpose_a=True)
    return (d_x, d_h_prev, d_w_ru, d_w_c, tf.raw_ops.BiasAddGrad(out_backprop=d_r_bar_u_bar),
            tf.raw_ops.BiasAddGrad(out_backprop=d_c_bar))


class GRUBlockCell(LayerRNNCell):
    """A GRU cell computed by one `GRUBlockCell` kernel per step.

    Args:
      num_units: the width of the state and output.
      cell_size: TF 1.x's older name of `num_units` (give exactly one of the two).
      reuse: whether to reuse the variables of an earlier cell of the same scope.
      name: the layer's name and variable scope.

    Called on inputs [batch, input] and a state [batch, num_units], it returns (h, h).
    """

    _NAMES = ('w_ru', 'b_ru', 'w_c', 'b_c')

    def __init__(self, num_units=None, cell_size=None, reuse=None, name='gru_cell'):
        super().__init__(_reuse=reuse, name=name)
        if (cell_size is None) == (num_units is None):
            raise ValueError('GRUBlockCell: give exactly one of num_units and cell_size')
        self._cell_size = num_units if cell_size is None else cell_size
        self.input_spec = InputSpec(ndim=2)

    @property
    def state_size(self):
        return self._cell_size

    @property
    def output_size(self):
        return self._cell_size

    def build(self, input_shape):
        input_size = tf.compat.dimension_value(tf.TensorShape(input_shape)[1])
        if input_size is None:
            raise ValueError('%s: the input width must be known, got shape %s'
                             % (self.name, input_shape))
        units = self._cell_size
        gate_kernel, gate_bias, candidate_kernel, candidate_bias = self._NAMES
        self._gate_kernel = self.add_weight(gate_kernel, [input_size + units, 2 * units])
        self._gate_bias = self.add_weight(gate_bias, [2 * units],
                                          initializer=tf.constant_initializer(1.0))
        self._candidate_kernel = self.add_weight(candidate_kernel, [input_size + units, units])
        self._candidate_bias = self.add_weight(candidate_bias, [units],
                                               initializer=tf.constant_initializer(0.0))
        self.built = True

    def call(self, inputs, h_prev):
        width = h_prev.shape.with_rank(2)[1]
        if width != self._cell_size:
            raise ValueError('%s: the state has width %s, the cell %d'
                             % (self.name, width, self._cell_size))
        _, _, _, h = tf.raw_ops.GRUBlockCell(
            x=inputs, h_prev=h_prev, w_ru=self._gate_kernel, w_c=self._candidate_kernel,
            b_ru=self._gate_bias, b_c=self._candidate_bias)
        return h, h


class GRUBlockCellV2(GRUBlockCell):
    """`GRUBlockCell` with `tf.nn.rnn_cell.GRUCell`'s variable names."""

    _NAMES = ('gates/kernel', 'gates/bias', 'candidate/kernel', 'candidate/bias')
