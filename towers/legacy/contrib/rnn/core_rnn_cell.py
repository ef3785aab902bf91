"""The wrappers TF 1.x moved from `tf.nn.rnn_cell` to `tf.contrib.rnn`: a linear projection
before or after a cell, and an embedding of integer inputs before it.

Each wraps `cell` in its own variable scope (`input_projection_wrapper`, ...), which holds its
`kernel` and `bias` (or `embedding`) and the wrapped cell's scope.
"""
import math

from towers.compat import tf
from towers.legacy.contrib.rnn.base import CellWrapper, linear


class EmbeddingWrapper(CellWrapper):
    """Embeds integer inputs [batch, 1] (or [batch]) before `cell`, with an `embedding`
    variable [embedding_classes, embedding_size] kept on the CPU.

    Args:
      cell: the RNN cell that takes the embeddings.
      embedding_classes: the number of symbols.
      embedding_size: the width of each symbol's vector.
      initializer: the embedding's initializer (default the scope's, else uniform in
        [-sqrt(3), sqrt(3)], of variance 1).
      reuse: whether to reuse the variables of an earlier cell of the same scope.
    """

    def __init__(self, cell, embedding_classes, embedding_size, initializer=None,
                 reuse=None):
        super().__init__(cell, reuse)
        if embedding_classes <= 0 or embedding_size <= 0:
            raise ValueError('EmbeddingWrapper: embedding_classes and embedding_size must be '
                             '> 0, got %d and %d' % (embedding_classes, embedding_size))
        self._embedding_classes = embedding_classes
        self._embedding_size = embedding_size
        self._initializer = initializer

    def call(self, inputs, state):
        with tf.device('/cpu:0'):
            initializer = self._initializer or tf.get_variable_scope().initializer
            if not initializer:
                initializer = tf.random_uniform_initializer(-math.sqrt(3), math.sqrt(3))
            dtype = state[0].dtype if isinstance(state, tuple) else state.dtype
            embedding = tf.get_variable(
                'embedding', [self._embedding_classes, self._embedding_size],
                initializer=initializer, dtype=dtype)
            embedded = tf.nn.embedding_lookup(embedding, tf.reshape(inputs, [-1]))
            return self._cell(embedded, state)


class InputProjectionWrapper(CellWrapper):
    """Projects the inputs to `num_proj` (then `activation`) before `cell`.

    Args:
      cell: the wrapped RNN cell.
      num_proj: the width of the projected inputs.
      activation: applied to the projection, or None.
      input_size: ignored (TF 1.x had deprecated it).
      reuse: whether to reuse the variables of an earlier cell of the same scope.
    """

    def __init__(self, cell, num_proj, activation=None, input_size=None, reuse=None):
        super().__init__(cell, reuse)
        if input_size is not None:
            tf.logging.warn('%s: the input_size parameter is deprecated.', self)
        self._num_proj = num_proj
        self._activation = activation

    def call(self, inputs, state):
        projected = linear(inputs, self._num_proj, True)
        if self._activation:
            projected = self._activation(projected)
        return self._cell(projected, state)


class OutputProjectionWrapper(CellWrapper):
    """Projects `cell`'s output to `output_size` (then `activation`).

    Args:
      cell: the wrapped RNN cell.
      output_size: the width of the projected output.
      activation: applied to the projection, or None.
      reuse: whether to reuse the variables of an earlier cell of the same scope.
    """

    def __init__(self, cell, output_size, activation=None, reuse=None):
        super().__init__(cell, reuse)
        if output_size < 1:
            raise ValueError('OutputProjectionWrapper: output_size must be > 0, got %d'
                             % output_size)
        self._output_size = output_size
        self._activation = activation

    @property
    def output_size(self):
        return self._output_size

    def call(self, inputs, state):
        output, new_state = self._cell(inputs, state)
        projected = linear(output, self._output_size, True)
        if self._activation:
            projected = self._activation(projected)
        return projected, new_state
