"""Backtracking through a beam search's parent pointers: TF 1.x's `GatherTree` kernel (which
TensorFlow 2 no longer ships) as graph ops, and the reordering of per-step tensors it drives.
"""
from towers.compat import tf


def _trace_back(step_ids, parent_ids, lengths, end_token):
    """Follows each final beam back to step 0; `end_token` at and past each batch's length."""
    beam_width = tf.shape(step_ids)[2]
    final_beams = tf.broadcast_to(tf.range(beam_width), tf.shape(step_ids)[1:])

    def back_one_step(carry, per_step):
        beams, _ = carry
        steps, parents, level = per_step
        live = tf.broadcast_to(level < lengths[:, None], tf.shape(beams))
        valid = tf.reduce_all(tf.logical_or(
            tf.logical_not(live), tf.logical_and(beams >= 0, beams < beam_width)))
        check = tf.Assert(valid, ['GatherTree: saw an invalid parent id at step', level,
                                  '(parent ids must lie in [0, beam_width)); parents:', beams],
                          summarize=100)
        with tf.control_dependencies([check]):
            safe = tf.where(live, beams, final_beams)
            token = tf.where(live, tf.gather(steps, safe, batch_dims=1),
                             tf.fill(tf.shape(beams), end_token))
            beams = tf.where(live, tf.gather(parents, safe, batch_dims=1), beams)
        return beams, token

    levels = tf.range(tf.shape(step_ids)[0])
    _, tokens = tf.scan(back_one_step, (step_ids, parent_ids, levels),
                        initializer=(final_beams, final_beams), reverse=True)
    return tokens


def gather_tree(step_ids, parent_ids, max_sequence_lengths, end_token, name=None):
    """The full sequences of the beams a beam search ended with, as TF 1.x's `GatherTree` op.

    Each final beam is followed back through `parent_ids` from step
    `min(max_sequence_lengths[b], max_time) - 1` to step 0; steps past that length, and steps
    after the first `end_token` of a sequence, are `end_token`.

    Args:
      step_ids: int32 `[max_time, batch_size, beam_width]`, the token chosen at each step.
      parent_ids: int32, the same shape: the beam each step's token continued.
      max_sequence_lengths: int32 `[batch_size]`, the steps to trace back per batch entry.
      end_token: int32 scalar.
      name: the name scope.

    Returns:
      int32 `[max_time, batch_size, beam_width]`: each step's token on each beam's path.

    Raises:
      ValueError: arguments of the wrong rank.
      InvalidArgumentError (when run): a parent id on a traced path outside [0, beam_width).
    """
    with tf.name_scope(name, 'GatherTree',
                       [step_ids, parent_ids, max_sequence_lengths, end_token]):
        step_ids = tf.convert_to_tensor(step_ids, tf.int32, name='step_ids')
        parent_ids = tf.convert_to_tensor(parent_ids, tf.int32, name='parent_ids')
        lengths = tf.convert_to_tensor(max_sequence_lengths, tf.int32,
                                       name='max_sequence_lengths')
        end_token = tf.convert_to_tensor(end_token, tf.int32, name='end_token')
        for tensor, rank in ((step_ids, 3), (parent_ids, 3), (lengths, 1), (end_token, 0)):
            if not tensor.shape.is_compatible_with(tf.TensorShape([None] * rank)):
                raise ValueError('gather_tree: %s must have rank %d, saw shape %s'
                                 % (tensor.name, rank, tensor.shape))
        shape = step_ids.shape.merge_with(parent_ids.shape)
        lengths = tf.minimum(lengths, tf.shape(step_ids)[0])
        tokens = _trace_back(step_ids, parent_ids, lengths, end_token)
        # A path may go on after an end token (beams fed in by hand): cut it there.
        ended = tf.cumsum(tf.cast(tf.equal(tokens, end_token), tf.int32), axis=0,
                          exclusive=True) > 0
        beams = tf.where(ended, tf.fill(tf.shape(tokens), end_token), tokens)
        beams.set_shape(shape)
        return beams


def gather_tree_from_array(t, parent_ids, sequence_length):
    """Reorders a stacked per-step tensor along the beams' paths, as `gather_tree` the ids.

    Args:
      t: `[max_time, batch_size, beam_width, ...]` or `[max_time, batch_size * beam_width,
        ...]`, one entry per beam and step (a stacked `TensorArray`).
      parent_ids: int32 `[max_time, batch_size, beam_width]`.
      sequence_length: `[batch_size, beam_width]`, each beam's length; a beam's entries past
        it stay where they are.

    Returns:
      A tensor of `t`'s shape and type whose entries at each step follow the final beams.
    """
    parent_ids = tf.convert_to_tensor(parent_ids)
    max_time, batch_size, beam_width = tf.unstack(tf.shape(parent_ids))
    beam_ids = tf.broadcast_to(tf.range(beam_width), tf.shape(parent_ids))
    sorted_beam_ids = gather_tree(
        beam_ids, parent_ids,
        max_sequence_lengths=tf.cast(tf.reduce_max(sequence_length, axis=1), tf.int32),
        end_token=beam_width + 1)
    in_bounds = tf.transpose(tf.sequence_mask(sequence_length, maxlen=max_time), [2, 0, 1])
    sorted_beam_ids = tf.where(in_bounds, sorted_beam_ids, beam_ids)
    per_beam = tf.reshape(t, tf.stack([max_time, batch_size, beam_width, -1]))
    ordered = tf.gather(per_beam, sorted_beam_ids, batch_dims=2)
    return tf.reshape(ordered, tf.shape(t))
