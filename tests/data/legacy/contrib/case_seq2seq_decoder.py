"""tf.contrib.seq2seq's BasicDecoder, helpers, dynamic_decode and sequence_loss (run_cases.py)."""
import numpy as np
import tensorflow as tf

BATCH, TIME, VOCAB, DEPTH, UNITS = 3, 4, 5, 4, 6
LENGTHS = [4, 2, 3]


def constant(shape, seed, dtype=np.float32):
    return tf.constant(np.random.RandomState(seed).standard_normal(shape).astype(dtype))


def targets():
    return tf.constant(np.random.RandomState(1).randint(0, VOCAB, (BATCH, TIME)), tf.int32)


def embedding():
    return tf.get_variable('embedding', [VOCAB, DEPTH])


def decoder_for(helper, output_layer=True):
    cell = tf.nn.rnn_cell.LSTMCell(UNITS)
    layer = tf.layers.Dense(VOCAB) if output_layer else None
    return tf.contrib.seq2seq.BasicDecoder(cell, helper, cell.zero_state(BATCH, tf.float32),
                                           output_layer=layer)


def fetches(outputs, state, lengths):
    return {'rnn_output': outputs.rnn_output, 'sample_id': outputs.sample_id,
            'lengths': lengths, 'c': state.c, 'h': state.h}


def train(result, loss):
    result['loss'] = loss
    result['train_op'] = tf.train.GradientDescentOptimizer(0.2).minimize(loss)
    return result


def training():
    inputs = tf.nn.embedding_lookup(embedding(), targets())
    helper = tf.contrib.seq2seq.TrainingHelper(inputs, LENGTHS)
    result = fetches(*tf.contrib.seq2seq.dynamic_decode(decoder_for(helper),
                                                        impute_finished=True))
    mask = tf.sequence_mask(LENGTHS, TIME, dtype=tf.float32)
    return train(result, tf.contrib.seq2seq.sequence_loss(result['rnn_output'], targets(),
                                                          mask))


def training_time_major():
    inputs = tf.transpose(tf.nn.embedding_lookup(embedding(), targets()), [1, 0, 2])
    helper = tf.contrib.seq2seq.TrainingHelper(inputs, tf.constant(LENGTHS), time_major=True)
    outputs, state, lengths = tf.contrib.seq2seq.dynamic_decode(
        decoder_for(helper), output_time_major=True, scope='dec')
    loss = tf.contrib.seq2seq.sequence_loss(
        tf.transpose(outputs.rnn_output, [1, 0, 2]), targets(),
        tf.sequence_mask(LENGTHS, TIME, dtype=tf.float32), average_across_timesteps=False,
        average_across_batch=False, sum_over_timesteps=True, sum_over_batch=True)
    return train(fetches(outputs, state, lengths), loss)


def greedy():
    """Two decoders in one graph: the second's variables are under 'decoder_1'."""
    params = embedding()
    helper = tf.contrib.seq2seq.GreedyEmbeddingHelper(params, tf.fill([BATCH], 1), 0)
    result = fetches(*tf.contrib.seq2seq.dynamic_decode(decoder_for(helper),
                                                        impute_finished=True,
                                                        maximum_iterations=6))
    helper = tf.contrib.seq2seq.GreedyEmbeddingHelper(
        lambda ids: tf.nn.embedding_lookup(params, ids), [0, 3, 4], 0)
    second = fetches(*tf.contrib.seq2seq.dynamic_decode(decoder_for(helper),
                                                        maximum_iterations=tf.constant(5)))
    result.update({'second_' + name: value for name, value in second.items()})
    return result


def sample():
    helper = tf.contrib.seq2seq.SampleEmbeddingHelper(embedding(), tf.fill([BATCH], 1), 2,
                                                      softmax_temperature=0.5, seed=7)
    return fetches(*tf.contrib.seq2seq.dynamic_decode(decoder_for(helper), impute_finished=True,
                                                      maximum_iterations=5))


def scheduled_embedding():
    params = embedding()
    inputs = tf.nn.embedding_lookup(params, targets())
    helper = tf.contrib.seq2seq.ScheduledEmbeddingTrainingHelper(
        inputs, LENGTHS, params, 0.5, seed=3, scheduling_seed=4)
    result = fetches(*tf.contrib.seq2seq.dynamic_decode(decoder_for(helper),
                                                        parallel_iterations=1))
    return train(result, tf.contrib.seq2seq.sequence_loss(
        result['rnn_output'], targets(), tf.sequence_mask(LENGTHS, TIME, dtype=tf.float32),
        average_across_batch=False))


def scheduled_output():
    helper = tf.contrib.seq2seq.ScheduledOutputTrainingHelper(
        constant((BATCH, TIME, VOCAB), 2), LENGTHS, tf.constant(0.6), seed=5,
        next_inputs_fn=tf.nn.softmax, auxiliary_inputs=constant((BATCH, TIME, 2), 3))
    result = fetches(*tf.contrib.seq2seq.dynamic_decode(decoder_for(helper), swap_memory=True,
                                                        parallel_iterations=1))
    return train(result, tf.reduce_mean(result['rnn_output'] ** 2))


