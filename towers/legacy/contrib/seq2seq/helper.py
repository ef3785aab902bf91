"""`tf.contrib.seq2seq`'s helpers of TF 1.15: what a `BasicDecoder` feeds its cell at each step
and how it samples from the outputs.

Training helpers read the inputs of each step from a batch of sequences (the scheduled ones
sometimes feed a sample or the output instead); inference helpers feed back what they sample.
Random draws take the seeds given, as TF 1.15's did, so that a graph seed and op seed give the
same samples as on TF 1.15.
"""
import abc

from towers.compat import tf
from towers.legacy.contrib.seq2seq import sampling, shapes


class Helper(abc.ABC):
    """The interface a `BasicDecoder` samples and reads its next inputs through; users
    subclass it for their own sampling."""

    @property
    @abc.abstractmethod
    def batch_size(self):
        """The batch size of the samples, a scalar int32 tensor."""

    @property
    @abc.abstractmethod
    def sample_ids_shape(self):
        """The `TensorShape` of one example's sample (without the batch dimension)."""

    @property
    @abc.abstractmethod
    def sample_ids_dtype(self):
        """The dtype of the samples."""

    @abc.abstractmethod
    def initialize(self, name=None):
        """Returns `(initial_finished, initial_inputs)`."""

    @abc.abstractmethod
    def sample(self, time, outputs, state, name=None):
        """Returns the step's `sample_ids`, [batch, ...]."""

    @abc.abstractmethod
    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        """Returns `(finished, next_inputs, next_state)`."""


class _Helper(Helper):
    """A `Helper` whose batch size and samples' shape and dtype are attributes (scalar int32
    samples unless an instance sets its own)."""

    _sample_ids_shape = tf.TensorShape([])
    _sample_ids_dtype = tf.int32

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def sample_ids_shape(self):
        return self._sample_ids_shape

    @property
    def sample_ids_dtype(self):
        return self._sample_ids_dtype


class CustomHelper(_Helper):
    """A helper made of three functions.

    Args:
      initialize_fn: () -> `(finished, first_inputs)`; the batch size is `finished`'s size.
      sample_fn: (time, outputs, state) -> `sample_ids`, all passed by keyword.
      next_inputs_fn: (time, outputs, state, sample_ids) -> `(finished, next_inputs,
        next_state)`, all passed by keyword.
      sample_ids_shape: the shape of one example's sample (default a scalar).
      sample_ids_dtype: the samples' dtype (default int32).
    """

    def __init__(self, initialize_fn, sample_fn, next_inputs_fn, sample_ids_shape=None,
                 sample_ids_dtype=None):
        self._initialize_fn = initialize_fn
        self._sample_fn = sample_fn
        self._next_inputs_fn = next_inputs_fn
        self._batch_size = None
        self._sample_ids_shape = tf.TensorShape(sample_ids_shape or [])
        self._sample_ids_dtype = sample_ids_dtype or tf.int32

    @property
    def batch_size(self):
        if self._batch_size is None:
            raise ValueError('CustomHelper: batch_size read before initialize was called')
        return self._batch_size

    def _scope(self, name, what, values=None):
        return tf.name_scope(name, type(self).__name__ + what, values)

    def initialize(self, name=None):
        with self._scope(name, 'Initialize'):
            finished, first_inputs = self._initialize_fn()
            if self._batch_size is None:
                self._batch_size = tf.size(finished)
        return finished, first_inputs

    def sample(self, time, outputs, state, name=None):
        with self._scope(name, 'Sample', (time, outputs, state)):
            return self._sample_fn(time=time, outputs=outputs, state=state)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with self._scope(name, 'NextInputs', (time, outputs, state)):
            return self._next_inputs_fn(time=time, outputs=outputs, state=state,
                                        sample_ids=sample_ids)


