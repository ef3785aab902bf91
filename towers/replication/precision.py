"""Mixed precision: towers that compute in float16 from float32 master weights, with dynamic
loss scaling.

The recipe of Micikevicius et al., "Mixed Precision Training" (ICLR 2018), as tf_cnn_benchmarks
applies it with `--use_fp16`:

- each tower takes its shard in float16 (every floating tensor of it is cast), so a network
  whose layers follow the dtype of their input (the CIFAR-10 tutorial's, tf-slim's) computes in
  float16;
- a trainable variable that such a network asks for in float16 is made in float32, under the
  same name, and read through a cast: updates are applied to float32 weights, so small ones are
  not lost to float16 rounding, and checkpoints are those of a float32 run;
- the tower's losses are summed in float32, and the loss is multiplied by a loss scale before
  differentiation, so that small gradients do not flush to zero in float16; the gradients are
  divided by it again in float32;
- dynamic loss scaling: a step whose gradients are not all finite is skipped (the global step
  still advances) and halves the scale; `growth_interval` finite steps in a row double it.

This is not the CIFAR-10 tutorial's `--use_fp16`, which makes the weights themselves float16,
without master weights or loss scaling; that flag keeps its meaning (`--mixed_precision` is
this mode).

    tower_fn = mixed_precision_tower(recipe.tower_fn)
    optimizer = LossScaleOptimizer(recipe.optimizer(learning_rate))
"""
from towers.compat import tf
from towers.errors import TowersError

COMPUTE_DTYPE = tf.float16
MASTER_DTYPE = tf.float32


def mixed_precision_tower(tower_fn):
    """`tower_fn` computing in float16 from float32 master weights.

    Args:
      tower_fn: as for `towers.build_towers`: shard -> dict of named tensors, its losses in the
        `losses` collection.

    Returns:
      A tower function that calls `tower_fn` on the shard with every floating tensor cast to
      float16, makes each trainable variable requested in float16 a float32 variable of the same
      name read through a cast (non-trainable ones, such as batch-norm statistics that a layer
      updates, are made as requested), and replaces this tower's float16 losses in the `losses`
      collection by their float32 casts (`<loss>/float32`), so that they add up in float32 with
      regularisation losses of the float32 variables.
    """
    def tower(shard):
        scope = tf.get_default_graph().get_name_scope()
        with tf.variable_scope(tf.get_variable_scope(), custom_getter=_float32_master,
                               auxiliary_name_scope=False):
            outputs = tower_fn(tf.nest.map_structure(_compute_dtype, shard))
        if not _losses_in_float32(scope + '/' if scope else ''):
            raise TowersError(
                'mixed precision: tower %r computed no loss in float16, so its layers did not '
                'follow the float16 input (a Keras model computes in its own dtype policy, '
                'float32); mixed precision needs a network built with tf.get_variable '
                '(tf-slim, tf.layers, variable scopes): train this model in float32'
                % (scope or 'tower'))
        return outputs
    return tower


def _compute_dtype(tensor):
    tensor = tf.convert_to_tensor(tensor)
    return tf.cast(tensor, COMPUTE_DTYPE) if tensor.dtype.is_floating else tensor


def _float32_master(getter, *args, **kwargs):
    """A custom getter: a trainable float16 variable is made in float32 and read as float16."""
    requested = tf.as_dtype(kwargs.get('dtype') or tf.float32).base_dtype
    if requested != COMPUTE_DTYPE or kwargs.get('trainable') is False:
        return getter(*args, **kwargs)
    master = getter(*args, **dict(kwargs, dtype=MASTER_DTYPE))
    return tf.cast(master, COMPUTE_DTYPE)


def _losses_in_float32(scope):
    # The tower sums the `losses` collection under its scope; float16 terms next to float32 ones
    # (regularisation of the master weights) could not be added, and their sum would round.
    # Returns how many float16 losses it cast.
    losses = tf.get_collection_ref(tf.GraphKeys.LOSSES)
    cast = 0
    for i, loss in enumerate(losses):
        if loss.dtype.base_dtype == COMPUTE_DTYPE and loss.name.startswith(scope):
            with tf.name_scope(loss.op.name + '/'):
                losses[i] = tf.cast(loss, MASTER_DTYPE, name='float32')
            cast += 1
    return cast


def summarized_gradients(grads_and_vars):
    """The (gradient, variable) pairs as summaries should show them: the gradients the step
    applies, zeros on a step the loss scale skips.

    The gradients of a skipped step are not finite; a histogram summary of them stops the run
    ("Infinity in Histogram"), and they update nothing.
    """
    grads_and_vars = list(grads_and_vars)
    present = [g for g, _ in grads_and_vars if g is not None]
    if not present:
        return grads_and_vars
    finite = _all_finite(present)

    def shown(grad):
        if grad is None:
            return None
        if isinstance(grad, tf.IndexedSlices):
            return tf.IndexedSlices(tf.where(finite, grad.values, tf.zeros_like(grad.values)),
                                    grad.indices, grad.dense_shape)
        return tf.where(finite, grad, tf.zeros_like(grad))
    return [(shown(g), v) for g, v in grads_and_vars]


