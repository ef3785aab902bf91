"""tf.contrib.rnn's cells, wrappers and stacked RNNs on the same weights and inputs
(run_cases.py): each in tf.nn.dynamic_rnn (static_rnn, or its own fused call) with
sequence lengths, and a train op."""
import numpy as np
import tensorflow as tf
from tensorflow.contrib.rnn.python.ops import core_rnn_cell
from tensorflow.contrib.rnn.python.ops import rnn_cell as contrib_rnn_cell

BATCH, TIME, DEPTH = 3, 4, 5
LENGTHS = [4, 2, 3]


def inputs(time_major=False):
    values = np.random.RandomState(0).standard_normal((BATCH, TIME, DEPTH)).astype(np.float32)
    return tf.constant(values.transpose(1, 0, 2) if time_major else values)


def trained(fetches, *tensors):
    """`fetches` with a train op on the mean squares of `tensors` (a small step: some cells
    amplify differences of rounding fast)."""
    loss = tf.add_n([tf.reduce_mean(tf.square(t)) for t in tf.nest.flatten(tensors)])
    fetches['train_op'] = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return fetches


def run(cell, scope, x=None):
    """dynamic_rnn of `cell` on `x` (default the inputs): (outputs, flat final state)."""
    outputs, state = tf.nn.dynamic_rnn(cell, inputs() if x is None else x,
                                       sequence_length=LENGTHS, dtype=tf.float32, scope=scope)
    return outputs, tf.nest.flatten(state)


def cells_case(*named_cells):
    """Each (scope, cell) in dynamic_rnn; all outputs and states fetched and trained."""
    fetches = {}
    for scope, cell in named_cells:
        outputs, state = run(cell, scope)
        fetches[scope + '/outputs'] = outputs
        for i, part in enumerate(state):
            fetches['%s/state%d' % (scope, i)] = part
    return trained(fetches, *[fetches[name] for name in sorted(fetches)])


def lstm():
    return cells_case(('rnn', tf.contrib.rnn.LSTMCell(6, use_peepholes=True)))


def lstm_block():
    return cells_case(
        ('block', tf.contrib.rnn.LSTMBlockCell(6)),
        ('peephole', tf.contrib.rnn.LSTMBlockCell(4, forget_bias=0.5, cell_clip=0.8,
                                                  use_peephole=True)))


def lstm_block_fused():
    x = inputs(time_major=True)
    fused = tf.contrib.rnn.LSTMBlockFusedCell(6, use_peephole=True, cell_clip=1.0)
    outputs, (c, h) = fused(x, dtype=tf.float32, sequence_length=LENGTHS)
    plain = tf.contrib.rnn.LSTMBlockFusedCell(4, name='plain')
    zero = tf.zeros([BATCH, 4])
    plain_outputs, (c2, h2) = plain(x, initial_state=(zero, zero + 0.5))
    fetches = {'outputs': outputs, 'c': c, 'h': h, 'plain': plain_outputs, 'c2': c2,
               'h2': h2}
    return trained(fetches, outputs, c, h, plain_outputs)


def gru_block():
    return cells_case(('gru', tf.contrib.rnn.GRUBlockCell(cell_size=6)),
                      ('gru_v2', tf.contrib.rnn.GRUBlockCellV2(4)))


def layer_norm_basic_lstm():
    # Dropout draws are taken by the loop's steps in the order they run, which varies: a
    # keep probability fed as a tensor (1 here) takes the dropout path deterministically.
    keep_prob = tf.placeholder_with_default(1.0, [])
    return cells_case(
        ('norm', tf.contrib.rnn.LayerNormBasicLSTMCell(4, dropout_keep_prob=keep_prob,
                                                       dropout_prob_seed=5)),
        ('plain', tf.contrib.rnn.LayerNormBasicLSTMCell(3, layer_norm=False, norm_gain=0.5,
                                                        forget_bias=0.0)))


def projection_wrappers():
    fetches = cells_case(
        ('both', tf.contrib.rnn.OutputProjectionWrapper(
            tf.contrib.rnn.InputProjectionWrapper(tf.contrib.rnn.BasicLSTMCell(4), 3,
                                                  activation=tf.tanh),
            2, activation=tf.nn.relu)))
    ids = tf.constant(np.arange(BATCH * TIME).reshape(BATCH, TIME, 1) % 7)
    embedded = tf.contrib.rnn.EmbeddingWrapper(tf.contrib.rnn.GRUCell(4), 7, 3)
    outputs, state = run(embedded, 'embedding', x=ids)
    fetches.update({'embedding/outputs': outputs, 'embedding/state': state[0]})
    return trained(fetches, *[fetches[name] for name in sorted(fetches) if name != 'train_op'])


def attention():
    return cells_case(
        ('attention_sized', tf.contrib.rnn.AttentionCellWrapper(
            tf.contrib.rnn.GRUCell(3), 3, attn_size=5, attn_vec_size=2, input_size=6)),
        ('attention_flat', tf.contrib.rnn.AttentionCellWrapper(
            tf.contrib.rnn.LSTMCell(3, state_is_tuple=False), 2, state_is_tuple=False)))


