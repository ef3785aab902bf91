"""TF 1.15's optimizer wrappers in `tf.contrib.opt`: `MovingAverageOptimizer`,
`VariableClippingOptimizer`, `DropStaleGradientOptimizer`, `MultitaskOptimizerWrapper` and
`clip_gradients_by_global_norm`.

Each delegates gradients and their application to the optimizer it wraps (whose slots it
reports) and adds one thing around them.
"""
import contextlib
import logging

from towers.compat import internal, tf

log = logging.getLogger(__name__)
# TensorFlow's own grouping of a Saver's variables by checkpoint name (partitioned variables
# as lists of their slices), which the swapping saver has to agree with.
_saveable_object_util = internal('training.saving.saveable_object_util')
_PartitionedVariable = internal('ops.variables').PartitionedVariable


class _Delegating(tf.train.Optimizer):
    """An optimizer whose gradients and slots are those of `opt`."""

    def __init__(self, opt, use_locking, name):
        super().__init__(use_locking, name)
        self._opt = opt

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def compute_gradients(self, *args, **kwargs):
        return self._opt.compute_gradients(*args, **kwargs)


class MovingAverageOptimizer(_Delegating):
    """Wraps `opt`: each `apply_gradients` (or `minimize`) also updates a
    `tf.train.ExponentialMovingAverage` of the variables that got gradients (variables
    `<var>/ExponentialMovingAverage`). Its slots are `opt`'s.

    Args:
      opt: the `tf.train.Optimizer` that computes and applies the gradients.
      average_decay: the decay of the averages.
      num_updates: the step count the averages' decay ramps up with, or None.
      sequential_update: whether the averages update after the variables (else alongside).
    """

    def __init__(self, opt, average_decay=0.9999, num_updates=None, sequential_update=True):
        super().__init__(opt, use_locking=False, name='MovingAverageOptimizer')
        self._ema = tf.train.ExponentialMovingAverage(average_decay, num_updates=num_updates)
        self._sequential_update = sequential_update
        # Each trained variable's name -> its average's name, and back; None until applied.
        self._swapped_names = None

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """`opt`'s update, then (or with `sequential_update=False`, alongside) the averages'.

        Returns:
          The op `train_with_avg` grouping both.
        """
        train_op = self._opt.apply_gradients(grads_and_vars, global_step=global_step,
                                             name=name)
        # As in TF 1.15, a one-shot iterator of pairs is spent by `opt`: nothing is averaged.
        var_list = [var for grad, var in grads_and_vars if grad is not None]
        with tf.control_dependencies([train_op] if self._sequential_update else []):
            average_op = self._ema.apply(var_list)
        self._swapped_names = {}
        for var in var_list:
            average_name = self._ema.average(var).op.name
            self._swapped_names[var.op.name] = average_name
            self._swapped_names[average_name] = var.op.name
        return tf.group(train_op, average_op, name='train_with_avg')

    def swapping_saver(self, var_list=None, name='swapping_saver', **kwargs):
        """A `tf.train.Saver` that saves each trained variable's average under the variable's
        name (and the variable under its average's), for training loops whose checkpoints
        should hold the averaged model. Restore for evaluation with a plain saver.

        Args:
          var_list: the variables to save (a list or a name -> variable dict, as `Saver`'s),
            all global variables when None; each trained variable needs its average in it.
          name: the saver's name.
          **kwargs: more arguments of `tf.train.Saver`.

        Raises:
          RuntimeError: called before `apply_gradients` or `minimize`.
          ValueError: `var_list` has a trained variable without its average, or the reverse.
        """
        if self._swapped_names is None:
            raise RuntimeError('Must call apply_gradients or minimize before creating the '
                               'swapping_saver')
        if var_list is None:
            var_list = tf.global_variables()
        if not isinstance(var_list, dict):
            var_list = _saveable_object_util.op_list_to_dict(var_list)
        by_name = {}
        for key, saved in var_list.items():
            if isinstance(saved, (list, _PartitionedVariable)):
                by_name.update((part.op.name, part) for part in saved)
            else:
                by_name[key] = saved

        def swapped(name, saved):
            other = self._swapped_names.get(name)
            if other is None:
                return saved
            if other not in by_name:
                raise ValueError('Variable to swap %s is not part of variables to save. This '
                                 'breaks MovingAverageOptimizer.' % other)
            return by_name[other]

        swapped_list = {
            key: ([swapped(part.op.name, part) for part in saved] if isinstance(saved, list)
                  else swapped(key, saved))
            for key, saved in var_list.items()}
        return tf.train.Saver(swapped_list, name=name, **kwargs)


