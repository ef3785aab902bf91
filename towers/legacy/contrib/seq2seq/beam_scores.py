"""The scores of TF 1.15's beam search (`tf.contrib.seq2seq.BeamSearchDecoder`).

A continuation (beam, token) scores its total log probability (a finished beam continues only
with the end token, at no cost) divided by GNMT's length penalty
`((5 + length) / 6) ** length_penalty_weight`, plus, on beams already finished,
`coverage_penalty_weight` times the sum over source positions of
`log(min(accumulated attention, 1))` (Wu et al., 2016).
"""
from towers.compat import tf
from towers.legacy.contrib.seq2seq import attention_wrapper


def only_end_after_end(log_probs, end_token, finished):
    """`log_probs` [batch, beam, vocab] with a finished beam's row put all on `end_token`
    (log probability 0; the lowest float elsewhere)."""
    dtype = log_probs.dtype
    shape = tf.shape(log_probs)
    end_row = tf.one_hot(end_token, shape[2], on_value=tf.constant(0., dtype),
                         off_value=tf.constant(dtype.min, dtype), dtype=dtype)
    return tf.where(tf.broadcast_to(tf.expand_dims(finished, 2), shape),
                    tf.broadcast_to(end_row, shape), log_probs)


def _is_zero(weight):
    return tf.get_static_value(tf.convert_to_tensor(weight)) == 0


def candidate_scores(log_probs, lengths, length_penalty_weight, coverage_penalty_weight,
                     finished, accumulated_attention_probs):
    """The candidates' scores [batch, beam, vocab]: total log probability over the length
    penalty, plus the coverage penalty on beams already `finished`."""
    weight = tf.convert_to_tensor(length_penalty_weight, name='penalty_factor')
    weight.set_shape([])
    if _is_zero(weight):
        penalty = 1.0
    else:
        penalty = tf.pow(5. + tf.cast(lengths, tf.float32), weight) / tf.pow(6., weight)
    scored = log_probs / tf.cast(penalty, log_probs.dtype)
    coverage_weight = tf.convert_to_tensor(coverage_penalty_weight,
                                           name='coverage_penalty_weight')
    if coverage_weight.shape.ndims != 0:
        raise ValueError('BeamSearchDecoder: coverage_penalty_weight must be a scalar, got '
                         'shape %s' % coverage_weight.shape)
    if _is_zero(coverage_weight):
        return scored
    attention = accumulated_attention_probs
    # Positions never attended to count as fully covered (log 1 = 0), not as log 0.
    attention = tf.where(tf.equal(attention, 0.), tf.ones_like(attention), attention)
    coverage = tf.reduce_sum(tf.log(tf.minimum(attention, 1.)), 2)
    coverage = coverage * tf.cast(finished, tf.float32) * coverage_weight
    return scored + tf.expand_dims(coverage, 2)


def get_attention_probs(next_cell_state, coverage_penalty_weight):
    """The attention probabilities [batch, beam, memory_time] of a (split) cell state, averaged
    over attention wrappers and mechanisms; None when `coverage_penalty_weight` is 0.

    Raises:
      ValueError: a coverage penalty without an `AttentionWrapperState` in the state (itself,
        or an element of it as a tuple).
    """
    if _is_zero(coverage_penalty_weight):
        return None
    wrapper_state = attention_wrapper.AttentionWrapperState
    states = [next_cell_state] if isinstance(next_cell_state, wrapper_state) else [
        s for s in (next_cell_state if isinstance(next_cell_state, tuple) else ())
        if isinstance(s, wrapper_state)]
    if not states:
        raise ValueError('BeamSearchDecoder: coverage_penalty_weight must be 0.0 when no cell '
                         'is an AttentionWrapper')
    return _mean([attention_probs_from_attn_state(s) for s in states])


def attention_probs_from_attn_state(attention_state):
    """An `AttentionWrapperState`'s alignments, averaged over its mechanisms."""
    alignments = attention_state.alignments
    return _mean(list(alignments) if isinstance(alignments, tuple) else [alignments])


def _mean(tensors):
    if len(tensors) == 1:
        return tensors[0]
    return tf.reduce_mean(tf.stack(tensors, axis=-1), -1)