def highway():
    return cells_case(
        ('highway', tf.contrib.rnn.HighwayWrapper(tf.contrib.rnn.LSTMCell(DEPTH))),
        ('uncoupled', tf.contrib.rnn.HighwayWrapper(tf.contrib.rnn.GRUCell(DEPTH),
                                                    couple_carry_transform_gates=False,
                                                    carry_bias_init=0.5)))


def search_cells():
    return cells_case(
        ('nas_proj', tf.contrib.rnn.NASCell(4, num_proj=3, use_bias=True)),
        ('ugrnn', tf.contrib.rnn.UGRNNCell(4, forget_bias=0.5)),
        ('intersection', tf.contrib.rnn.IntersectionRNNCell(4, num_in_proj=4)),
        ('intersection_same', tf.contrib.rnn.IntersectionRNNCell(DEPTH,
                                                                 y_activation=tf.tanh)))


def lstm_variants():
    return cells_case(
        ('glstm', tf.contrib.rnn.GLSTMCell(10, number_of_groups=5, num_proj=5)),
        ('cifg', tf.contrib.rnn.CoupledInputForgetGateLSTMCell(
            4, use_peepholes=True, num_proj=3, proj_clip=0.5, layer_norm=True, norm_gain=0.8)),
        ('cifg_flat', tf.contrib.rnn.CoupledInputForgetGateLSTMCell(3, state_is_tuple=False,
                                                                    num_unit_shards=2)),
        ('layer_norm', contrib_rnn_cell.LayerNormLSTMCell(4, use_peepholes=True, cell_clip=0.7,
                                                        num_proj=3, proj_clip=0.6,
                                                        layer_norm=True)))


def independent_cells():
    return cells_case(
        ('sru', tf.contrib.rnn.SRUCell(4)),
        ('indrnn', tf.contrib.rnn.IndRNNCell(4, activation=tf.nn.relu)),
        ('indy_gru', tf.contrib.rnn.IndyGRUCell(4)),
        ('indy_lstm', tf.contrib.rnn.IndyLSTMCell(4, forget_bias=0.5)))


def phased_lstm():
    times = tf.constant(np.tile(np.arange(1, TIME + 1, dtype=np.float32)[None, :, None] * 0.15,
                                (BATCH, 1, 1)))
    fetches = {}
    for scope, cell in (('phased', tf.contrib.rnn.PhasedLSTMCell(4)),
                        ('phased_peep', tf.contrib.rnn.PhasedLSTMCell(
                            3, use_peepholes=True, leak=0.01, ratio_on=0.3,
                            trainable_ratio_on=False))):
        outputs, state = run(cell, scope, x=(times, inputs()))
        fetches.update({scope + '/outputs': outputs, scope + '/c': state[0],
                        scope + '/h': state[1]})
    return trained(fetches, *[fetches[name] for name in sorted(fetches)])


def conv_lstm():
    x = tf.reshape(inputs(), [BATCH, TIME, DEPTH, 1])
    cell = tf.contrib.rnn.Conv1DLSTMCell(input_shape=[DEPTH, 1], output_channels=2,
                                         kernel_shape=[3])
    outputs, (c, h) = tf.nn.dynamic_rnn(cell, x, sequence_length=LENGTHS, dtype=tf.float32)
    unbiased = tf.contrib.rnn.ConvLSTMCell(1, [DEPTH, 1], 2, [2], use_bias=False,
                                           forget_bias=0.5, name='unbiased')
    outputs2, _ = tf.nn.dynamic_rnn(unbiased, x, sequence_length=LENGTHS, dtype=tf.float32)
    grid = tf.reshape(inputs(), [BATCH, 2, 2, DEPTH, 1])[:, :, :, :2]
    cell2d = tf.contrib.rnn.Conv2DLSTMCell(input_shape=[2, 2, 1], output_channels=2,
                                           kernel_shape=[2, 2])
    outputs3, _ = tf.nn.dynamic_rnn(cell2d, grid, dtype=tf.float32, scope='conv2d')
    cube = tf.reshape(tf.tile(inputs(), [1, 1, 2])[:, :, :8], [BATCH, TIME, 2, 2, 2, 1])
    cell3d = tf.contrib.rnn.Conv3DLSTMCell(input_shape=[2, 2, 2, 1], output_channels=1,
                                           kernel_shape=[1, 2, 1])
    outputs4, _ = tf.nn.dynamic_rnn(cell3d, cube, dtype=tf.float32, scope='conv3d')
    fetches = {'outputs': outputs, 'c': c, 'h': h, 'unbiased': outputs2, 'conv2d': outputs3,
               'conv3d': outputs4}
    return trained(fetches, outputs, outputs2, outputs3, outputs4)