class VariableClippingOptimizer(_Delegating):
    """Applies `opt`'s update, then clips chosen variables to an L2 norm along chosen
    dimensions (`tf.clip_by_norm`); sparse gradients clip only their rows unless dimension 0
    is among the dimensions.

    Args:
      opt: the `tf.train.Optimizer` that computes and applies the gradients.
      vars_to_clip_dims: a dict variable -> the list of dimensions to take the norm over.
      max_norm: the largest norm left.
      use_locking: whether the clipping locks the variables.
      colocate_clip_ops_with_vars: whether the norm's ops go on the variable's device.
      name: the name scope of the ops, "VariableClipping".
    """

    def __init__(self, opt, vars_to_clip_dims, max_norm, use_locking=False,
                 colocate_clip_ops_with_vars=False, name='VariableClipping'):
        super().__init__(opt, use_locking, name)
        self._dims = {var.ref(): list(dims) for var, dims in vars_to_clip_dims.items()}
        self._max_norm = max_norm
        self._colocate_clip_ops_with_vars = colocate_clip_ops_with_vars

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        with tf.name_scope(name, self._name) as name:
            update_op = self._opt.apply_gradients(grads_and_vars, global_step=global_step)
            clips = []
            with tf.control_dependencies([update_op]):
                # As in TF 1.15, a one-shot iterator of pairs is spent by `opt`: no clipping.
                for grad, var in grads_and_vars:
                    if grad is None or var.ref() not in self._dims:
                        continue
                    with tf.name_scope('clip_' + var.op.name):
                        if isinstance(grad, tf.IndexedSlices):
                            clips.append(self._clip_rows(grad, var))
                        else:
                            clips.append(self._clip_dense(var))
            return tf.group(*([update_op] + clips), name=name)

    def _placed(self, var):
        """The variable's device for the norm's ops when asked, else the default."""
        if self._colocate_clip_ops_with_vars:
            return tf.colocate_with(var)
        return contextlib.nullcontext()

    def _clip_dense(self, var):
        with self._placed(var):
            value = var.read_value()
            excess = value - tf.clip_by_norm(value, self._max_norm, self._dims[var.ref()])
        with tf.colocate_with(var):
            return var.assign_sub(excess, use_locking=self._use_locking)

    def _clip_rows(self, grad, var):
        dims = self._dims[var.ref()]
        if 0 in dims:
            log.warning('Clipping norm across dims %s for %s is inefficient when including '
                        'sparse dimension 0.', dims, var.op.name)
            return self._clip_dense(var)
        with tf.colocate_with(var):
            rows = tf.gather(var, grad.indices)
        with self._placed(var):
            excess = tf.IndexedSlices(rows - tf.clip_by_norm(rows, self._max_norm, dims),
                                      grad.indices, grad.dense_shape)
        with tf.colocate_with(var):
            return var.scatter_sub(excess, use_locking=self._use_locking)


