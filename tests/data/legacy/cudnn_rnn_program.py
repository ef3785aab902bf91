"""A TF1 program of cuDNN RNNs and their compatible cells, for checkpoints that move between
them (tests/test_legacy_contrib_cudnn_rnn.py): for each kind (LSTM, GRU, tanh, relu) a
two-layer unidirectional and a bidirectional RNN over the same inputs.

    python cudnn_rnn_program.py cells CHECKPOINT [--restore]
    python cudnn_rnn_program.py layers CHECKPOINT_IN CHECKPOINT_OUT

`cells` builds the compatible cells under the layers' scopes (`cudnn_lstm` for the first
layer of a kind, `cudnn_lstm_1` for the second) and either initialises them at random and
saves CHECKPOINT, or restores it. `layers` builds the cuDNN layers, restores their weights
from CHECKPOINT_IN, takes one training step and saves CHECKPOINT_OUT. Each prints one JSON
line: the outputs and final states of every RNN (`layers`: before and after its step).
"""
import json
import sys

import numpy as np
import tensorflow as tf

TIME, BATCH, DEPTH, UNITS, LAYERS = 4, 3, 5, 4, 2
LENGTHS = [4, 2, 3]
KINDS = {'lstm': ('CudnnLSTM', 'cudnn_lstm'), 'gru': ('CudnnGRU', 'cudnn_gru'),
         'tanh': ('CudnnRNNTanh', 'cudnn_rnn_tanh'), 'relu': ('CudnnRNNRelu', 'cudnn_rnn_relu')}


def inputs():
    return tf.constant(np.random.RandomState(0).standard_normal(
        (TIME, BATCH, DEPTH)).astype(np.float32))


def compatible_cell(kind):
    if kind == 'lstm':
        return tf.contrib.cudnn_rnn.CudnnCompatibleLSTMCell(UNITS)
    if kind == 'gru':
        return tf.contrib.cudnn_rnn.CudnnCompatibleGRUCell(UNITS)
    return tf.nn.rnn_cell.BasicRNNCell(UNITS, activation=tf.tanh if kind == 'tanh'
                                       else tf.nn.relu)


def last_outputs(kind, states):
    return tf.stack([state.h if kind == 'lstm' else state for state in states])


def cells():
    """{name: (outputs, final h of each layer and direction)} of the compatible cells."""
    results = {}
    for kind, (_, scope) in sorted(KINDS.items()):
        with tf.variable_scope(scope):
            cell = tf.nn.rnn_cell.MultiRNNCell([compatible_cell(kind) for _ in range(LAYERS)])
            outputs, states = tf.nn.dynamic_rnn(cell, inputs(), sequence_length=LENGTHS,
                                                dtype=tf.float32, time_major=True)
            results[kind] = outputs, last_outputs(kind, states)
        with tf.variable_scope(scope + '_1'):
            outputs, states_fw, states_bw = tf.contrib.rnn.stack_bidirectional_dynamic_rnn(
                [compatible_cell(kind) for _ in range(LAYERS)],
                [compatible_cell(kind) for _ in range(LAYERS)], inputs(),
                sequence_length=LENGTHS, dtype=tf.float32, time_major=True)
            states = [state for pair in zip(states_fw, states_bw) for state in pair]
            results[kind + '_bidirectional'] = outputs, last_outputs(kind, states)
    return results


def layers():
    """{name: (outputs, final h)} of the cuDNN layers, and their loss."""
    results = {}
    for kind, (class_name, _) in sorted(KINDS.items()):
        for direction, suffix in (('unidirectional', ''), ('bidirectional', '_bidirectional')):
            layer = getattr(tf.contrib.cudnn_rnn, class_name)(LAYERS, UNITS, direction=direction)
            outputs, states = layer(inputs(), sequence_lengths=LENGTHS)
            results[kind + suffix] = outputs, states[0]
    loss = tf.add_n([tf.reduce_mean(tf.square(outputs)) for outputs, _ in results.values()])
    return results, loss


def values(session, results):
    found = session.run(results)
    return {name: {'outputs': outputs.tolist(), 'h': h.tolist()}
            for name, (outputs, h) in found.items()}


def main(argv):
    tf.set_random_seed(1)
    if argv[1] == 'cells':
        results = cells()
        saver = tf.train.Saver()
        with tf.Session() as session:
            if '--restore' in argv:
                saver.restore(session, argv[2])
            else:
                session.run(tf.global_variables_initializer())
                for variable in tf.global_variables():
                    variable.load(np.random.RandomState(len(variable.op.name)).uniform(
                        -0.5, 0.5, variable.shape.as_list()), session)
                saver.save(session, argv[2])
            print(json.dumps(values(session, results)))
        return
    results, loss = layers()
    train_op = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    weights = tf.train.Saver(tf.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS))
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        weights.restore(session, argv[2])
        before = values(session, results)
        session.run(train_op)
        tf.train.Saver().save(session, argv[3])
        print(json.dumps({'before': before, 'after': values(session, results)}))


if __name__ == '__main__':
    main(sys.argv)
