"""Horovod's `DistributedOptimizer`, variable broadcasts and `BroadcastGlobalVariablesHook`
for TF1 optimizers (`tf.train.Optimizer`), as Horovod 0.16-0.28 gave them.

`DistributedOptimizer(opt)` wraps `compute_gradients`: every gradient is reduced over the
ranks (`op`, by default `Average`; an IndexedSlices gradient gathered unless
`sparse_as_dense`) before `apply_gradients` applies it with `opt`. With
`backward_passes_per_step` k > 1, gradients add up in local variables for k steps and are
reduced and applied on the k-th (the global step still counts every step). With `op=Adasum`,
each rank applies its own update and the updates (the variables' change since the last
reduction, in the slot 'delta_start') are combined by Adasum, as Horovod's
`_DistributedAdasumOptimizer` did. A Keras optimizer goes to
`towers.legacy.horovod.keras.DistributedOptimizer`.
"""
from towers.compat import tf
from towers.legacy.horovod import collectives, fusion, ranks
from towers.legacy.horovod.collectives import Adasum, Average, Compression


def broadcast_variables(variables, root_rank, process_set=None):
    """An op that sets every variable of `variables` to rank `root_rank`'s value."""
    return tf.group(*[variable.assign(collectives.broadcast(variable, root_rank))
                      for variable in variables])


def broadcast_global_variables(root_rank):
    """An op that sets every global variable to rank `root_rank`'s value."""
    return broadcast_variables(tf.global_variables(), root_rank)


class BroadcastGlobalVariablesHook(tf.train.SessionRunHook):
    """Sets every global variable to rank `root_rank`'s value once the session exists (after
    it initialised or restored them), so that every rank starts from the same weights."""

    def __init__(self, root_rank, device=''):
        super().__init__()
        self.root_rank = root_rank
        self.bcast_op = None
        self.device = device

    def begin(self):
        if not self.bcast_op or self.bcast_op.graph != tf.get_default_graph():
            with tf.device(self.device):
                self.bcast_op = broadcast_global_variables(self.root_rank)

    def after_create_session(self, session, coord):
        session.run(self.bcast_op)


def reduce_gradients(grads, variables, name, device_dense, device_sparse, compression,
                      sparse_as_dense, op, gradient_predivide_factor):
    """The gradients `grads` of `variables` (None kept as None) reduced over the ranks, as
    Horovod's `allreduce_grads` did; nothing is communicated in a job of one rank."""
    if op is Average:
        prescale, postscale = 1.0 / gradient_predivide_factor, gradient_predivide_factor
    else:
        prescale = postscale = 1.0
    if ranks.world().size == 1:
        return list(grads)
    with tf.name_scope(name + '_Allreduce'):
        grads = [tf.convert_to_tensor(grad) if grad is not None and sparse_as_dense
                 and isinstance(grad, tf.IndexedSlices) else grad for grad in grads]
        shown = ['the gradient of %r' % variable.op.name for variable in variables]
        return fusion.grouped_reduce(grads, shown, op, compression, prescale, postscale,
                                     device_dense, device_sparse)


