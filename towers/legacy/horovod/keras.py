"""`horovod.tensorflow.keras` for tf.keras programs in TF1 graph mode, as Horovod 0.16-0.28 gave
it: `DistributedOptimizer`, collectives evaluated in the Keras session, `load_model`, and the
`callbacks` (`towers.legacy.horovod.callbacks`).

`DistributedOptimizer(opt)` is an optimizer of a class named as `opt`'s (a subclass of it),
made from `opt`'s config, so a model saved with it reloads with or without Horovod. Graph-mode
`model.fit` trains through the optimizer's `get_updates`, which takes its gradients from
`get_gradients`; the class overrides that (and `_compute_gradients`, which `minimize` uses) to
reduce every gradient over the ranks before `apply_gradients` applies it, as Horovod's did.
"""
import functools
import warnings

from towers.compat import keras, tf
from towers.legacy.horovod import callbacks, collectives
from towers.legacy.horovod import optimizer as tf1_optimizer
from towers.legacy.horovod.collectives import Average, Compression, Sum


class _Distributed:
    """What `DistributedOptimizer` adds to a tf.keras optimizer class: its gradients reduced
    over the ranks (`_reduce`), or summed locally over `backward_passes_per_step` steps first.
    """

    def _configure_horovod(self, name, reduce, scale_local_gradients, aggregation):
        self._name = name
        self._horovod_reduce = reduce
        self._horovod_local_vars = []
        self._horovod_scale_local_gradients = scale_local_gradients
        self._horovod_aggregation = aggregation

    def register_local_var(self, var):
        """Keeps `var`'s gradient this rank's own (divided by the size unless the optimizer was
        made with `scale_local_gradients=False`), as Horovod did."""
        self._horovod_local_vars.append(var)

    def get_gradients(self, loss, params):
        """The gradients of `loss` for `params`, reduced over the ranks (what graph-mode
        `model.fit` applies)."""
        grads = super().get_gradients(loss, params)
        return self._allreduce(grads, tf.nest.flatten(params))

    def _compute_gradients(self, loss, var_list, grad_loss=None, tape=None):
        """`minimize`'s (gradient, variable) pairs, the gradients reduced over the ranks."""
        pairs = super()._compute_gradients(loss, var_list, grad_loss=grad_loss, tape=tape)
        grads, variables = zip(*pairs) if pairs else ((), ())
        return list(zip(self._allreduce(grads, variables), variables))

    def apply_gradients(self, grads_and_vars, name=None, experimental_aggregate_gradients=True):
        """The wrapped class's `apply_gradients`; with `backward_passes_per_step` k > 1, on
        every k-th step only, `iterations` still counting every step."""
        grads_and_vars = list(grads_and_vars)
        apply = functools.partial(super().apply_gradients, grads_and_vars, name,
                                  experimental_aggregate_gradients)
        if self._horovod_aggregation is None:
            return apply()
        # Made here rather than in the step that applies (a tf.cond), the optimizer's variables
        # keep the names they have without aggregation.
        with tf.name_scope(self._name), tf.init_scope():
            self._create_all_weights([var for grad, var in grads_and_vars if grad is not None])
        return self._horovod_aggregation.apply_gradients(apply, grads_and_vars, self.iterations)

    def _allreduce(self, grads, variables):
        if self._horovod_aggregation is None:
            return self._reduce(list(grads), variables)
        known = {id(var) for var in tf.local_variables()}
        reduced = self._horovod_aggregation.compute_gradients(list(grads), variables,
                                                              self._reduce)
        # The sums live outside the Keras model, so its session would not initialise them.
        made = [var for var in tf.local_variables() if id(var) not in known]
        if made:
            callbacks.run_in_keras_session(tf.variables_initializer(made))
        return reduced

    def _reduce(self, grads, variables):
        """`grads` (None kept) of `variables` reduced over the ranks, those of registered
        local variables left out of the reduction."""
        return tf1_optimizer.reduce_shared(grads, variables, self._horovod_local_vars,
                                           self._horovod_scale_local_gradients,
                                           self._horovod_reduce)


@functools.lru_cache(maxsize=None)
def _distributed_class(base):
    """`base` with `_Distributed`'s methods, under `base`'s own name: Keras saves an optimizer
    by its class's name, and a saved model must reload without Horovod."""
    return type(base.__name__, (_Distributed, base),
                {'__doc__': '%s whose gradients are reduced over the Horovod ranks.'
                            % base.__name__})