class TrainingHelper(_Helper):
    """Feeds step t the inputs of time t; samples are the argmax of the outputs.

    Args:
      inputs: a tensor [batch, time, ...] ([time, batch, ...] with `time_major`).
      sequence_length: an int32 [batch] vector; a sequence is finished after that many steps.
      time_major: whether `inputs` is time major.
      name: the name scope.

    Raises:
      ValueError: `sequence_length` is not a vector.
    """

    def __init__(self, inputs, sequence_length, time_major=False, name=None):
        with tf.name_scope(name, 'TrainingHelper', [inputs, sequence_length]):
            inputs = tf.convert_to_tensor(inputs, name='inputs')
            self._inputs = inputs
            if not time_major:
                inputs = tf.nest.map_structure(shapes.transpose_batch_time, inputs)
            self._input_tas = tf.nest.map_structure(shapes.unstack_time, inputs)
            self._sequence_length = tf.convert_to_tensor(sequence_length,
                                                         name='sequence_length')
            if self._sequence_length.shape.ndims != 1:
                raise ValueError('TrainingHelper: sequence_length must be a vector, got '
                                 'shape %s' % self._sequence_length.shape)
            self._zero_inputs = tf.nest.map_structure(lambda x: tf.zeros_like(x[0, :]), inputs)
            self._batch_size = tf.size(sequence_length)

    @property
    def inputs(self):
        return self._inputs

    @property
    def sequence_length(self):
        return self._sequence_length

    def _inputs_at(self, time, finished):
        """The inputs of `time`, or zeros once every sequence is finished (past the end)."""
        return tf.cond(tf.reduce_all(finished), lambda: self._zero_inputs,
                       lambda: tf.nest.map_structure(lambda ta: ta.read(time),
                                                     self._input_tas))

    def initialize(self, name=None):
        with tf.name_scope(name, 'TrainingHelperInitialize'):
            finished = tf.equal(0, self._sequence_length)
            return finished, self._inputs_at(0, finished)

    def sample(self, time, outputs, name=None, **unused_kwargs):
        with tf.name_scope(name, 'TrainingHelperSample', [time, outputs]):
            return tf.cast(tf.argmax(outputs, axis=-1), tf.int32)

    def next_inputs(self, time, outputs, state, name=None, **unused_kwargs):
        with tf.name_scope(name, 'TrainingHelperNextInputs', [time, outputs, state]):
            finished = time + 1 >= self._sequence_length
            return finished, self._inputs_at(time + 1, finished), state


class ScheduledEmbeddingTrainingHelper(TrainingHelper):
    """A `TrainingHelper` that, with probability `sampling_probability` for each example and
    step, feeds the embedding of an id drawn from the outputs (as logits) instead of the
    input. Samples are the drawn ids, -1 where the input was fed.

    Args:
      inputs, sequence_length, time_major, name: as for `TrainingHelper`.
      embedding: a function ids -> inputs, or the `params` of `tf.nn.embedding_lookup`.
      sampling_probability: a float scalar (or [batch] vector) tensor.
      seed: the op seed of the id draws.
      scheduling_seed: the op seed of the draws that choose where to sample.

    Raises:
      ValueError: `sampling_probability` is neither a scalar nor a vector.
    """

    def __init__(self, inputs, sequence_length, embedding, sampling_probability,
                 time_major=False, seed=None, scheduling_seed=None, name=None):
        with tf.name_scope(name, 'ScheduledEmbeddingSamplingWrapper',
                           [embedding, sampling_probability]):
            self._embedding_fn = sampling.embedding_fn(embedding)
            self._sampling_probability = sampling.probability(sampling_probability)
            self._seed = seed
            self._scheduling_seed = scheduling_seed
            super().__init__(inputs=inputs, sequence_length=sequence_length,
                             time_major=time_major, name=name)

    def sample(self, time, outputs, state, name=None):
        with tf.name_scope(name, 'ScheduledEmbeddingTrainingHelperSample',
                           [time, outputs, state]):
            chosen = sampling.bernoulli(self._sampling_probability, self.batch_size, tf.bool,
                                        self._scheduling_seed)
            return tf.where(chosen, sampling.categorical(outputs, self._seed),
                            tf.fill([self.batch_size], -1))

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with tf.name_scope(name, 'ScheduledEmbeddingTrainingHelperNextInputs',
                           [time, outputs, state, sample_ids]):
            finished, base_inputs, state = super().next_inputs(
                time=time, outputs=outputs, state=state, sample_ids=sample_ids, name=name)

            def embed(rows):
                return self._embedding_fn(tf.gather_nd(sample_ids, rows))
            next_inputs = tf.cond(
                tf.reduce_all(finished), lambda: base_inputs,
                lambda: sampling.merge_rows(sample_ids > -1, embed, base_inputs))
            return finished, next_inputs, state


