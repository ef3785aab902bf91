"""`tf.contrib.seq2seq`'s `Decoder` interface and `dynamic_decode`, as TF 1.15 had them.

A decoder says how one step goes (`step`) and what comes before the first (`initialize`) and
after the last (`finalize`); `dynamic_decode` runs the steps in a `tf.while_loop` under the
variable scope 'decoder', so that the variables the cell and output layer make on their first
step are `decoder/<layer>/...`, TF 1.15's names. TF 1.15 also set a caching device on that
scope (reads placed beside the op that reads), which changes no value and is left out here.
"""
import abc

from towers.compat import tf
from towers.legacy.contrib.seq2seq import shapes


class Decoder(abc.ABC):
    """What `dynamic_decode` runs: an RNN decoder, one batch of sequences at a time.

    Subclasses define `batch_size`, `output_size`, `output_dtype`, `initialize` and `step`,
    and may define `finalize` and `tracks_own_finished`.
    """

    @property
    def batch_size(self):
        """The batch size: a scalar int32 tensor (or int)."""
        raise NotImplementedError

    @property
    def output_size(self):
        """The size of one example's output at one step: an int or `TensorShape`, or a
        structure of them (the structure `step` emits)."""
        raise NotImplementedError

    @property
    def output_dtype(self):
        """The dtype of each output of `output_size`: a dtype or a structure of them."""
        raise NotImplementedError

    @abc.abstractmethod
    def initialize(self, name=None):
        """What the first step starts from.

        Args:
          name: the name scope of the ops it makes.

        Returns:
          `(finished, inputs, state)`: a bool [batch_size] tensor, the first step's inputs
          and the initial state (structures of tensors and TensorArrays).
        """

    @abc.abstractmethod
    def step(self, time, inputs, state, name=None):
        """One decoding step (built once, run at each iteration of the loop).

        Args:
          time: a scalar int32 tensor, the step's index.
          inputs: the step's inputs (a structure of tensors).
          state: the state from the step before (a structure of tensors and TensorArrays).
          name: the name scope of the ops it makes.

        Returns:
          `(outputs, next_state, next_inputs, finished)`: the step's outputs (the structure of
          `output_size`), the next state and inputs, and a bool [batch_size] tensor.
        """

    def finalize(self, outputs, final_state, sequence_lengths):
        """Turns the stacked outputs and the last state into the results `dynamic_decode`
        returns; decoders without it (NotImplementedError) return them as they are.

        Args:
          outputs: the outputs of all steps, each [time, batch_size, ...].
          final_state: the state after the last step.
          sequence_lengths: an int32 [batch_size] tensor, each sequence's number of steps.

        Returns:
          `(final_outputs, final_state)`.
        """
        raise NotImplementedError

    @property
    def tracks_own_finished(self):
        """Whether `step`'s `finished` is already the whole truth (a decoder that reorders
        batch entries between steps, as beam search does); if False, `dynamic_decode` keeps
        an entry finished once it has finished."""
        return False