def scheduled_output_plain():
    helper = tf.contrib.seq2seq.ScheduledOutputTrainingHelper(
        constant((TIME, BATCH, VOCAB), 4), LENGTHS, 0.5, time_major=True, seed=6)
    return fetches(*tf.contrib.seq2seq.dynamic_decode(decoder_for(helper), impute_finished=True,
                                                      parallel_iterations=1))


def inference():
    helper = tf.contrib.seq2seq.InferenceHelper(
        sample_fn=lambda outputs: outputs, sample_shape=[VOCAB], sample_dtype=tf.float32,
        start_inputs=constant((BATCH, VOCAB), 8),
        end_fn=lambda sample_ids: tf.reduce_sum(sample_ids, -1) > -0.3,
        next_inputs_fn=tf.tanh)
    return fetches(*tf.contrib.seq2seq.dynamic_decode(decoder_for(helper), maximum_iterations=4))


def inference_no_layer():
    helper = tf.contrib.seq2seq.InferenceHelper(
        lambda outputs: tf.argmax(outputs, -1), [], tf.int64, constant((BATCH, UNITS), 5),
        lambda sample_ids: tf.equal(sample_ids, 1),
        next_inputs_fn=lambda ids: tf.one_hot(ids, UNITS))
    return fetches(*tf.contrib.seq2seq.dynamic_decode(decoder_for(helper, output_layer=False),
                                                      maximum_iterations=5))


def custom():
    start = constant((BATCH, VOCAB), 6)
    helper = tf.contrib.seq2seq.CustomHelper(
        initialize_fn=lambda: (tf.constant([False, False, True]), start),
        sample_fn=lambda time, outputs, state: tf.argmax(outputs, -1, output_type=tf.int32),
        next_inputs_fn=lambda time, outputs, state, sample_ids: (
            tf.logical_or(time >= 2, tf.equal(sample_ids, 0)), tf.nn.softmax(outputs), state))
    return fetches(*tf.contrib.seq2seq.dynamic_decode(decoder_for(helper), impute_finished=True))


class TacoTestHelper(tf.contrib.seq2seq.Helper):
    """A speech program's helper: feeds back the frames until each drops below a level."""

    def __init__(self, batch_size, frames):
        with tf.name_scope('TacoTestHelper'):
            self._batch_size = batch_size
            self._frames = frames

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return tf.TensorShape([])

    @property
    def sample_ids_dtype(self):
        return tf.int32

    def initialize(self, name=None):
        return (tf.tile([False], [self._batch_size]),
                constant((BATCH, self._frames), 9))

    def sample(self, time, outputs, state, name=None):
        return tf.tile([0], [self._batch_size])

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with tf.name_scope('TacoTestHelper'):
            finished = tf.reduce_all(tf.abs(outputs) < 0.6, axis=1)
            return finished, outputs, state


def subclass():
    decoder = decoder_for(TacoTestHelper(BATCH, VOCAB))
    result = fetches(*tf.contrib.seq2seq.dynamic_decode(decoder, maximum_iterations=5))
    return train(result, tf.reduce_mean(result['rnn_output'] ** 2))


def losses():
    logits = constant((BATCH, TIME, VOCAB), 7)
    weights = tf.constant([[1., 1., 1., 1.], [1., 0.5, 0., 0.], [0., 0., 0., 0.]])
    seq_loss = tf.contrib.seq2seq.sequence_loss
    options = {
        'default': {},
        'per_step': {'average_across_timesteps': False},
        'per_example': {'average_across_batch': False},
        'none': {'average_across_timesteps': False, 'average_across_batch': False},
        'sum_both': {'average_across_timesteps': False, 'average_across_batch': False,
                     'sum_over_timesteps': True, 'sum_over_batch': True},
        'sum_time': {'average_across_timesteps': False, 'average_across_batch': False,
                     'sum_over_timesteps': True},
        'sum_batch': {'average_across_timesteps': False, 'average_across_batch': False,
                      'sum_over_batch': True},
        'average_time_sum_batch': {'average_across_batch': False, 'sum_over_batch': True},
        'custom_softmax': {'softmax_loss_function': lambda labels, logits: 2.0 *
                           tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                          logits=logits),
                           'name': 'doubled'},
    }
    return {name: seq_loss(logits, targets(), weights, **kwargs)
            for name, kwargs in options.items()}


CASES = {'training': training, 'training_time_major': training_time_major, 'greedy': greedy,
         'sample': sample,
         'scheduled_embedding': scheduled_embedding, 'scheduled_output': scheduled_output,
         'scheduled_output_plain': scheduled_output_plain, 'inference': inference,
         'inference_no_layer': inference_no_layer, 'custom': custom, 'subclass': subclass,
         'losses': losses}