class ScheduledOutputTrainingHelper(TrainingHelper):
    """A `TrainingHelper` that, with probability `sampling_probability` for each example and
    step, feeds the step's output (through `next_inputs_fn`) instead of the input. Samples are
    1 where the output was fed, 0 elsewhere.

    Args:
      inputs, sequence_length, time_major, name: as for `TrainingHelper`.
      sampling_probability: a float scalar (or [batch] vector) tensor.
      seed: the op seed of the draws that choose where to feed the output.
      next_inputs_fn: a function outputs -> inputs for the sampled examples (default: the
        outputs themselves).
      auxiliary_inputs: a tensor shaped as `inputs` but for its last dimension, joined (last
        dimension) to the inputs and to what is fed back.

    Raises:
      ValueError: `sampling_probability` is neither a scalar nor a vector.
    """

    def __init__(self, inputs, sequence_length, sampling_probability, time_major=False,
                 seed=None, next_inputs_fn=None, auxiliary_inputs=None, name=None):
        with tf.name_scope(name, 'ScheduledOutputTrainingHelper',
                           [inputs, auxiliary_inputs, sampling_probability]):
            self._sampling_probability = sampling.probability(sampling_probability)
            self._auxiliary_input_tas = None
            if auxiliary_inputs is not None:
                inputs = tf.convert_to_tensor(inputs, name='inputs')
                auxiliary_inputs = tf.convert_to_tensor(auxiliary_inputs,
                                                        name='auxiliary_inputs')
                inputs = tf.concat((inputs, auxiliary_inputs), -1)
                if not time_major:
                    auxiliary_inputs = shapes.transpose_batch_time(auxiliary_inputs)
                self._auxiliary_input_tas = shapes.unstack_time(auxiliary_inputs)
            self._seed = seed
            self._next_inputs_fn = next_inputs_fn
            super().__init__(inputs=inputs, sequence_length=sequence_length,
                             time_major=time_major, name=name)

    def sample(self, time, outputs, state, name=None):
        with tf.name_scope(name, 'ScheduledOutputTrainingHelperSample',
                           [time, outputs, state]):
            return sampling.bernoulli(self._sampling_probability, self.batch_size, tf.int32,
                                      self._seed)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        with tf.name_scope(name, 'ScheduledOutputTrainingHelperNextInputs',
                           [time, outputs, state, sample_ids]):
            finished, base_inputs, state = super().next_inputs(
                time=time, outputs=outputs, state=state, sample_ids=sample_ids, name=name)
            sampled = tf.cast(sample_ids, tf.bool)

            def with_auxiliary(fed, rows=None):
                if self._auxiliary_input_tas is None:
                    return fed
                auxiliary = self._auxiliary_input_tas.read(time + 1)
                if rows is not None:
                    auxiliary = tf.gather_nd(auxiliary, rows)
                return tf.concat((fed, auxiliary), -1)

            def feed_outputs():
                if self._next_inputs_fn is None:
                    return tf.where(sampled, with_auxiliary(outputs), base_inputs)
                return sampling.merge_rows(sampled, lambda rows: with_auxiliary(
                    self._next_inputs_fn(tf.gather_nd(outputs, rows)), rows), base_inputs)
            skip = tf.logical_or(tf.reduce_all(finished),
                                 tf.logical_not(tf.reduce_any(sampled)))
            next_inputs = tf.cond(skip, lambda: base_inputs, feed_outputs)
            return finished, next_inputs, state


