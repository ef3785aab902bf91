"""`tf.contrib.crf` of TF 1.15: a linear-chain conditional random field over tag sequences.

Shapes below: B the batch, T the longest sequence, O the number of tags. Unary potentials are
[B, T, O] scores of each tag at each step; the transition matrix [O, O] scores tag i followed by
tag j at [i, j]. Sequences shorter than T are padded; steps at or past a sequence's length add
nothing to its scores, and a sequence of length 0 (or less) has score and normalizer 0.

The forward algorithm (normalizer) and Viterbi decoding run as TF 1.x ran them, with its RNN
cells over `tf.nn.dynamic_rnn`, so that padded steps keep the state and give zero outputs, and
a batch whose T is 1 skips the recursion (at graph construction when T is static, else in a
`tf.cond`). `crf_log_likelihood` creates the matrix as the variable `transitions` in the
current variable scope when it is not given.
"""
import numpy as np

from towers.compat import rnn_cells, tf

# The base class of the runner's `tf.nn.rnn_cell` cells (tf-keras's legacy RNNCell), which
# `tf.compat.v1.nn.rnn_cell` refuses to hand out outside the runner under Keras 3.
_RNNCell = rnn_cells.RNNCell


def _one_step(inputs):
    """Whether `inputs` ([B, T, ...]) has T == 1: a bool when T is static, else a tensor."""
    steps = tf.dimension_value(inputs.shape[1])
    if steps is not None:
        return steps == 1
    return tf.equal(tf.shape(inputs)[1], 1)


def _by_length(one_step, single, multi):
    """`single()` when `one_step` holds, else `multi()`; a `tf.cond` when it is a tensor."""
    if isinstance(one_step, bool):
        return single() if one_step else multi()
    return tf.cond(one_step, single, multi)


def _zero_where_empty(values, sequence_lengths):
    """`values` ([B]) with 0 for the sequences of length <= 0."""
    return tf.where(sequence_lengths <= 0, tf.zeros_like(values), values)


def crf_unary_score(tag_indices, sequence_lengths, inputs):
    """The sum over each sequence's steps of the potential of its tag.

    Args:
      tag_indices: [B, T] int32 or int64 tags.
      sequence_lengths: [B] lengths.
      inputs: [B, T, O] unary potentials.

    Returns:
      [B] unary scores.
    """
    scores = tf.gather(inputs, tag_indices, batch_dims=2)
    mask = tf.sequence_mask(sequence_lengths, maxlen=tf.shape(tag_indices)[1],
                            dtype=scores.dtype)
    return tf.reduce_sum(scores * mask, 1)


def crf_binary_score(tag_indices, sequence_lengths, transition_params):
    """The sum over each sequence's consecutive tag pairs of their transition score.

    Args:
      tag_indices: [B, T] int32 or int64 tags.
      sequence_lengths: [B] lengths.
      transition_params: [O, O] transition scores.

    Returns:
      [B] binary scores.
    """
    pairs = tf.stack([tag_indices[:, :-1], tag_indices[:, 1:]], axis=2)
    scores = tf.gather_nd(transition_params, pairs)
    mask = tf.sequence_mask(sequence_lengths, maxlen=tf.shape(tag_indices)[1],
                            dtype=scores.dtype)[:, 1:]
    return tf.reduce_sum(scores * mask, 1)


def crf_sequence_score(inputs, tag_indices, sequence_lengths, transition_params):
    """The unnormalized score of each tag sequence: unary plus binary scores.

    Args:
      inputs: [B, T, O] unary potentials.
      tag_indices: [B, T] tags.
      sequence_lengths: [B] lengths.
      transition_params: [O, O] transition scores.

    Returns:
      [B] scores (0 for a sequence of length <= 0).
    """
    # With T == 1 the binary score is an empty sum and the unary score the first step's
    # potential, which is what TF 1.x's separate one-step path gathered.
    return (crf_unary_score(tag_indices, sequence_lengths, inputs)
            + crf_binary_score(tag_indices, sequence_lengths, transition_params))


