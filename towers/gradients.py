"""Averaging the gradients of several towers into one update."""
import logging

from towers.compat import tf
from towers.errors import TowersError

log = logging.getLogger(__name__)


def average_gradients(tower_grads):
    """Averages each shared variable's gradient over all towers.

    This is the synchronisation point of in-graph replication. Unlike the tutorial's version it
    skips variables that no tower has a gradient for (logging their names), refuses a gradient
    that only some towers have, and keeps sparse gradients sparse.

    Args:
      tower_grads: one list per tower of `(gradient, variable)` pairs, as returned by
        `Optimizer.compute_gradients`; every tower lists the same variables in the same order.
        A gradient is a `Tensor` of the variable's shape, a `tf.IndexedSlices`, or None.

    Returns:
      One list of `(mean gradient, variable)` pairs in the towers' order, without the variables
      whose gradient is None in every tower. Dense means have the variable's shape; the mean of
      `IndexedSlices` is an `IndexedSlices` holding every tower's rows, each scaled by 1/N
      (repeated indices add up when applied, as they do for a single tower).

    Raises:
      TowersError: the towers list different variables, or a variable has a gradient in some
        towers and None in others.
    """
    return [(_mean(grads), var) for grads, var in gradients_per_variable(tower_grads)]


def gradients_per_variable(tower_grads):
    """Each variable's gradients in every tower, checked as `average_gradients` checks them.

    Args:
      tower_grads: as for `average_gradients`.

    Returns:
      A list of (gradients, variable) in the towers' order: `gradients` holds the variable's
      gradient in each tower, none of them None; variables without a gradient in any tower
      are left out (logged by name).

    Raises:
      TowersError: as `average_gradients`.
    """
    if not tower_grads:
        raise TowersError('average_gradients needs the gradients of at least one tower')
    num_towers = len(tower_grads)
    if any(len(g) != len(tower_grads[0]) for g in tower_grads):
        raise TowersError('towers returned different numbers of gradients: %s'
                          % [len(g) for g in tower_grads])
    per_variable = []
    for grad_and_vars in zip(*tower_grads):
        variables = [v for _, v in grad_and_vars]
        var = variables[0]
        if any(v is not var for v in variables):
            raise TowersError(
                'towers list different variables at the same position: %s; every tower must '
                'compute gradients for the same variables in the same order'
                % ', '.join(sorted({v.op.name for v in variables})))
        grads = [g for g, _ in grad_and_vars]
        missing = [i for i, g in enumerate(grads) if g is None]
        if len(missing) == num_towers:
            log.info('no gradient for %s in any tower: it is left out of the update', var.op.name)
            continue
        if missing:
            raise TowersError(
                'the gradient of %s is None in tower(s) %s but not in the others: every tower '
                'must build the same model' % (var.op.name, ', '.join(map(str, missing))))
        per_variable.append((grads, var))
    return per_variable


def _mean(grads):
    if len(grads) == 1:
        return grads[0]
    if any(isinstance(g, tf.IndexedSlices) for g in grads):
        return _mean_of_slices([_as_slices(g) for g in grads])
    stacked = tf.concat([tf.expand_dims(g, 0) for g in grads], axis=0)
    return tf.reduce_mean(stacked, 0)


def _as_slices(grad):
    if isinstance(grad, tf.IndexedSlices):
        return grad
    # A dense gradient beside sparse ones: all of its rows take part.
    rows = tf.shape(grad, out_type=tf.int64)[0]
    return tf.IndexedSlices(grad, tf.range(rows), tf.shape(grad, out_type=tf.int64))


def _mean_of_slices(slices):
    scale = 1.0 / len(slices)
    values = tf.concat([s.values for s in slices], axis=0) * scale
    indices = tf.concat([tf.cast(s.indices, tf.int64) for s in slices], axis=0)
    dense_shape = next((s.dense_shape for s in slices if s.dense_shape is not None), None)
    return tf.IndexedSlices(values, indices, dense_shape)
