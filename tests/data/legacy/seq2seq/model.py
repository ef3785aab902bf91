"""A small attention sequence-to-sequence model in the style of tensorflow/nmt (2018): a
bidirectional LSTMBlockCell encoder, a Luong-attention LSTM decoder trained by teacher forcing,
greedy and beam-search inference; written for the runner's tests."""
import six
import tensorflow as tf

SOS, EOS = 1, 2

if six.PY2:
    text_type = unicode  # noqa: F821  (Python 2's branch: never run on Python 3)
else:
    text_type = str


def encode(source, source_length, hparams):
    embedding = tf.get_variable('embedding_encoder', [hparams.vocab_size, hparams.num_units])
    inputs = tf.nn.embedding_lookup(embedding, source)
    forward = [tf.contrib.rnn.LSTMBlockCell(hparams.num_units // 2)]
    backward = [tf.contrib.rnn.LSTMBlockCell(hparams.num_units // 2)]
    outputs, _, _ = tf.contrib.rnn.stack_bidirectional_dynamic_rnn(
        forward, backward, inputs, sequence_length=source_length, dtype=tf.float32)
    return outputs


def decoder_cell(memory, source_length, batch_size, hparams, beam_width=0):
    if beam_width:
        memory, source_length = tf.contrib.framework.nest.map_structure(
            lambda t: tf.contrib.seq2seq.tile_batch(t, beam_width), (memory, source_length))
        batch_size = batch_size * beam_width
    attention = tf.contrib.seq2seq.LuongAttention(
        hparams.num_units, memory, memory_sequence_length=source_length, scale=True)
    cell = tf.contrib.seq2seq.AttentionWrapper(
        tf.nn.rnn_cell.LSTMCell(hparams.num_units), attention,
        attention_layer_size=hparams.num_units, alignment_history=not beam_width,
        name='attention')
    return cell, cell.zero_state(batch_size, tf.float32)


def decode(memory, source_length, hparams, target_input=None, target_length=None,
           beam_width=0):
    """Training logits (with `target_input`), else inferred ids: greedy, or beam search."""
    batch_size = tf.shape(source_length)[0]
    with tf.variable_scope('decoder', reuse=tf.AUTO_REUSE) as scope:
        embedding = tf.get_variable('embedding_decoder', [hparams.vocab_size,
                                                          hparams.num_units])
        cell, initial_state = decoder_cell(memory, source_length, batch_size, hparams,
                                           beam_width)
        projection = tf.layers.Dense(hparams.vocab_size, use_bias=False, name='output')
        if target_input is not None:
            helper = tf.contrib.seq2seq.TrainingHelper(
                tf.nn.embedding_lookup(embedding, target_input), target_length)
            decoder = tf.contrib.seq2seq.BasicDecoder(cell, helper, initial_state)
            outputs, _, _ = tf.contrib.seq2seq.dynamic_decode(decoder, scope=scope)
            return projection(outputs.rnn_output)
        start = tf.fill([batch_size], SOS)
        if beam_width:
            decoder = tf.contrib.seq2seq.BeamSearchDecoder(
                cell, embedding, start, EOS, initial_state, beam_width,
                output_layer=projection, length_penalty_weight=0.5)
        else:
            helper = tf.contrib.seq2seq.GreedyEmbeddingHelper(embedding, start, EOS)
            decoder = tf.contrib.seq2seq.BasicDecoder(cell, helper, initial_state,
                                                      output_layer=projection)
        outputs, _, _ = tf.contrib.seq2seq.dynamic_decode(
            decoder, maximum_iterations=hparams.max_length, scope=scope)
        if beam_width:
            return outputs.predicted_ids[:, :, 0], outputs.beam_search_decoder_output.scores
        return outputs.sample_id, None


def loss(logits, target_output, target_length):
    target_output = target_output[:, :tf.shape(logits)[1]]
    weights = tf.sequence_mask(target_length, tf.shape(target_output)[1], dtype=tf.float32)
    return tf.contrib.seq2seq.sequence_loss(logits, target_output, weights)