def crf_multitag_sequence_score(inputs, tag_bitmap, sequence_lengths, transition_params):
    """The log of the summed exponentiated scores of all tag sequences allowed by `tag_bitmap`.

    One-hot rows in `tag_bitmap` give `crf_sequence_score`'s scores.

    Args:
      inputs: [B, T, O] unary potentials.
      tag_bitmap: [B, T, O] bool, the tags allowed at each step.
      sequence_lengths: [B] lengths.
      transition_params: [O, O] transition scores.

    Returns:
      [B] scores. With T == 1 a sequence of length 0 is not zeroed, as in TF 1.x.
    """
    allowed = tf.where(tag_bitmap, inputs, tf.fill(tf.shape(inputs), float('-inf')))
    return _by_length(_one_step(inputs),
                      lambda: tf.reduce_logsumexp(allowed, axis=[1, 2]),
                      lambda: crf_log_norm(allowed, sequence_lengths, transition_params))


def _run_from_first_step(cell, potentials, sequence_lengths, dtype):
    """Runs `cell` over steps 1..T-1 of `potentials` from step 0's potentials.

    Returns:
      (outputs [B, T-1, ...], final state [B, O], the steps run per sequence [B]).
    """
    steps = tf.maximum(tf.zeros([], sequence_lengths.dtype), sequence_lengths - 1)
    outputs, state = tf.nn.dynamic_rnn(cell, potentials[:, 1:], sequence_length=steps,
                                       initial_state=potentials[:, 0], dtype=dtype)
    return outputs, state, steps


def crf_log_norm(inputs, sequence_lengths, transition_params):
    """The log partition function of each sequence (forward algorithm).

    Args:
      inputs: [B, T, O] unary potentials.
      sequence_lengths: [B] lengths.
      transition_params: [O, O] transition scores.

    Returns:
      [B] log normalizers (0 for a sequence of length <= 0).
    """
    def forward():
        return _run_from_first_step(CrfForwardRnnCell(transition_params), inputs,
                                    sequence_lengths, tf.float32)[1]

    alphas = _by_length(_one_step(inputs), lambda: inputs[:, 0], forward)
    return _zero_where_empty(tf.reduce_logsumexp(alphas, [1]), sequence_lengths)


def crf_log_likelihood(inputs, tag_indices, sequence_lengths, transition_params=None):
    """The log-likelihood of each tag sequence under the CRF.

    Args:
      inputs: [B, T, O] unary potentials; O must be static.
      tag_indices: [B, T] tags.
      sequence_lengths: [B] lengths.
      transition_params: [O, O] transition scores, or None to create the float32 variable
        `transitions` with `tf.get_variable`'s default initializer.

    Returns:
      (log_likelihood [B], transition_params [O, O]).
    """
    if transition_params is None:
        num_tags = tf.dimension_value(inputs.shape[2])
        transition_params = tf.get_variable('transitions', [num_tags, num_tags])
    log_likelihood = (crf_sequence_score(inputs, tag_indices, sequence_lengths,
                                         transition_params)
                      - crf_log_norm(inputs, sequence_lengths, transition_params))
    return log_likelihood, transition_params


class _CrfCell(_RNNCell):
    """A cell of the CRF's recursions: its state and output are [B, O] rows, one per tag."""

    def __init__(self, transition_params):
        super().__init__()
        # [1, O, O]: broadcast over the batch against a state expanded to [B, O, 1].
        self._transition_params = tf.expand_dims(transition_params, 0)
        self._num_tags = tf.dimension_value(transition_params.shape[0])

    @property
    def state_size(self):
        return self._num_tags

    @property
    def output_size(self):
        return self._num_tags

    def _scores(self, state):
        """[B, from, to]: each previous tag's score plus its transition to each next tag."""
        return tf.expand_dims(state, 2) + self._transition_params


class CrfForwardRnnCell(_CrfCell):
    """One step of the forward algorithm: alphas [B, O] -> next alphas, in log space.

    Args:
      transition_params: [O, O] transition scores.
    """

    def __call__(self, inputs, state, scope=None):
        """inputs: [B, O] potentials of the step; state: [B, O] alphas -> (alphas, alphas)."""
        alphas = inputs + tf.reduce_logsumexp(self._scores(state), [1])
        return alphas, alphas


