"""`tf.contrib.seq2seq.sequence_loss` of TF 1.15: weighted cross-entropy over a batch of
sequences, averaged or summed over time and batch."""
from towers.compat import tf


def sequence_loss(logits, targets, weights, average_across_timesteps=True,
                  average_across_batch=True, sum_over_timesteps=False, sum_over_batch=False,
                  softmax_loss_function=None, name=None):
    """The cross-entropy of each target, times its weight, reduced over time and batch.

    An average divides a sum by the sum of the weights; a "sum over" divides it by the number
    of nonzero weights. When both dimensions are reduced, both reductions must be averages
    or both sums; otherwise the averaging option of a dimension wins, and a sum option of the
    other dimension is ignored (as in TF 1.15).

    Args:
      logits: a float tensor [batch, time, classes].
      targets: an int tensor [batch, time].
      weights: a float tensor [batch, time] (a mask of the real steps, usually).
      average_across_timesteps: reduce over time by a weighted average.
      average_across_batch: reduce over the batch by a weighted average.
      sum_over_timesteps: reduce over time by a sum divided by the nonzero weights' count.
      sum_over_batch: reduce over the batch likewise.
      softmax_loss_function: a function (labels=[n], logits=[n, classes]) -> [n] losses
        used instead of the sparse softmax cross-entropy.
      name: the name scope (default 'sequence_loss').

    Returns:
      A float tensor: a scalar when both dimensions are reduced, [batch] or [time] when one
      is, [batch, time] when none is.

    Raises:
      ValueError: a tensor of the wrong rank, or an average and a sum asked of one dimension.
    """
    for tensor, what, rank in ((logits, 'Logits', 3), (targets, 'Targets', 2),
                               (weights, 'Weights', 2)):
        if len(tensor.shape) != rank:
            raise ValueError('sequence_loss: %s must be a [batch_size x sequence_length%s] '
                             'tensor, got shape %s' % (what, ' x logits' if rank == 3 else '',
                                                       tensor.shape))
    for dimension, average, total in (('timesteps', average_across_timesteps,
                                       sum_over_timesteps),
                                      ('batch', average_across_batch, sum_over_batch)):
        if average and total:
            raise ValueError('sequence_loss: average_across_%s and sum_over_%s cannot both be '
                             'True' % (dimension, dimension))
    with tf.name_scope(name, 'sequence_loss', [logits, targets, weights]):
        classes = tf.shape(logits)[2]
        flat_logits = tf.reshape(logits, [-1, classes])
        flat_targets = tf.reshape(targets, [-1])
        if softmax_loss_function is None:
            losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=flat_targets,
                                                                    logits=flat_logits)
        else:
            losses = softmax_loss_function(labels=flat_targets, logits=flat_logits)
        losses *= tf.reshape(weights, [-1])
        if average_across_timesteps and average_across_batch:
            return tf.div_no_nan(tf.reduce_sum(losses), tf.reduce_sum(weights))
        if sum_over_timesteps and sum_over_batch:
            return tf.div_no_nan(tf.reduce_sum(losses),
                                 tf.cast(tf.count_nonzero(weights), losses.dtype))
        losses = tf.reshape(losses, tf.shape(logits)[0:2])
        if average_across_timesteps or average_across_batch:
            axis = [0] if average_across_batch else [1]
            return tf.div_no_nan(tf.reduce_sum(losses, axis=axis),
                                 tf.reduce_sum(weights, axis=axis))
        if sum_over_timesteps or sum_over_batch:
            axis = [0] if sum_over_batch else [1]
            return tf.div_no_nan(tf.reduce_sum(losses, axis=axis),
                                 tf.cast(tf.count_nonzero(weights, axis=axis), losses.dtype))
        return losses