def dynamic_decode(decoder, output_time_major=False, impute_finished=False,
                   maximum_iterations=None, parallel_iterations=32, swap_memory=False,
                   scope=None):
    """Runs `decoder`'s steps until every sequence is finished (or `maximum_iterations`).

    Args:
      decoder: a `Decoder`.
      output_time_major: return the outputs [time, batch, ...] instead of [batch, time, ...].
      impute_finished: zero the outputs of finished sequences and carry their state through
        unchanged (so that the final state is the one at each sequence's end, and gradients
        skip steps past it).
      maximum_iterations: the most steps, a scalar int32 (None: no limit).
      parallel_iterations, swap_memory: passed to `tf.while_loop`.
      scope: the variable scope (default 'decoder', made unique).

    Returns:
      `(final_outputs, final_state, final_sequence_lengths)`: the outputs of all steps (the
      structure of `decoder.output_size`, after `decoder.finalize`), the last state, and an
      int32 [batch_size] tensor of the number of steps each sequence took to finish.

    Raises:
      TypeError: `decoder` is not a `Decoder`.
      ValueError: `maximum_iterations` is not a scalar.
    """
    if not isinstance(decoder, Decoder):
        raise TypeError('dynamic_decode: expected decoder to be a tf.contrib.seq2seq.Decoder, '
                        'got %s' % type(decoder))
    with tf.variable_scope(scope, 'decoder'):
        if maximum_iterations is not None:
            maximum_iterations = tf.convert_to_tensor(maximum_iterations, dtype=tf.int32,
                                                      name='maximum_iterations')
            if maximum_iterations.shape.ndims != 0:
                raise ValueError('dynamic_decode: maximum_iterations must be a scalar, got '
                                 'shape %s' % maximum_iterations.shape)
        finished, inputs, state = decoder.initialize()
        zero_outputs = shapes.batch_zeros(decoder.output_size, decoder.output_dtype,
                                          decoder.batch_size)
        if maximum_iterations is not None:
            finished = tf.logical_or(finished, maximum_iterations <= 0)
        lengths = tf.zeros_like(finished, dtype=tf.int32)
        static_batch = tf.TensorShape([tf.get_static_value(decoder.batch_size)])

        def output_array(size, dtype):
            known = isinstance(size, tf.TensorShape) and size.ndims != 0
            return tf.TensorArray(dtype=dtype, size=0, dynamic_size=True,
                                  element_shape=static_batch.concatenate(size) if known
                                  else None)
        outputs_ta = tf.nest.map_structure(output_array, decoder.output_size,
                                           decoder.output_dtype)

        def not_all_finished(time, outputs_ta, state, inputs, finished, lengths):
            del time, outputs_ta, state, inputs, lengths
            return tf.logical_not(tf.reduce_all(finished))

        def body(time, outputs_ta, state, inputs, finished, lengths):
            outputs, next_state, next_inputs, step_finished = decoder.step(time, inputs, state)
            if not decoder.tracks_own_finished:
                step_finished = tf.logical_or(step_finished, finished)
            lengths = tf.where(tf.logical_not(finished), tf.fill(tf.shape(lengths), time + 1),
                               lengths)
            tf.nest.assert_same_structure(state, next_state)
            tf.nest.assert_same_structure(outputs_ta, outputs)
            tf.nest.assert_same_structure(inputs, next_inputs)
            if impute_finished:
                outputs = tf.nest.map_structure(
                    lambda output, zero: tf.where(finished, zero, output), outputs,
                    zero_outputs)
                next_state = tf.nest.map_structure(
                    lambda new, old: _keep_finished(finished, new, old), next_state, state)
            outputs_ta = tf.nest.map_structure(lambda ta, output: ta.write(time, output),
                                               outputs_ta, outputs)
            return time + 1, outputs_ta, next_state, next_inputs, step_finished, lengths

        _, outputs_ta, state, _, _, lengths = tf.while_loop(
            not_all_finished, body,
            loop_vars=(tf.constant(0, dtype=tf.int32), outputs_ta, state, inputs, finished,
                       lengths),
            parallel_iterations=parallel_iterations, maximum_iterations=maximum_iterations,
            swap_memory=swap_memory)
        outputs = tf.nest.map_structure(lambda ta: ta.stack(), outputs_ta)
        try:
            outputs, state = decoder.finalize(outputs, state, lengths)
        except NotImplementedError:
            pass
        if not output_time_major:
            outputs = tf.nest.map_structure(shapes.transpose_batch_time, outputs)
    return outputs, state, lengths


def _keep_finished(finished, new, old):
    """A state tensor's next value: `old`'s rows where `finished`, `new`'s elsewhere;
    TensorArrays and scalars are `new`, as they have no rows."""
    if isinstance(old, tf.TensorArray):
        return new
    new.set_shape(old.shape)
    if new.shape.ndims == 0:
        return new
    return tf.where(finished, old, new)