class _DistributedOptimizer(tf.train.Optimizer):
    """A TF1 optimizer whose gradients are reduced over the ranks before they are applied."""

    def __init__(self, optimizer, name=None, use_locking=False, device_dense='',
                 device_sparse='', compression=Compression.none, sparse_as_dense=False,
                 op=Average, gradient_predivide_factor=1.0, backward_passes_per_step=1,
                 average_aggregated_gradients=False, scale_local_gradients=True):
        name = name or 'Distributed%s' % type(optimizer).__name__
        super().__init__(name=name, use_locking=use_locking)
        self._optimizer = optimizer
        self._reduce = lambda grads, variables: reduce_gradients(
            grads, variables, name, device_dense, device_sparse, compression, sparse_as_dense, op,
            gradient_predivide_factor)
        self._local_vars = []
        self._scale_local_gradients = scale_local_gradients
        self._aggregation = (LocalAggregation(backward_passes_per_step, sparse_as_dense,
                                               average_aggregated_gradients, name)
                             if backward_passes_per_step > 1 else None)

    def register_local_var(self, var):
        """Keeps `var`'s gradient this rank's own (divided by the size, as Horovod did)."""
        self._local_vars.append(var)

    def _reduce_shared(self, grads, variables):
        return reduce_shared(grads, variables, self._local_vars, self._scale_local_gradients,
                             self._reduce)

    def compute_gradients(self, *args, **kwargs):
        """The wrapped optimizer's (gradient, variable) pairs, the gradients reduced."""
        pairs = self._optimizer.compute_gradients(*args, **kwargs)
        grads, variables = zip(*pairs) if pairs else ((), ())
        if self._aggregation:
            reduced = self._aggregation.compute_gradients(list(grads), variables,
                                                          self._reduce_shared)
        else:
            reduced = self._reduce_shared(list(grads), variables)
        return list(zip(reduced, variables))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The wrapped optimizer's `apply_gradients` (every k-th step only, with
        `backward_passes_per_step` k)."""
        def apply():
            return self._optimizer.apply_gradients(grads_and_vars, global_step=global_step,
                                                   name=name)
        if self._aggregation:
            return self._aggregation.apply_gradients(apply, grads_and_vars, global_step)
        return apply()

    def get_slot(self, *args, **kwargs):
        return self._optimizer.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._optimizer.get_slot_names(*args, **kwargs)

    def variables(self, *args, **kwargs):
        return self._optimizer.variables(*args, **kwargs)


def reduce_shared(grads, variables, local_vars, scale_local_gradients, reduce):
    """`grads` (None kept) of `variables` reduced by `reduce(grads, variables)`, except those
    of `local_vars` (registered with `register_local_var`): each rank keeps its own, divided by
    the size with `scale_local_gradients`, as Horovod did."""
    local = [any(var is own for own in local_vars) for var in variables]
    shared = [(grad, var) for grad, var, is_local in zip(grads, variables, local) if not is_local]
    reduced = iter(reduce([grad for grad, _ in shared], [var for _, var in shared]))
    size = ranks.world().size
    result = []
    for grad, is_local in zip(grads, local):
        if not is_local:
            result.append(next(reduced))
        elif grad is not None and scale_local_gradients:
            result.append(_scaled(grad, 1.0 / size))
        else:
            result.append(grad)
    return result


def _scaled(grad, factor):
    if isinstance(grad, tf.IndexedSlices):
        return tf.IndexedSlices(grad.values * factor, grad.indices, grad.dense_shape)
    return grad * factor


class LocalAggregation:
    """Gradients summed locally over `passes` steps, reduced and applied on the last.

    The sums live in local variables (not saved) under 'aggregation_variables_<name><rank>',
    with a counter; as Horovod's `LocalGradientAggregationHelper`, they are divided by
    `passes` only with `average`, and steps between reductions still advance the global step.
    """

    def __init__(self, passes, sparse_as_dense, average, name):
        self.passes, self.sparse_as_dense, self.average, self.name = (
            passes, sparse_as_dense, average, name)
        self.counter = None

    def _dense(self, grad):
        if isinstance(grad, tf.IndexedSlices):
            if not self.sparse_as_dense:
                raise ValueError('IndexedSlices are not supported when '
                                 '`backward_passes_per_step` > 1 and `sparse_as_dense` is False.')
            return tf.convert_to_tensor(grad)
        return grad

    def compute_gradients(self, grads, variables, reduce):
        """`grads` summed locally, and on the `passes`-th step `reduce(sums, their variables)`
        of the sums (as a list, None where `grads` has None)."""
        present = [index for index, grad in enumerate(grads) if grad is not None]
        dense = [self._dense(grads[index]) for index in present]
        scope = 'aggregation_variables_%s%d' % (self.name, ranks.world().rank)
        with tf.variable_scope(scope, reuse=tf.AUTO_REUSE):
            self.counter = tf.get_variable(
                'aggregation_counter', shape=(), dtype=tf.int32, trainable=False,
                initializer=tf.zeros_initializer(), collections=[tf.GraphKeys.LOCAL_VARIABLES])
            sums = [tf.get_variable(str(index), initializer=tf.zeros(grad.shape, grad.dtype),
                                    trainable=False,
                                    collections=[tf.GraphKeys.LOCAL_VARIABLES])
                    for index, grad in zip(present, dense)]
        clear = tf.cond(tf.equal(self.counter, 0),
                        lambda: tf.group(*[s.assign(tf.zeros_like(s)) for s in sums]),
                        tf.no_op)
        with tf.control_dependencies([clear]):
            added = tf.group(*[s.assign_add(grad) for s, grad in zip(sums, dense)])
        with tf.control_dependencies([added]):
            counted = self.counter.assign_add(1)
        with tf.control_dependencies([counted]):
            def reduced():
                values = [s.read_value() for s in sums]
                with tf.control_dependencies(values):
                    results = reduce(values, [variables[index] for index in present])
                with tf.control_dependencies([r for r in results if r is not None]):
                    reset = self.counter.assign(0, use_locking=True)
                with tf.control_dependencies([reset]):
                    divisor = self.passes if self.average else 1
                    return [tf.divide(r, divisor) for r in results]
            chosen = tf.cond(tf.equal(self.counter, self.passes), reduced,
                             lambda: [tf.identity(g) for g in dense])
        chosen = chosen if isinstance(chosen, (list, tuple)) else [chosen]
        result = [None] * len(grads)
        for index, value in zip(present, chosen):
            result[index] = value
        return result

    def apply_gradients(self, apply, grads_and_vars, global_step):
        inputs = [t for pair in grads_and_vars for t in pair if t is not None]
        with tf.control_dependencies([tf.group(*inputs)]):
            train_op = tf.cond(tf.equal(self.counter, 0), lambda: tf.group(apply()), tf.no_op)

        def count_step():
            if global_step is None:
                return tf.no_op()
            return tf.group(global_step.assign_add(tf.constant(1, global_step.dtype.base_dtype),
                                                   use_locking=True))
        with tf.control_dependencies([train_op]):
            return tf.cond(tf.equal(self.counter, 0), tf.no_op, count_step)


class _DistributedAdasumOptimizer(tf.train.Optimizer):
    """Each rank applies its own update; every `backward_passes_per_step`-th step the
    variables' change since the last combination is combined over the ranks with Adasum."""

    def __init__(self, optimizer, name=None, use_locking=False, device_dense='',
                 device_sparse='', compression=Compression.none, backward_passes_per_step=1):
        super().__init__(name=name or 'DistributedDelta%s' % type(optimizer).__name__,
                         use_locking=use_locking)
        self._optimizer = optimizer
        self._device_dense, self._compression = device_dense, compression
        self._passes = backward_passes_per_step

    def _prepare(self):
        self._optimizer._prepare()
        self._step_count = tf.get_variable('step_count', shape=[], dtype=tf.int64,
                                           trainable=False, initializer=tf.zeros_initializer())
        self._is_first_step = tf.equal(self._step_count, 0)
        self._is_comm_step = tf.equal(self._step_count % self._passes, self._passes - 1)

    def _create_slots(self, var_list):
        self._optimizer._create_slots(var_list)

    def _apply_shared(self, var, update):
        start = self._get_or_make_slot(var, var.initialized_value(), 'delta_start', self._name)
        first = tf.cond(self._is_first_step,
                        lambda: tf.group(start.assign(var, use_locking=self._use_locking)),
                        tf.no_op)
        with tf.control_dependencies([first]):
            applied = update()
        with tf.control_dependencies([applied]):
            def combine():
                delta = var.assign_sub(start, use_locking=self._use_locking)
                combined = collectives.reduce(
                    delta, 'the change of %r' % var.op.name, device_dense=self._device_dense,
                    compression=self._compression, op=Adasum)
                new_start = start.assign_add(combined, use_locking=self._use_locking)
                return tf.group(var.assign(new_start, use_locking=self._use_locking))
            return tf.cond(self._is_comm_step, combine, tf.no_op)

    def _apply_dense(self, grad, var):
        return self._apply_shared(var, lambda: self._optimizer._apply_dense(grad, var))

    def _resource_apply_dense(self, grad, handle):
        return self._apply_shared(handle, lambda: self._optimizer._resource_apply_dense(
            grad, handle))

    # The wrapped optimizer's sparse updates as it makes them, duplicates and all: some
    # (gradient descent) implement only these.
    def _apply_sparse_duplicate_indices(self, grad, var):
        return self._apply_shared(var, lambda: self._optimizer._apply_sparse_duplicate_indices(
            grad, var))

    def _resource_apply_sparse_duplicate_indices(self, grad, handle, indices, **kwargs):
        return self._apply_shared(
            handle, lambda: self._optimizer._resource_apply_sparse_duplicate_indices(
                grad, handle, indices, **kwargs))

    def _finish(self, update_ops, name_scope):
        with tf.control_dependencies([self._optimizer._finish(update_ops, name_scope)]):
            return tf.assign_add(self._step_count, 1)

    def compute_gradients(self, *args, **kwargs):
        return self._optimizer.compute_gradients(*args, **kwargs)

    def get_slot(self, var, name):
        own = super().get_slot(var, name)
        return own if own is not None else self._optimizer.get_slot(var, name)

    def get_slot_names(self):
        return super().get_slot_names() + self._optimizer.get_slot_names()

    def variables(self, *args, **kwargs):
        return self._optimizer.variables(*args, **kwargs)


