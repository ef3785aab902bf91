"""tf.contrib.seq2seq's beam search: tile_batch, gather_tree and BeamSearchDecoder decoded by
dynamic_decode, over an LSTM and over an AttentionWrapper (run_cases.py)."""
import numpy as np
import tensorflow as tf

BATCH, BEAM, VOCAB, EMBED, UNITS, MEMORY_TIME = 2, 3, 7, 4, 5, 4
START, END = 1, 2


def constant(seed, shape):
    return tf.constant(np.random.RandomState(seed).standard_normal(shape).astype(np.float32))


def tile_batch():
    state = tf.nn.rnn_cell.LSTMStateTuple(constant(1, (BATCH, 3)), constant(2, (BATCH, 3)))
    nested = tf.contrib.seq2seq.tile_batch((state, tf.constant([4, 2])), multiplier=BEAM)
    return {'matrix': tf.contrib.seq2seq.tile_batch(constant(3, (BATCH, 2, 3)), 2),
            'c': nested[0].c, 'h': nested[0].h, 'lengths': nested[1]}


def gather_tree():
    # [max_time 4, batch 4, beam 3]; the second entry goes on after an end token, the third
    # stops at 2 steps, the fourth has no steps and the first asks for more steps than there are.
    step_ids = np.array([[[2, 5, 3], [4, 2, 6], [3, 4, 5], [1, 1, 1]],
                         [[4, 6, 5], [5, 3, 2], [6, 3, 4], [1, 1, 1]],
                         [[3, 2, 4], [6, 4, 5], [5, 6, 3], [1, 1, 1]],
                         [[6, 4, 3], [3, 5, 4], [4, 5, 6], [1, 1, 1]]], np.int32)
    parent_ids = np.array([[[0, 0, 0], [0, 1, 2], [0, 0, 0], [0, 0, 0]],
                           [[2, 1, 0], [1, 1, 0], [2, 0, 1], [0, 0, 0]],
                           [[0, 2, 1], [2, 0, 1], [1, 2, 0], [0, 0, 0]],
                           [[1, 0, 2], [0, 2, 1], [0, 1, 2], [0, 0, 0]]], np.int32)
    beams = tf.contrib.seq2seq.gather_tree(step_ids, parent_ids,
                                           max_sequence_lengths=[6, 4, 2, 0], end_token=2)
    return {'beams': beams}


def lstm_decoder(length_penalty_weight):
    embedding = tf.get_variable('embedding', [VOCAB, EMBED])
    encoder_state = tf.nn.rnn_cell.LSTMStateTuple(constant(4, (BATCH, UNITS)),
                                                  constant(5, (BATCH, UNITS)))
    decoder = tf.contrib.seq2seq.BeamSearchDecoder(
        cell=tf.nn.rnn_cell.LSTMCell(UNITS), embedding=embedding,
        start_tokens=tf.fill([BATCH], START), end_token=END,
        initial_state=tf.contrib.seq2seq.tile_batch(encoder_state, multiplier=BEAM),
        beam_width=BEAM, output_layer=tf.layers.Dense(VOCAB, use_bias=False),
        length_penalty_weight=length_penalty_weight)
    outputs, state, lengths = tf.contrib.seq2seq.dynamic_decode(decoder, maximum_iterations=6)
    return {'predicted_ids': outputs.predicted_ids,
            'scores': outputs.beam_search_decoder_output.scores,
            'parent_ids': outputs.beam_search_decoder_output.parent_ids,
            'step_ids': outputs.beam_search_decoder_output.predicted_ids,
            'log_probs': state.log_probs, 'finished': state.finished,
            'state_lengths': state.lengths, 'lengths': lengths, 'h': state.cell_state.h}


def lstm():
    return lstm_decoder(0.0)


def lstm_length_penalty():
    return lstm_decoder(0.6)


def wide_beam():
    """More beams than tokens (-inf scores, ties at the first step), no output layer, and
    training through the beam scores."""
    decoder = tf.contrib.seq2seq.BeamSearchDecoder(
        tf.nn.rnn_cell.GRUCell(3), tf.get_variable('embedding', [3, 2]), tf.constant([0, 1]),
        END, tf.contrib.seq2seq.tile_batch(constant(9, (BATCH, 3)), multiplier=5), 5)
    outputs, state, lengths = tf.contrib.seq2seq.dynamic_decode(decoder, maximum_iterations=4)
    scores = outputs.beam_search_decoder_output.scores
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(scores[:, :, :2]))
    return {'predicted_ids': outputs.predicted_ids, 'scores': scores,
            'parent_ids': outputs.beam_search_decoder_output.parent_ids,
            'state_lengths': state.lengths, 'lengths': lengths, 'train_op': train_op}


def attention():
    """As tensorflow/nmt decodes: memory, lengths and encoder state tiled, a batch of unknown
    static size, alignment history reordered along the beams, both penalties."""
    batch = tf.placeholder_with_default(BATCH, [])
    memory = tf.placeholder_with_default(constant(6, (BATCH, MEMORY_TIME, UNITS)),
                                         [None, MEMORY_TIME, UNITS])
    encoder_state = tf.nn.rnn_cell.LSTMStateTuple(constant(7, (BATCH, UNITS)),
                                                  constant(8, (BATCH, UNITS)))
    mechanism = tf.contrib.seq2seq.LuongAttention(
        UNITS, tf.contrib.seq2seq.tile_batch(memory, multiplier=BEAM),
        memory_sequence_length=tf.contrib.seq2seq.tile_batch(tf.constant([4, 3]), multiplier=BEAM))
    cell = tf.contrib.seq2seq.AttentionWrapper(
        tf.nn.rnn_cell.LSTMCell(UNITS), mechanism, attention_layer_size=UNITS,
        alignment_history=True)
    initial_state = cell.zero_state(batch * BEAM, tf.float32).clone(
        cell_state=tf.contrib.seq2seq.tile_batch(encoder_state, multiplier=BEAM))
    embedding = tf.get_variable('embedding', [VOCAB, EMBED])
    decoder = tf.contrib.seq2seq.BeamSearchDecoder(
        cell, lambda ids: tf.nn.embedding_lookup(embedding, ids), tf.fill([batch], START),
        END, initial_state, BEAM, output_layer=tf.layers.Dense(VOCAB),
        length_penalty_weight=0.8, coverage_penalty_weight=0.4)
    outputs, state, lengths = tf.contrib.seq2seq.dynamic_decode(
        decoder, output_time_major=True, maximum_iterations=5)
    return {'predicted_ids': outputs.predicted_ids,
            'scores': outputs.beam_search_decoder_output.scores,
            'parent_ids': outputs.beam_search_decoder_output.parent_ids,
            'state_lengths': state.lengths, 'lengths': lengths,
            'coverage': state.accumulated_attention_probs,
            'alignment_history': state.cell_state.alignment_history}


CASES = {'tile_batch': tile_batch, 'gather_tree': gather_tree, 'lstm': lstm,
         'lstm_length_penalty': lstm_length_penalty, 'wide_beam': wide_beam,
         'attention': attention}
