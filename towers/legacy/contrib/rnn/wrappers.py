"""TF 1.15's cell wrappers of `tf.contrib.rnn`: attention over the last outputs
(`AttentionCellWrapper`), highway connections (`HighwayWrapper`) and XLA compilation of each
step (`CompiledWrapper`)."""

from towers.compat import internal, tf
from towers.legacy.contrib.rnn.base import (CellWrapper, RNNCell, check_cell,
                                            linear, static_width)

op_def_registry = internal('framework.op_def_registry')


class AttentionCellWrapper(RNNCell):
    """Attention over `cell`'s last `attn_length` outputs (Cheng et al., 2016,
    arXiv:1601.06733).

    Each step projects [inputs, last attention] to `input_size` for `cell`, attends from
    `cell`'s new state over the kept outputs, projects [cell output, attention] to
    `attn_size` as the output, and keeps it in place of the oldest.

    Args:
      cell: the wrapped RNN cell.
      attn_length: how many past outputs are attended over.
      attn_size: the width of the output and of each kept output (default `cell`'s
        output size).
      attn_vec_size: the width of the attention's hidden features (default `attn_size`).
      input_size: the width of the projected input (default the input's).
      state_is_tuple: whether the state is (cell state, attention, kept outputs) or their
        concatenation (which needs a cell with a flat state).
      reuse: whether to reuse the variables of an earlier cell of the same scope.
    """

    def __init__(self, cell, attn_length, attn_size=None, attn_vec_size=None,
                 input_size=None, state_is_tuple=True, reuse=None):
        super().__init__(_reuse=reuse)
        check_cell('cell', cell)
        if tf.nest.is_nested(cell.state_size) and not state_is_tuple:
            raise ValueError('AttentionCellWrapper: the cell has a tuple state %s, so '
                             'state_is_tuple must be True' % (cell.state_size,))
        if attn_length <= 0:
            raise ValueError('AttentionCellWrapper: attn_length must be > 0, got %s'
                             % attn_length)
        if not state_is_tuple:
            tf.logging.warn('%s: Using a concatenated state is slower and will soon be '
                            'deprecated.  Use state_is_tuple=True.', self)
        self._cell = cell
        self._state_is_tuple = state_is_tuple
        self._attn_length = attn_length
        self._attn_size = cell.output_size if attn_size is None else attn_size
        self._attn_vec_size = self._attn_size if attn_vec_size is None else attn_vec_size
        self._input_size = input_size

    @property
    def state_size(self):
        sizes = (self._cell.state_size, self._attn_size, self._attn_size * self._attn_length)
        return sizes if self._state_is_tuple else sum(sizes)

    @property
    def output_size(self):
        return self._attn_size

    def call(self, inputs, state):
        if self._state_is_tuple:
            cell_state, attns, kept = state
        else:
            cell_width = self._cell.state_size
            cell_state, attns, kept = tf.split(
                state, [cell_width, self._attn_size, self._attn_size * self._attn_length], 1)
        kept = tf.reshape(kept, [-1, self._attn_length, self._attn_size])
        input_size = self._input_size
        if input_size is None:
            input_size = inputs.shape.as_list()[1]
        cell_inputs = linear([inputs, attns], input_size, True)
        cell_output, new_cell_state = self._cell(cell_inputs, cell_state)
        query = new_cell_state
        if self._state_is_tuple:
            query = tf.concat(tf.nest.flatten(new_cell_state), 1)
        new_attns, older = self._attention(query, kept)
        with tf.variable_scope('attn_output_projection'):
            output = linear([cell_output, new_attns], self._attn_size, True)
        new_kept = tf.reshape(tf.concat([older, output[:, None]], 1),
                              [-1, self._attn_length * self._attn_size])
        new_state = (new_cell_state, new_attns, new_kept)
        if not self._state_is_tuple:
            new_state = tf.concat(new_state, 1)
        return output, new_state

    def _attention(self, query, kept):
        """(attention [batch, attn_size] of `query` over `kept` [batch, length, attn_size],
        `kept` without its oldest output)."""
        with tf.variable_scope('attention'):
            features = tf.get_variable('attn_w',
                                       [1, 1, self._attn_size, self._attn_vec_size])
            scorer = tf.get_variable('attn_v', [self._attn_vec_size])
            hidden = tf.reshape(kept, [-1, self._attn_length, 1, self._attn_size])
            hidden_features = tf.nn.conv2d(hidden, features, [1, 1, 1, 1], 'SAME')
            projected = tf.reshape(linear(query, self._attn_vec_size, True),
                                   [-1, 1, 1, self._attn_vec_size])
            scores = tf.reduce_sum(scorer * tf.tanh(hidden_features + projected), [2, 3])
            weights = tf.reshape(tf.nn.softmax(scores), [-1, self._attn_length, 1, 1])
            attns = tf.reshape(tf.reduce_sum(weights * hidden, [1, 2]), [-1, self._attn_size])
            return attns, kept[:, 1:]


class HighwayWrapper(CellWrapper):
    """Highway connections around `cell` (Srivastava et al., 2015, arXiv:1505.00387):
    the output is `inputs * carry + outputs * transform`, where `carry` is a sigmoid gate
    of the inputs (`carry_w`, `carry_b`, in the caller's variable scope) and `transform` is
    `1 - carry`, or a gate of its own (`transform_w`, `transform_b`).

    Args:
      cell: the wrapped RNN cell, whose outputs have its inputs' structure and shapes.
      couple_carry_transform_gates: whether `transform` is `1 - carry`.
      carry_bias_init: the initial carry bias (the transform bias starts at its negative).
    """

    def __init__(self, cell, couple_carry_transform_gates=True, carry_bias_init=1.0):
        super().__init__(cell)
        self._couple_carry_transform_gates = couple_carry_transform_gates
        self._carry_bias_init = carry_bias_init

    def _gate(self, prefix, inputs, width, bias):
        weights = tf.get_variable(prefix + '_w', [width, width])
        biases = tf.get_variable(prefix + '_b', [width],
                                 initializer=tf.constant_initializer(bias))
        return tf.sigmoid(tf.nn.xw_plus_b(inputs, weights, biases))

    def _highway(self, inputs, outputs):
        width = static_width(inputs)
        carry = self._gate('carry', inputs, width, self._carry_bias_init)
        if self._couple_carry_transform_gates:
            transform = 1 - carry
        else:
            transform = self._gate('transform', inputs, width, -self._carry_bias_init)
        return inputs * carry + outputs * transform

    def __call__(self, inputs, state, scope=None):
        outputs, new_state = self._cell(inputs, state, scope=scope)
        tf.nest.assert_same_structure(inputs, outputs)
        tf.nest.map_structure(lambda x, y: x.shape.assert_is_compatible_with(y.shape),
                              inputs, outputs)
        return tf.nest.map_structure(self._highway, inputs, outputs), new_state


def _stateless_op(node_def):
    """Whether the op of `node_def` is stateless (XLA compiles those)."""
    return not op_def_registry.get(node_def.op).is_stateful


class CompiledWrapper(CellWrapper):
    """Runs each step of `cell` in an XLA JIT scope.

    Args:
      cell: the wrapped RNN cell.
      compile_stateful: whether stateful ops (initializers, random draws) are compiled too.
    """

    def __init__(self, cell, compile_stateful=False):
        super().__init__(cell)
        self._compile_stateful = compile_stateful

    def __call__(self, inputs, state, scope=None):
        compile_ops = True if self._compile_stateful else _stateless_op
        with tf.xla.experimental.jit_scope(compile_ops=compile_ops):
            return self._cell(inputs, state, scope=scope)