def stacked_bidirectional():
    cells_fw = [tf.contrib.rnn.LSTMBlockCell(4), tf.contrib.rnn.GRUCell(3)]
    cells_bw = [tf.contrib.rnn.LSTMBlockCell(4), tf.contrib.rnn.GRUCell(2)]
    outputs, states_fw, states_bw = tf.contrib.rnn.stack_bidirectional_dynamic_rnn(
        cells_fw, cells_bw, inputs(), dtype=tf.float32, sequence_length=LENGTHS)
    static_fw = [tf.contrib.rnn.BasicRNNCell(3), tf.contrib.rnn.BasicRNNCell(2)]
    static_bw = [tf.contrib.rnn.BasicRNNCell(2), tf.contrib.rnn.BasicRNNCell(2)]
    listed, static_states_fw, _ = tf.contrib.rnn.stack_bidirectional_rnn(
        static_fw, static_bw, tf.unstack(inputs(), axis=1), dtype=tf.float32,
        sequence_length=LENGTHS, scope='static')
    fetches = {'outputs': outputs, 'static': tf.stack(listed, axis=1)}
    for i, state in enumerate(tf.nest.flatten([states_fw, states_bw, static_states_fw])):
        fetches['state%d' % i] = state
    return trained(fetches, outputs, listed, states_fw)


def fused_adaptors():
    x = inputs(time_major=True)
    dynamic = tf.contrib.rnn.FusedRNNCellAdaptor(tf.contrib.rnn.LSTMCell(4),
                                                 use_dynamic_rnn=True)
    outputs, state = dynamic(x, dtype=tf.float32, sequence_length=LENGTHS, scope='dynamic')
    static = tf.contrib.rnn.FusedRNNCellAdaptor(tf.contrib.rnn.GRUCell(3))
    listed, state2 = static(tf.unstack(x), dtype=tf.float32, scope='static')
    reversed_fused = tf.contrib.rnn.TimeReversedFusedRNN(
        tf.contrib.rnn.LSTMBlockFusedCell(3))
    outputs3, (c3, h3) = reversed_fused(x, dtype=tf.float32, sequence_length=LENGTHS)
    reversed_listed = tf.contrib.rnn.TimeReversedFusedRNN(
        tf.contrib.rnn.FusedRNNCellAdaptor(tf.contrib.rnn.BasicRNNCell(2)))
    listed4, state4 = reversed_listed(tf.unstack(x), dtype=tf.float32, scope='reversed')
    bases = (isinstance(reversed_fused, tf.contrib.rnn.FusedRNNCell)
             and isinstance(dynamic, tf.contrib.rnn.FusedRNNCell)
             and isinstance(tf.contrib.rnn.LSTMBlockFusedCell(2),
                            tf.contrib.rnn.LSTMBlockWrapper))
    fetches = {'bases': tf.constant(bases),
               'outputs': outputs, 'c': state.c, 'h': state.h, 'static': tf.stack(listed),
               'static_state': state2, 'reversed': outputs3, 'reversed_c': c3,
               'reversed_h': h3, 'reversed_listed': tf.stack(listed4),
               'reversed_state': state4}
    return trained(fetches, outputs, listed, outputs3, listed4)


def static_and_helpers():
    """A wrapper stepped by static_rnn (its variables made once, then reused), a compiled
    cell, the batch/time helpers and the `_linear` that 2017 code imported."""
    x = inputs()
    attention = tf.contrib.rnn.AttentionCellWrapper(tf.contrib.rnn.LSTMBlockCell(4), 2)
    listed, state = tf.nn.static_rnn(attention, tf.unstack(x, axis=1), dtype=tf.float32,
                                     sequence_length=LENGTHS)
    compiled, _ = run(tf.contrib.rnn.CompiledWrapper(tf.contrib.rnn.GRUBlockCellV2(3)),
                      'compiled')
    time_major = tf.contrib.rnn.transpose_batch_time(x)
    batch = tf.contrib.rnn.best_effort_input_batch_size([time_major])
    with tf.variable_scope('projection'):
        projected = core_rnn_cell._linear([x[:, 0], x[:, 1]], 3, True)
    fetches = {'static': tf.stack(listed, axis=1), 'compiled': compiled,
               'time_major': time_major, 'batch': tf.convert_to_tensor(batch),
               'projected': projected}
    for i, part in enumerate(tf.nest.flatten(state)):
        fetches['state%d' % i] = part
    return trained(fetches, listed, compiled, projected)


CASES = {'lstm': lstm, 'lstm_block': lstm_block, 'lstm_block_fused': lstm_block_fused,
         'gru_block': gru_block, 'layer_norm_basic_lstm': layer_norm_basic_lstm,
         'projection_wrappers': projection_wrappers, 'attention': attention,
         'highway': highway, 'search_cells': search_cells, 'lstm_variants': lstm_variants,
         'independent_cells': independent_cells, 'phased_lstm': phased_lstm,
         'conv_lstm': conv_lstm, 'stacked_bidirectional': stacked_bidirectional,
         'fused_adaptors': fused_adaptors, 'static_and_helpers': static_and_helpers}