class CrfDecodeForwardRnnCell(_CrfCell):
    """One forward step of Viterbi decoding: best scores [B, O] -> (backpointers, scores).

    Args:
      transition_params: [O, O] transition scores.
    """

    def __call__(self, inputs, state, scope=None):
        """inputs: [B, O] potentials; state: [B, O] best scores ending in each tag ->
        (int32 [B, O] best previous tag of each tag, [B, O] new best scores)."""
        scores = self._scores(state)
        backpointers = tf.cast(tf.argmax(scores, 1), tf.int32)
        return backpointers, inputs + tf.reduce_max(scores, [1])


class CrfDecodeBackwardRnnCell(_RNNCell):
    """One backward step of Viterbi decoding: follows a step's backpointers from a tag.

    Args:
      num_tags: the number of tags O.
    """

    def __init__(self, num_tags):
        super().__init__()
        self._num_tags = num_tags

    @property
    def state_size(self):
        return 1

    @property
    def output_size(self):
        return 1

    def __call__(self, inputs, state, scope=None):
        """inputs: int32 [B, O] backpointers of the step after; state: int32 [B, 1] tag there
        -> (int32 [B, 1] tag here, the same)."""
        tags = tf.gather(inputs, state[:, 0], batch_dims=1)[:, tf.newaxis]
        return tags, tags


def viterbi_decode(score, transition_params):
    """The best tag sequence of one sequence, in NumPy (for use outside the graph).

    Args:
      score: [T, O] NumPy unary potentials of one sequence, without padding (T >= 1).
      transition_params: [O, O] NumPy transition scores.

    Returns:
      (a list of T tags, the sequence's score, a NumPy scalar of `score`'s dtype).
    """
    best = np.zeros_like(score)
    best[0] = score[0]
    backpointers = np.zeros_like(score, dtype=np.int32)
    for step in range(1, score.shape[0]):
        candidates = best[step - 1][:, np.newaxis] + transition_params
        backpointers[step] = np.argmax(candidates, 0)
        best[step] = score[step] + np.max(candidates, 0)
    tags = [np.argmax(best[-1])]
    for pointers in backpointers[:0:-1]:
        tags.append(pointers[tags[-1]])
    return tags[::-1], np.max(best[-1])


def crf_decode(potentials, transition_params, sequence_length):
    """The best tag sequence of each sequence, in the graph (Viterbi).

    Args:
      potentials: [B, T, O] unary potentials; O static when T may exceed 1.
      transition_params: [O, O] transition scores.
      sequence_length: [B] lengths.

    Returns:
      (int32 [B, T] tags, 0 past each sequence's length; [B] their scores).
    """
    def single():
        first = potentials[:, 0]
        return tf.cast(tf.argmax(first, 1), tf.int32)[:, tf.newaxis], tf.reduce_max(first, 1)

    def multi():
        backpointers, last_scores, steps = _run_from_first_step(
            CrfDecodeForwardRnnCell(transition_params), potentials, sequence_length,
            tf.int32)
        last_tag = tf.cast(tf.argmax(last_scores, 1), tf.int32)[:, tf.newaxis]
        earlier, _ = tf.nn.dynamic_rnn(
            CrfDecodeBackwardRnnCell(tf.dimension_value(potentials.shape[2])),
            tf.reverse_sequence(backpointers, steps, seq_axis=1, batch_axis=0),
            sequence_length=steps, initial_state=last_tag, dtype=tf.int32)
        # Last tag first, then backwards; padding (zeros) stays after the reversed part.
        reversed_tags = tf.concat([last_tag, earlier[:, :, 0]], axis=1)
        tags = tf.reverse_sequence(reversed_tags, sequence_length, seq_axis=1, batch_axis=0)
        return tags, tf.reduce_max(last_scores, 1)

    return _by_length(_one_step(potentials), single, multi)
