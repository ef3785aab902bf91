"""tf.contrib.crf on the same projection and transitions (run_cases.py): a tagger's loss and
train step, decoding in the graph and in NumPy, and the one-step and empty-sequence paths."""
import numpy as np
import tensorflow as tf

BATCH, TIME, DEPTH, TAGS = 3, 4, 5, 4


def features(time=TIME):
    rng = np.random.RandomState(0)
    return tf.constant(rng.standard_normal((BATCH, time, DEPTH)).astype(np.float32))


def tags(time=TIME):
    rng = np.random.RandomState(1)
    return tf.constant(rng.randint(0, TAGS, (BATCH, time)).astype(np.int32))


def unary_scores(time=TIME):
    with tf.variable_scope('proj'):
        return tf.layers.dense(features(time), TAGS)


def viterbi(values, prefix, lengths):
    """viterbi_decode of each sequence of a record: prefix/tags_<i>, prefix/score_<i>."""
    out = {}
    for i, length in enumerate(lengths):
        found, score = tf.contrib.crf.viterbi_decode(values['unary'][i, :length],
                                                     values['transitions'])
        out['%s/tags_%d' % (prefix, i)] = np.array(found, np.int64)
        out['%s/score_%d' % (prefix, i)] = np.float32(score)
    return out


def tagger():
    lengths = tf.constant([4, 1, 3])
    unary = unary_scores()
    with tf.variable_scope('crf'):
        log_likelihood, transitions = tf.contrib.crf.crf_log_likelihood(unary, tags(), lengths)
    loss = tf.reduce_mean(-log_likelihood)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    decoded, best = tf.contrib.crf.crf_decode(unary, transitions, lengths)
    return {'log_likelihood': log_likelihood, 'decoded': decoded, 'best': best,
            'unary': unary, 'transitions': transitions, 'train_op': train_op,
            'post': lambda values: viterbi(values, 'viterbi', [4, 1, 3])}


def scores():
    """The score functions one by one, an empty sequence, and int64 tags."""
    lengths = tf.constant([3, 0, 2], tf.int64)
    unary = unary_scores()
    transitions = tf.get_variable('transitions', [TAGS, TAGS])
    tag64 = tf.cast(tags(), tf.int64)
    bitmap = tf.one_hot(tags(), TAGS, on_value=True, off_value=False)
    bitmap = tf.logical_or(bitmap, tf.one_hot(tf.zeros_like(tags()), TAGS, on_value=True,
                                              off_value=False))
    norm = tf.contrib.crf.crf_log_norm(unary, lengths, transitions)
    multitag = tf.contrib.crf.crf_multitag_sequence_score(unary, bitmap, lengths, transitions)
    loss = tf.reduce_sum(norm) - tf.reduce_sum(multitag)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    decoded, best = tf.contrib.crf.crf_decode(unary, transitions, lengths)
    return {'sequence': tf.contrib.crf.crf_sequence_score(unary, tag64, lengths, transitions),
            'unary_score': tf.contrib.crf.crf_unary_score(tag64, lengths, unary),
            'binary_score': tf.contrib.crf.crf_binary_score(tag64, lengths, transitions),
            'norm': norm, 'multitag': multitag, 'decoded': decoded, 'best': best,
            'train_op': train_op}


def one_step():
    """T == 1, static and fed through a placeholder of unknown length."""
    lengths = tf.constant([1, 0, 1])
    unary = unary_scores(time=1)
    one_tag = tags(time=1)
    log_likelihood, transitions = tf.contrib.crf.crf_log_likelihood(unary, one_tag, lengths)
    bitmap = tf.one_hot(one_tag, TAGS, on_value=True, off_value=False)
    decoded, best = tf.contrib.crf.crf_decode(unary, transitions, lengths)
    dynamic = tf.placeholder_with_default(unary, [BATCH, None, TAGS])
    dynamic_tags = tf.placeholder_with_default(one_tag, [BATCH, None])
    dynamic_decoded, dynamic_best = tf.contrib.crf.crf_decode(dynamic, transitions, lengths)
    dynamic_ll, _ = tf.contrib.crf.crf_log_likelihood(dynamic, dynamic_tags, lengths,
                                                      transitions)
    loss = -tf.reduce_sum(log_likelihood) - tf.reduce_sum(dynamic_ll)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return {'log_likelihood': log_likelihood, 'decoded': decoded, 'best': best,
            'multitag': tf.contrib.crf.crf_multitag_sequence_score(unary, bitmap, lengths,
                                                                   transitions),
            'dynamic_decoded': dynamic_decoded, 'dynamic_best': dynamic_best,
            'dynamic_ll': dynamic_ll, 'unary': unary, 'transitions': transitions,
            'train_op': train_op, 'post': lambda values: viterbi(values, 'viterbi', [1, 1, 1])}


def cells():
    """The cells on their own under dynamic_rnn, as programs that built on them did."""
    unary = unary_scores()
    transitions = tf.get_variable('transitions', [TAGS, TAGS])
    lengths = tf.constant([4, 2, 3])
    cell = tf.contrib.crf.CrfForwardRnnCell(transitions)
    alphas, last = tf.nn.dynamic_rnn(cell, unary[:, 1:], sequence_length=lengths - 1,
                                     initial_state=unary[:, 0])
    pointers, best = tf.nn.dynamic_rnn(tf.contrib.crf.CrfDecodeForwardRnnCell(transitions),
                                       unary[:, 1:], sequence_length=lengths - 1,
                                       initial_state=unary[:, 0], dtype=tf.int32)
    start = tf.cast(tf.argmax(best, 1), tf.int32)[:, None]
    back, _ = tf.nn.dynamic_rnn(tf.contrib.crf.CrfDecodeBackwardRnnCell(TAGS),
                                tf.reverse_sequence(pointers, lengths - 1, seq_axis=1),
                                sequence_length=lengths - 1, initial_state=start,
                                dtype=tf.int32)
    return {'alphas': alphas, 'last': last, 'pointers': pointers, 'best': best, 'back': back,
            'is_cell': tf.constant(isinstance(cell, tf.nn.rnn_cell.RNNCell)),
            'sizes': tf.constant([cell.state_size, cell.output_size])}


CASES = {'tagger': tagger, 'scores': scores, 'one_step': one_step, 'cells': cells}
