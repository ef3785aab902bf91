"""tf.contrib.seq2seq's attention mechanisms in an AttentionWrapper over an LSTM, driven by
tf.nn.dynamic_rnn, and its attention functions (run_cases.py)."""
import numpy as np
import tensorflow as tf

BATCH, MEMORY_TIME, MEMORY_DEPTH, TIME, DEPTH, UNITS = 2, 4, 3, 3, 2, 4
seq2seq = tf.contrib.seq2seq


def memory():
    rng = np.random.RandomState(1)
    return tf.constant(rng.standard_normal((BATCH, MEMORY_TIME, MEMORY_DEPTH))
                       .astype(np.float32))


def decoder_inputs():
    rng = np.random.RandomState(2)
    return tf.constant(rng.standard_normal((BATCH, TIME, DEPTH)).astype(np.float32))


def run(mechanism, **wrapper_options):
    """The wrapper over an LSTM through dynamic_rnn: its outputs, final state and a train_op."""
    cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.LSTMCell(UNITS), mechanism,
                                    alignment_history=True, **wrapper_options)
    outputs, state = tf.nn.dynamic_rnn(cell, decoder_inputs(), dtype=tf.float32)
    fetches = {'outputs': outputs, 'c': state.cell_state.c, 'h': state.cell_state.h,
               'attention': state.attention, 'time': state.time}
    for i, (alignments, history) in enumerate(zip(tf.contrib.framework.nest.flatten(
            state.alignments), tf.contrib.framework.nest.flatten(state.alignment_history))):
        fetches['alignments%d' % i] = alignments
        fetches['history%d' % i] = history.stack()
    loss = tf.reduce_sum(outputs) + tf.reduce_sum(state.attention ** 2)
    fetches['train_op'] = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return fetches


def luong_scaled():
    mechanism = seq2seq.LuongAttention(UNITS, memory(), memory_sequence_length=[4, 2],
                                       scale=True)
    return run(mechanism, attention_layer_size=5)


def bahdanau_normalized():
    mechanism = seq2seq.BahdanauAttention(5, memory(), memory_sequence_length=[3, 4],
                                          normalize=True)
    return run(mechanism, output_attention=False, name='decoder_attention')


def two_mechanisms():
    bahdanau = seq2seq.BahdanauAttention(3, memory(), memory_sequence_length=[4, 1])
    luong = seq2seq.LuongAttention(UNITS, memory(), probability_fn=seq2seq.hardmax)
    return run([bahdanau, luong], attention_layer_size=[3, 2])


def luong_monotonic_parallel():
    mechanism = seq2seq.LuongMonotonicAttention(
        UNITS, memory(), memory_sequence_length=[4, 3], scale=True, score_bias_init=-1.,
        mode='parallel')
    return run(mechanism, attention_layer_size=3)


def monotonic_noise_outside_a_loop():
    # In a loop, TF 1.15 itself draws the noise of the steps in varying order.
    mechanism = seq2seq.BahdanauMonotonicAttention(
        3, memory(), memory_sequence_length=[4, 3], sigmoid_noise=0.5, sigmoid_noise_seed=3)
    query = tf.constant(np.random.RandomState(4).standard_normal((BATCH, 2)), tf.float32)
    alignments, state = mechanism(query, mechanism.initial_state(BATCH, tf.float32))
    return {'alignments': alignments, 'state': state, 'train_op': tf.train.
            GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(alignments[:, 1:] ** 2))}


def bahdanau_monotonic_recursive():
    mechanism = seq2seq.BahdanauMonotonicAttention(
        3, memory(), memory_sequence_length=[2, 4], normalize=True, mode='recursive')
    encoder_state = tf.nn.rnn_cell.LSTMStateTuple(tf.fill([BATCH, UNITS], 0.3),
                                                  tf.fill([BATCH, UNITS], -0.2))
    return run(mechanism, initial_cell_state=encoder_state,
               attention_layer=tf.layers.Dense(2, name='my_attention'),
               cell_input_fn=lambda inputs, attention: tf.concat([attention, 2 * inputs], -1))


def luong_monotonic_hard_in_a_cloned_state():
    mechanism = seq2seq.LuongMonotonicAttention(UNITS, memory(), score_bias_init=0.5,
                                                mode='hard')
    cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.LSTMCell(UNITS), mechanism)
    encoder_state = tf.nn.rnn_cell.LSTMStateTuple(tf.fill([BATCH, UNITS], 0.1),
                                                  tf.fill([BATCH, UNITS], 0.4))
    initial = cell.zero_state(BATCH, tf.float32).clone(cell_state=encoder_state)
    outputs, state = tf.nn.dynamic_rnn(cell, decoder_inputs(), initial_state=initial,
                                       dtype=tf.float32)
    loss = tf.reduce_sum(outputs) + tf.reduce_sum(state.cell_state.h)
    return {'outputs': outputs, 'alignments': state.alignments, 'time': state.time,
            'h': state.cell_state.h,
            'train_op': tf.train.GradientDescentOptimizer(0.1).minimize(loss)}


def functions():
    rng = np.random.RandomState(3)
    logits = tf.constant(rng.standard_normal((3, 5)).astype(np.float32))
    p_choose = tf.sigmoid(logits)
    previous = tf.nn.softmax(tf.constant(rng.standard_normal((3, 5)).astype(np.float32)))
    hard = tf.cast(logits > 0, tf.float32)
    return {
        'hardmax': seq2seq.hardmax(logits),
        'safe_cumprod': seq2seq.safe_cumprod(p_choose, axis=1),
        'safe_cumprod_exclusive': seq2seq.safe_cumprod(p_choose, axis=1, exclusive=True,
                                                       reverse=True),
        'recursive': seq2seq.monotonic_attention(p_choose, previous, 'recursive'),
        'parallel': seq2seq.monotonic_attention(p_choose, previous, 'parallel'),
        'hard': seq2seq.monotonic_attention(hard, tf.one_hot([0, 2, 1], 5), 'hard'),
    }


CASES = {'luong_scaled': luong_scaled, 'bahdanau_normalized': bahdanau_normalized,
         'two_mechanisms': two_mechanisms, 'luong_monotonic_parallel': luong_monotonic_parallel,
         'bahdanau_monotonic_recursive': bahdanau_monotonic_recursive,
         'luong_monotonic_hard_in_a_cloned_state': luong_monotonic_hard_in_a_cloned_state,
         'monotonic_noise_outside_a_loop': monotonic_noise_outside_a_loop,
         'functions': functions}