def DistributedOptimizer(optimizer, name=None, use_locking=False, device_dense='',
                         device_sparse='', compression=Compression.none,
                         sparse_as_dense=False, backward_passes_per_step=1, op=Average,
                         gradient_predivide_factor=1.0, average_aggregated_gradients=False,
                         num_groups=0, groups=None, process_set=None,
                         scale_local_gradients=True):
    """Horovod's `hvd.DistributedOptimizer` for a TF1 (or Keras) optimizer."""
    if gradient_predivide_factor != 1.0 and op is not Average:
        raise ValueError('gradient_predivide_factor not supported with op != Average')
    if op is Adasum and average_aggregated_gradients:
        raise ValueError('Adasum does not support average_aggregated_gradients == True')
    if not isinstance(optimizer, tf.train.Optimizer):
        from towers.legacy.horovod import keras
        return keras.DistributedOptimizer(
            optimizer, name=name, device_dense=device_dense, device_sparse=device_sparse,
            compression=compression, sparse_as_dense=sparse_as_dense,
            gradient_predivide_factor=gradient_predivide_factor, op=op,
            backward_passes_per_step=backward_passes_per_step,
            average_aggregated_gradients=average_aggregated_gradients,
            scale_local_gradients=scale_local_gradients)
    if op is Adasum:
        return _DistributedAdasumOptimizer(optimizer, name, use_locking, device_dense,
                                           device_sparse, compression, backward_passes_per_step)
    return _DistributedOptimizer(optimizer, name, use_locking, device_dense, device_sparse,
                                 compression, sparse_as_dense, op, gradient_predivide_factor,
                                 backward_passes_per_step, average_aggregated_gradients,
                                 scale_local_gradients)