class DropStaleGradientOptimizer(_Delegating):
    """Drops the gradients of a step when the global step moved more than `staleness` since
    they were computed (asynchronous training), counting the dropped steps in the variable
    `stale_counter` and summarizing their share as "Gradient staleness percentage".

    `compute_gradients` records the global step (which must exist); `apply_gradients` needs
    `global_step` and returns the counter's increment (0 applied, 1 dropped).

    Args:
      opt: the `tf.train.Optimizer` that computes and applies the gradients.
      staleness: the largest number of global steps allowed in between.
      use_locking: kept for `tf.train.Optimizer`.
      name: the name of the optimizer, "DropStaleGradient".
    """

    def __init__(self, opt, staleness, use_locking=False, name='DropStaleGradient'):
        super().__init__(opt, use_locking, name)
        self._staleness = staleness
        self._local_step = None

    def compute_gradients(self, loss, *args, **kwargs):
        with tf.colocate_with(loss):
            self._local_step = tf.train.get_global_step() + 0
        with tf.control_dependencies([self._local_step]):
            return self._opt.compute_gradients(tf.identity(loss), *args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        with tf.colocate_with(global_step):
            stale_counter = tf.get_variable('stale_counter', [],
                                            initializer=tf.zeros_initializer(),
                                            trainable=False)

        def accept():
            with tf.control_dependencies([self._opt.apply_gradients(
                    grads_and_vars, global_step=global_step, name=name)]):
                return tf.identity(0.0)

        gradients = [grad if isinstance(grad, tf.Tensor) else grad.op
                     for grad, _ in grads_and_vars if grad is not None]
        with tf.control_dependencies(gradients), tf.colocate_with(global_step):
            staleness = tf.reshape(global_step - self._local_step, shape=())
        counted = stale_counter.assign_add(tf.cond(staleness <= self._staleness, accept,
                                                   lambda: tf.identity(1.0)))
        tf.summary.scalar('Gradient staleness percentage',
                          stale_counter / tf.cast(global_step + 1, tf.float32))
        return counted


def _all_zeros(grad):
    return tf.equal(tf.count_nonzero(grad), 0)


class MultitaskOptimizerWrapper(object):
    """Makes `opt` skip the update of a variable whose gradient is all zeros (a task absent
    from the batch), leaving its slots alone. `opt` itself is changed; every other attribute
    is `opt`'s. Clip such gradients with `clip_gradients_by_global_norm`.

    Args:
      opt: a `tf.train.Optimizer`.

    Raises:
      TypeError: `opt` is not a `tf.train.Optimizer`.
    """

    def __init__(self, opt):
        if not isinstance(opt, tf.train.Optimizer):
            raise TypeError('Supplied optimizer must be an instance of tf.train.Optimizer')
        self._opt = opt
        for method in ('_apply_dense', '_resource_apply_dense', '_apply_sparse',
                       '_resource_apply_sparse'):
            setattr(opt, method, _unless_all_zeros(getattr(opt, method)))

    def __getattr__(self, name):
        return getattr(self._opt, name)


def _unless_all_zeros(update):
    """`update(grad, ...)` run only when `grad` has a nonzero entry; returns an op."""
    def guarded(grad, *args, **kwargs):
        def run():
            with tf.control_dependencies([update(grad, *args, **kwargs)]):
                return tf.no_op()
        return tf.cond(_all_zeros(grad), tf.no_op, run)
    return guarded


def clip_gradients_by_global_norm(gradients_variables, clip_norm=20.):
    """`tf.clip_by_global_norm` of (gradient, variable) pairs, where all-zero gradients count 0
    in the global norm (see `MultitaskOptimizerWrapper`).

    Args:
      gradients_variables: a list of (gradient or None, variable) pairs.
      clip_norm: the global norm to clip to.

    Returns:
      (the list of (clipped gradient, variable) pairs, the scalar global norm).
    """
    gradients, variables = zip(*gradients_variables)

    def counted(grad):
        if grad is None:
            return None
        return tf.cond(_all_zeros(grad), lambda: tf.zeros([], grad.dtype), lambda: grad)

    norm = tf.global_norm([counted(grad) for grad in gradients])
    clipped, _ = tf.clip_by_global_norm(gradients, clip_norm, use_norm=norm)
    return list(zip(clipped, variables)), norm
