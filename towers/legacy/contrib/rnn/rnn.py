"""TF 1.15's stacked bidirectional RNNs: each layer is a bidirectional RNN (variable scope
`cell_<layer>`, inside `stack_bidirectional_rnn` or `scope`) whose concatenated forward and
backward outputs feed the next."""
from towers.compat import tf


def _check_layers(cells_fw, cells_bw, initial_states_fw, initial_states_bw):
    """Raises ValueError unless the cells are two non-empty lists of one length, and each
    given list of initial states has one state per layer."""
    for cells, direction in ((cells_fw, 'fw'), (cells_bw, 'bw')):
        if not cells:
            raise ValueError('cells_%s: a bidirectional RNN needs at least one cell'
                             % direction)
        if not isinstance(cells, list):
            raise ValueError('cells_%s must be a list of RNN cells, one per layer'
                             % direction)
    if len(cells_fw) != len(cells_bw):
        raise ValueError('cells_fw has %d layers, cells_bw %d: they must be as many'
                         % (len(cells_fw), len(cells_bw)))
    for states, direction in ((initial_states_fw, 'fw'), (initial_states_bw, 'bw')):
        if states is not None and (not isinstance(states, list)
                                   or len(states) != len(cells_fw)):
            raise ValueError('initial_states_%s must be a list of one state per layer'
                             % direction)


def _layers(cells_fw, cells_bw, initial_states_fw, initial_states_bw):
    """(layer, cell_fw, cell_bw, initial_state_fw, initial_state_bw) per layer."""
    for layer, (cell_fw, cell_bw) in enumerate(zip(cells_fw, cells_bw)):
        yield (layer, cell_fw, cell_bw,
               initial_states_fw[layer] if initial_states_fw else None,
               initial_states_bw[layer] if initial_states_bw else None)


def stack_bidirectional_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None,
                            initial_states_bw=None, dtype=None, sequence_length=None,
                            scope=None):
    """Stacked `tf.nn.static_bidirectional_rnn` layers (Graves et al., 2013,
    arXiv:1303.5778).

    Args:
      cells_fw: a list of RNN cells, one per layer, for the forward direction.
      cells_bw: a list as long, for the backward direction.
      inputs: a list of `time` [batch, input] tensors (or nested structures of them).
      initial_states_fw: an optional list of each forward layer's initial state.
      initial_states_bw: an optional list of each backward layer's initial state.
      dtype: the dtype of the initial states not given.
      sequence_length: optional [batch] lengths of the sequences.
      scope: the variable scope (default `stack_bidirectional_rnn`).

    Returns:
      (outputs, states_fw, states_bw): the last layer's outputs, a list of `time`
      [batch, output_fw + output_bw] tensors, and tuples of each layer's final states.
    """
    _check_layers(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    states_fw, states_bw = [], []
    layer_inputs = inputs
    with tf.variable_scope(scope or 'stack_bidirectional_rnn'):
        for layer, cell_fw, cell_bw, state_fw, state_bw in _layers(
                cells_fw, cells_bw, initial_states_fw, initial_states_bw):
            with tf.variable_scope('cell_%d' % layer) as cell_scope:
                layer_inputs, state_fw, state_bw = tf.nn.static_bidirectional_rnn(
                    cell_fw, cell_bw, layer_inputs, initial_state_fw=state_fw,
                    initial_state_bw=state_bw, sequence_length=sequence_length, dtype=dtype,
                    scope=cell_scope)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer_inputs, tuple(states_fw), tuple(states_bw)


def stack_bidirectional_dynamic_rnn(cells_fw, cells_bw, inputs, initial_states_fw=None,
                                    initial_states_bw=None, dtype=None, sequence_length=None,
                                    parallel_iterations=None, time_major=False, scope=None,
                                    swap_memory=False):
    """Stacked `tf.nn.bidirectional_dynamic_rnn` layers.

    Args:
      cells_fw: a list of RNN cells, one per layer, for the forward direction.
      cells_bw: a list as long, for the backward direction.
      inputs: [batch, time, ...] (or [time, batch, ...] with `time_major`), or a nested
        structure of such tensors.
      initial_states_fw: an optional list of each forward layer's initial state.
      initial_states_bw: an optional list of each backward layer's initial state.
      dtype: the dtype of the initial states not given.
      sequence_length: optional [batch] lengths of the sequences.
      parallel_iterations: the while loops' parallel iterations (default 32).
      time_major: whether inputs and outputs are time-major.
      scope: the variable scope (default `stack_bidirectional_rnn`).
      swap_memory: whether the loops may swap tensors to the host memory.

    Returns:
      (outputs, states_fw, states_bw): the last layer's outputs [batch, time,
      output_fw + output_bw] (time-major with `time_major`) and tuples of each layer's
      final states.
    """
    _check_layers(cells_fw, cells_bw, initial_states_fw, initial_states_bw)
    states_fw, states_bw = [], []
    layer_inputs = inputs
    with tf.variable_scope(scope or 'stack_bidirectional_rnn'):
        for layer, cell_fw, cell_bw, state_fw, state_bw in _layers(
                cells_fw, cells_bw, initial_states_fw, initial_states_bw):
            with tf.variable_scope('cell_%d' % layer):
                outputs, (state_fw, state_bw) = tf.nn.bidirectional_dynamic_rnn(
                    cell_fw, cell_bw, layer_inputs, initial_state_fw=state_fw,
                    initial_state_bw=state_bw, sequence_length=sequence_length,
                    parallel_iterations=parallel_iterations, dtype=dtype,
                    swap_memory=swap_memory, time_major=time_major)
                layer_inputs = tf.concat(outputs, 2)
            states_fw.append(state_fw)
            states_bw.append(state_bw)
    return layer_inputs, tuple(states_fw), tuple(states_bw)
