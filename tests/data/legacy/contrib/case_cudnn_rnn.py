"""tf.contrib.cudnn_rnn's compatible cells on the same weights and inputs (run_cases.py),
under the variable names that the cuDNN layers' saveables give a checkpoint's weights
(TF 1.15 runs the layers themselves only on a GPU)."""
import numpy as np
import tensorflow as tf

BATCH, TIME, DEPTH = 3, 4, 5
LENGTHS = [4, 2, 3]


def inputs():
    rng = np.random.RandomState(0)
    return tf.constant(rng.standard_normal((BATCH, TIME, DEPTH)).astype(np.float32))


def trained(fetches, *tensors):
    loss = tf.add_n([tf.reduce_mean(tf.square(t)) for t in tf.nest.flatten(tensors)])
    fetches['train_op'] = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return fetches


def stacked(make_cell):
    """Two layers of `make_cell()` in dynamic_rnn: the names of a unidirectional layer's
    checkpoint (`rnn/multi_rnn_cell/cell_<layer>/<cell>/...`)."""
    cell = tf.nn.rnn_cell.MultiRNNCell([make_cell(), make_cell()])
    outputs, state = tf.nn.dynamic_rnn(cell, inputs(), sequence_length=LENGTHS,
                                       dtype=tf.float32)
    fetches = {'outputs': outputs}
    for i, part in enumerate(tf.nest.flatten(state)):
        fetches['state%d' % i] = part
    return trained(fetches, outputs, state)


def compatible_lstm():
    return stacked(lambda: tf.contrib.cudnn_rnn.CudnnCompatibleLSTMCell(4))


def compatible_gru():
    return stacked(lambda: tf.contrib.cudnn_rnn.CudnnCompatibleGRUCell(3))


def compatible_bidirectional():
    """The names of a bidirectional layer's checkpoint
    (`stack_bidirectional_rnn/cell_<layer>/bidirectional_rnn/fw/<cell>/...`)."""
    fetches = {}
    for name, make_cell in (('lstm', tf.contrib.cudnn_rnn.CudnnCompatibleLSTMCell),
                            ('gru', tf.contrib.cudnn_rnn.CudnnCompatibleGRUCell)):
        with tf.variable_scope(name):
            outputs, states_fw, states_bw = tf.contrib.rnn.stack_bidirectional_dynamic_rnn(
                [make_cell(3), make_cell(3)], [make_cell(3), make_cell(3)], inputs(),
                sequence_length=LENGTHS, dtype=tf.float32)
        fetches[name + '/outputs'] = outputs
        for i, part in enumerate(tf.nest.flatten([states_fw, states_bw])):
            fetches['%s/state%d' % (name, i)] = part
    return trained(fetches, *[fetches[name] for name in sorted(fetches)])


CASES = {'compatible_lstm': compatible_lstm, 'compatible_gru': compatible_gru,
         'compatible_bidirectional': compatible_bidirectional}