class GreedyEmbeddingHelper(_Helper):
    """For inference: samples the argmax of the outputs (as logits) and feeds its embedding;
    a sequence is finished when it samples `end_token`.

    Args:
      embedding: a function ids -> inputs, or the `params` of `tf.nn.embedding_lookup`.
      start_tokens: an int32 [batch] vector, the ids whose embedding is the first input.
      end_token: an int32 scalar.

    Raises:
      ValueError: `start_tokens` is not a vector or `end_token` not a scalar.
    """

    def __init__(self, embedding, start_tokens, end_token):
        self._embedding_fn = sampling.embedding_fn(embedding)
        self._start_tokens = tf.convert_to_tensor(start_tokens, dtype=tf.int32,
                                                  name='start_tokens')
        self._end_token = tf.convert_to_tensor(end_token, dtype=tf.int32, name='end_token')
        if self._start_tokens.shape.ndims != 1:
            raise ValueError('%s: start_tokens must be a vector, got shape %s'
                             % (type(self).__name__, self._start_tokens.shape))
        self._batch_size = tf.size(start_tokens)
        if self._end_token.shape.ndims != 0:
            raise ValueError('%s: end_token must be a scalar, got shape %s'
                             % (type(self).__name__, self._end_token.shape))
        self._start_inputs = self._embedding_fn(self._start_tokens)

    def initialize(self, name=None):
        return tf.tile([False], [self._batch_size]), self._start_inputs

    def _logits(self, outputs):
        if not isinstance(outputs, tf.Tensor):
            raise TypeError('%s: expected the outputs to be a single Tensor, got %s'
                            % (type(self).__name__, type(outputs)))
        return outputs

    def sample(self, time, outputs, state, name=None):
        return tf.argmax(self._logits(outputs), axis=-1, output_type=tf.int32)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        finished = tf.equal(sample_ids, self._end_token)
        # Once all are finished the inputs are never read: the start inputs stand in.
        next_inputs = tf.cond(tf.reduce_all(finished), lambda: self._start_inputs,
                              lambda: self._embedding_fn(sample_ids))
        return finished, next_inputs, state


class SampleEmbeddingHelper(GreedyEmbeddingHelper):
    """A `GreedyEmbeddingHelper` that draws each id from the softmax of the outputs (divided
    by `softmax_temperature`, default 1) instead of taking the argmax.

    Args:
      embedding, start_tokens, end_token: as for `GreedyEmbeddingHelper`.
      softmax_temperature: a float scalar > 0, or None.
      seed: the op seed of the draws.
    """

    def __init__(self, embedding, start_tokens, end_token, softmax_temperature=None,
                 seed=None):
        super().__init__(embedding, start_tokens, end_token)
        self._softmax_temperature = softmax_temperature
        self._seed = seed

    def sample(self, time, outputs, state, name=None):
        logits = self._logits(outputs)
        if self._softmax_temperature is not None:
            logits = logits / self._softmax_temperature
        return sampling.categorical(logits, self._seed)


class InferenceHelper(_Helper):
    """For inference with a sampling function of the user's: feeds back the samples (or
    `next_inputs_fn` of them) until `end_fn` says a sequence is finished.

    Args:
      sample_fn: outputs -> sample_ids.
      sample_shape: the shape of one example's sample.
      sample_dtype: the samples' dtype.
      start_inputs: the first inputs, [batch, ...].
      end_fn: sample_ids -> a bool [batch] vector, True where a sequence ends.
      next_inputs_fn: sample_ids -> next inputs (default: the samples themselves).
    """

    def __init__(self, sample_fn, sample_shape, sample_dtype, start_inputs, end_fn,
                 next_inputs_fn=None):
        self._sample_fn = sample_fn
        self._end_fn = end_fn
        self._sample_ids_shape = tf.TensorShape(sample_shape)
        self._sample_ids_dtype = sample_dtype
        self._next_inputs_fn = next_inputs_fn
        self._batch_size = tf.shape(start_inputs)[0]
        self._start_inputs = tf.convert_to_tensor(start_inputs, name='start_inputs')

    def initialize(self, name=None):
        return tf.tile([False], [self._batch_size]), self._start_inputs

    def sample(self, time, outputs, state, name=None):
        return self._sample_fn(outputs)

    def next_inputs(self, time, outputs, state, sample_ids, name=None):
        next_inputs = (sample_ids if self._next_inputs_fn is None
                       else self._next_inputs_fn(sample_ids))
        return self._end_fn(sample_ids), next_inputs, state