def DistributedOptimizer(optimizer, name=None, device_dense='', device_sparse='',
                         compression=Compression.none, sparse_as_dense=False,
                         gradient_predivide_factor=1.0, op=Average, backward_passes_per_step=1,
                         average_aggregated_gradients=False, num_groups=0, groups=None,
                         process_set=None, scale_local_gradients=True):
    """Horovod's `hvd.DistributedOptimizer` for a tf.keras optimizer.

    Args:
      optimizer: a tf.keras optimizer (`tf.keras.optimizers.*`, `tf.keras.optimizers.legacy.*`;
        one already distributed is made anew from its own class), or a `tf.train.Optimizer`,
        which `towers.legacy.horovod.optimizer.DistributedOptimizer` wraps.
      name: the optimizer's name, 'Distributed<class name>' by default; its gradients are
        reduced under the name scope '<name>_Allreduce'.
      device_dense, device_sparse: devices of the reductions of dense and of IndexedSlices
        gradients.
      compression: `Compression.none` or `Compression.fp16`.
      sparse_as_dense: reduce IndexedSlices gradients as dense tensors, not gathered.
      gradient_predivide_factor: with `Average`, gradients are multiplied by
        1 / gradient_predivide_factor before the sum and gradient_predivide_factor / size
        after it.
      op: `Average` or `Sum`.
      backward_passes_per_step: k: gradients are summed locally over k steps, then reduced
        and applied (divided by k with `average_aggregated_gradients`).
      average_aggregated_gradients: see `backward_passes_per_step`.
      num_groups, groups: Horovod's grouping of the reductions into fused ones, checked as
        Horovod checked them (`num_groups` deprecated for `groups`); here each gradient is
        reduced by itself, which gives the same numbers.
      process_set: accepted for the global set, the only one here.
      scale_local_gradients: divide the gradients of variables given to `register_local_var`
        by the size.

    Returns:
      An optimizer of a subclass of `optimizer`'s class, of the same name and config.

    Raises:
      ValueError: `op` is not `Average` or `Sum`; `groups` is neither a positive number nor a
        list.
      TypeError: `optimizer` is no optimizer of tf.keras or of `tf.train`.
    """
    if isinstance(optimizer, tf.train.Optimizer):
        return tf1_optimizer.DistributedOptimizer(
            optimizer, name=name, device_dense=device_dense, device_sparse=device_sparse,
            compression=compression, sparse_as_dense=sparse_as_dense,
            backward_passes_per_step=backward_passes_per_step, op=op,
            gradient_predivide_factor=gradient_predivide_factor,
            average_aggregated_gradients=average_aggregated_gradients, num_groups=num_groups,
            groups=groups, process_set=process_set,
            scale_local_gradients=scale_local_gradients)
    if not isinstance(optimizer, keras.optimizers.legacy.Optimizer):
        raise TypeError('hvd.DistributedOptimizer(%s): expected a tf.keras optimizer of graph '
                        'mode (tf.keras.optimizers.SGD, Adam, ...) or a tf.train.Optimizer'
                        % type(optimizer).__name__)
    if op is not Average and op is not Sum:
        raise ValueError('hvd.DistributedOptimizer(op=%r): a tf.keras optimizer reduces its '
                         'gradients with hvd.Average or hvd.Sum only' % (op,))
    if num_groups != 0:
        warnings.warn('Parameter `num_groups` has been replaced by `groups` and will be '
                      'removed in v0.23.0.', DeprecationWarning)
        groups = num_groups if groups is None else groups
    if groups is not None and not (isinstance(groups, list) or groups > 0):
        raise ValueError('hvd.DistributedOptimizer(groups=%r): expected a number > 0 or a list '
                         'of lists of variables' % (groups,))
    base = type(optimizer)
    if isinstance(optimizer, _Distributed):
        base = base.__bases__[1]
    distributed = _distributed_class(base).from_config(optimizer.get_config())
    name = name or 'Distributed' + base.__name__
    reduce = functools.partial(
        tf1_optimizer.reduce_gradients, name=name, device_dense=device_dense,
        device_sparse=device_sparse, compression=compression, sparse_as_dense=sparse_as_dense,
        op=op, gradient_predivide_factor=gradient_predivide_factor)
    aggregation = (tf1_optimizer.LocalAggregation(backward_passes_per_step, sparse_as_dense,
                                               average_aggregated_gradients, name)
                   if backward_passes_per_step > 1 else None)
    distributed._configure_horovod(name, reduce, scale_local_gradients, aggregation)
    return distributed


def broadcast_global_variables(root_rank):
    """Sets every global variable to rank `root_rank`'s value, in the Keras session."""
    return callbacks.run_in_keras_session(tf1_optimizer.broadcast_global_variables(root_rank))


def allreduce(value, name=None, average=None, prescale_factor=1.0, postscale_factor=1.0,
              op=None, compression=Compression.none):
    """`value` (a NumPy array or number, of one shape on every rank) reduced over the ranks
    (`op`, by default `Average`), as a NumPy value; `name` names its constant."""
    return callbacks.run_in_keras_session(collectives.allreduce(
        tf.constant(value, name=name), average=average, compression=compression, op=op,
        prescale_factor=prescale_factor, postscale_factor=postscale_factor))


def allgather(value, name=None):
    """Every rank's `value` concatenated along the first dimension, as a NumPy array."""
    return callbacks.run_in_keras_session(collectives.allgather(tf.constant(value, name=name)))


def broadcast(value, root_rank, name=None):
    """Rank `root_rank`'s `value`, on every rank, as a NumPy value."""
    return callbacks.run_in_keras_session(
        collectives.broadcast(tf.constant(value, name=name), root_rank))


def load_model(filepath, custom_optimizers=None, custom_objects=None,
               compression=Compression.none, legacy_opts=False):
    """A Keras model saved with its optimizer, the optimizer a `DistributedOptimizer`.

    Args:
      filepath: the model's file (HDF5 or SavedModel), or an open `h5py.File`.
      custom_optimizers: optimizer classes beyond tf.keras's own, wrapped as well.
      custom_objects: Keras's `custom_objects`; a class named here is not wrapped.
      compression: the `DistributedOptimizer`'s compression.
      legacy_opts: accepted: tf.keras's optimizers here are the legacy ones either way.

    Returns:
      The `tf.keras.Model`.
    """
    def wrapped(cls):
        return lambda **config: DistributedOptimizer(cls.from_config(config),
                                                     compression=compression)
    # Keras looks a saved optimizer's class up by its lower-cased name, a custom one by its own.
    objects = {cls.__name__.lower(): wrapped(cls)
               for cls in keras.optimizers.legacy.Optimizer.__subclasses__()}
    objects.update({cls.__name__: wrapped(cls) for cls in custom_optimizers or ()})
    objects.update(custom_objects or {})
    return keras.models.load_model(filepath, custom_objects=objects)