def _scaled(grad, factor):
    if isinstance(grad, tf.IndexedSlices):
        return tf.IndexedSlices(grad.values * tf.cast(factor, grad.values.dtype), grad.indices,
                                grad.dense_shape)
    return grad * tf.cast(factor, grad.dtype)


def _all_finite(grads):
    values = [g.values if isinstance(g, tf.IndexedSlices) else g for g in grads]
    return tf.reduce_all(tf.stack([tf.reduce_all(tf.is_finite(v)) for v in values]))


class LossScaleOptimizer(tf.train.Optimizer):
    """Dynamic loss scaling around another `tf.train.Optimizer`.

    `compute_gradients` differentiates the loss (cast to float32) times the loss scale and
    divides the gradients by the scale; `apply_gradients` applies them with the wrapped
    optimizer only when every one of them is finite, and updates the scale: halved (not below
    1) after a step with a non-finite gradient, which is skipped, doubled after
    `growth_interval` finite steps in a row. The global step advances on every step, skipped
    or not, as the training loop expects.

    The scale and its count of finite steps are local variables: checkpoints hold the same
    names with and without mixed precision, and a resumed run starts again from
    `initial_scale` (a few skipped steps at most). Slots are the wrapped optimizer's.

    Attributes:
      loss_scale: the scale, a float32 scalar variable.
    """

    def __init__(self, optimizer, initial_scale=2.0 ** 15, growth_interval=2000):
        """Makes the scale's variables in the default graph, on the current device.

        Args:
          optimizer: the `tf.train.Optimizer` that computes and applies the gradients.
          initial_scale: the first loss scale (float16 gradients reach 65504).
          growth_interval: finite steps in a row after which the scale doubles.
        """
        super().__init__(use_locking=False, name='LossScale')
        self._optimizer = optimizer
        self._growth_interval = growth_interval
        local = [tf.GraphKeys.LOCAL_VARIABLES]
        self.loss_scale = tf.Variable(initial_scale, dtype=tf.float32, trainable=False,
                                      collections=local, name='loss_scale')
        self._finite_steps = tf.Variable(0, dtype=tf.int32, trainable=False, collections=local,
                                         name='loss_scale_finite_steps')

    def compute_gradients(self, loss, var_list=None, **kwargs):
        """The wrapped optimizer's gradients of `loss`, computed through the scaled loss.

        Returns:
          A list of (gradient, variable) pairs, None where the variable has no gradient.
        """
        scale = tf.identity(self.loss_scale)
        grads = self._optimizer.compute_gradients(tf.cast(loss, tf.float32) * scale,
                                                  var_list=var_list, **kwargs)
        return [(None if g is None else _scaled(g, 1.0 / scale), v) for g, v in grads]

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Applies finite gradients with the wrapped optimizer; updates the scale.

        Returns:
          An op that applies the update (or skips it), updates the scale and increments
          `global_step` when given.
        """
        grads_and_vars = list(grads_and_vars)
        finite = _all_finite([g for g, _ in grads_and_vars if g is not None])

        def apply():
            with tf.control_dependencies([self._optimizer.apply_gradients(grads_and_vars,
                                                                          name=name)]):
                return tf.constant(True)

        applied = tf.cond(finite, apply, lambda: tf.constant(False))
        with tf.control_dependencies([applied]):
            updates = [self._update_scale(finite)]
            if global_step is not None:
                updates.append(tf.assign_add(global_step, tf.ones([], global_step.dtype)))
        return tf.group(*updates, name=name or 'loss_scaled_update')

    def _update_scale(self, finite):
        scale = tf.identity(self.loss_scale)
        counted = self._finite_steps + 1
        grow = tf.logical_and(finite, counted >= self._growth_interval)
        new_scale = tf.where(finite, tf.where(grow, scale * 2.0, scale),
                             tf.maximum(scale / 2.0, 1.0))
        new_count = tf.where(tf.logical_and(finite, tf.logical_not(grow)), counted,
                             tf.zeros_like(counted))
        return tf.group(tf.assign(self.loss_scale, new_scale),
                        tf.assign(self._finite_steps, new_count))

    def get_slot(self, var, name):
        return self._optimizer.get_slot(var, name)

    def get_slot_names(self):
        return self._optimizer.get_slot_names()

    def variables(self):
        return self._optimizer.variables() + [self.loss_scale, self._finite_steps]
