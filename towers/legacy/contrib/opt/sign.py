"""TF 1.15's sign-based optimizers of Neural Optimizer Search (Bello et al., 2017) in
`tf.contrib.opt`: `AddSignOptimizer`, `PowerSignOptimizer`, and the decays of their sign term
(`get_linear_decay_fn`, `get_cosine_decay_fn`, `get_restart_decay_fn`; TF 1.x's
`opt.python.training.sign_decay`).

Both keep a moving average `m` of the gradient (slot `m`: variable `<var>/<name>`) and scale
the gradient by how often its sign agrees with `m`'s:
    m <- beta * m + (1 - beta) * g
    AddSign:   var <- var - lr * (alpha + decay * sign(g) * sign(m)) * g
    PowerSign: var <- var - lr * exp(log(base) * decay * sign(g) * sign(m)) * g
where `decay` is `sign_decay_fn(global_step)`, or 1. For sparse gradients all of `m` decays
(the gradient taken dense) and only the gradient's rows of the variable move.
"""
import math

from towers.compat import tf


class _SignOptimizer(tf.train.Optimizer):
    """What AddSign and PowerSign share: slot `m`, the sign decay, the sparse update."""

    def __init__(self, learning_rate, beta, sign_decay_fn, use_locking, name):
        super().__init__(use_locking, name)
        self._lr = learning_rate
        self._beta = beta
        self._sign_decay_fn = sign_decay_fn
        self._lr_t = self._beta_t = self._sign_decay_t = None

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        if self._sign_decay_fn is not None:
            self._sign_decay_t = tf.convert_to_tensor(self._sign_decay_fn(global_step),
                                                      name='sign_decay')
        return super().apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def _create_slots(self, var_list):
        for var in var_list:
            self._zeros_slot(var, 'm', self._name)

    def _prepare(self):
        self._lr_t = tf.convert_to_tensor(self._lr, name='learning_rate')
        self._beta_t = tf.convert_to_tensor(self._beta, name='beta')
        if self._sign_decay_fn is None:
            self._sign_decay_t = tf.convert_to_tensor(1.0, name='sign_decay')

    def _kernel_arguments(self, dtype):
        """The dense kernel's arguments besides var, m and grad (`dtype`-cast tensors)."""
        raise NotImplementedError

    def _multiplier(self, agreement, dtype):
        """What multiplies `lr * g` given `decay * sign(g) * sign(m)` (`agreement`)."""
        raise NotImplementedError

    def _dense(self, apply, var, m, grad):
        return apply(var=var, m=m, grad=grad, use_locking=self._use_locking,
                     **self._kernel_arguments(grad.dtype.base_dtype))

    def _apply_dense(self, grad, var):
        return self._dense(self._dense_kernel, var, self.get_slot(var, 'm'), grad).op

    def _resource_apply_dense(self, grad, var):
        return self._dense(self._resource_kernel, var.handle, self.get_slot(var, 'm').handle,
                           grad)

    def _sparse_update(self, values, var, indices):
        dtype = var.dtype.base_dtype
        lr, beta = tf.cast(self._lr_t, dtype), tf.cast(self._beta_t, dtype)
        m = self.get_slot(var, 'm')
        dense_grad = tf.unsorted_segment_sum(values, indices, tf.shape(var)[0])
        m_t = tf.assign(m, (m * beta) + (dense_grad * (1 - beta)),
                        use_locking=self._use_locking)
        agreement = (tf.cast(self._sign_decay_t, dtype)
                     * (tf.gather(tf.sign(m_t), indices) * tf.sign(values)))
        var_update = tf.scatter_sub(var, indices,
                                    lr * self._multiplier(agreement, dtype) * values,
                                    use_locking=self._use_locking)
        return tf.group(var_update, m_t)

    def _apply_sparse(self, grad, var):
        return self._sparse_update(grad.values, var, grad.indices)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._sparse_update(grad, var, indices)


class AddSignOptimizer(_SignOptimizer):
    """AddSign: `var <- var - lr * (alpha + decay * sign(g) * sign(m)) * g`.

    Args:
      learning_rate: the step size.
      alpha: the constant term of the multiplier.
      beta: the decay of the moving average `m`.
      sign_decay_fn: a function global_step -> the decay of the sign term (see
        `get_linear_decay_fn`), or None for 1; `apply_gradients` then needs `global_step`.
      use_locking: whether the updates lock the variables.
      name: the name of the ops and slots, "AddSignOptimizer".
    """
    _dense_kernel = staticmethod(tf.raw_ops.ApplyAddSign)
    _resource_kernel = staticmethod(tf.raw_ops.ResourceApplyAddSign)

    def __init__(self, learning_rate=0.1, alpha=1.0, beta=0.9, sign_decay_fn=None,
                 use_locking=False, name='AddSignOptimizer'):
        super().__init__(learning_rate, beta, sign_decay_fn, use_locking, name)
        self._alpha = alpha
        self._alpha_t = None

    def _prepare(self):
        super()._prepare()
        self._alpha_t = tf.convert_to_tensor(self._alpha, name='alpha')

    def _kernel_arguments(self, dtype):
        return {name: tf.cast(value, dtype) for name, value in (
            ('lr', self._lr_t), ('alpha', self._alpha_t), ('sign_decay', self._sign_decay_t),
            ('beta', self._beta_t))}

    def _multiplier(self, agreement, dtype):
        return tf.cast(self._alpha_t, dtype) + agreement


class PowerSignOptimizer(_SignOptimizer):
    """PowerSign: `var <- var - lr * base ** (decay * sign(g) * sign(m)) * g`.

    Args:
      learning_rate: the step size.
      base: the base of the multiplier, e by default.
      beta: the decay of the moving average `m`.
      sign_decay_fn: a function global_step -> the decay of the sign term (see
        `get_cosine_decay_fn`), or None for 1; `apply_gradients` then needs `global_step`.
      use_locking: whether the updates lock the variables.
      name: the name of the ops and slots, "PowerSignOptimizer".
    """
    _dense_kernel = staticmethod(tf.raw_ops.ApplyPowerSign)
    _resource_kernel = staticmethod(tf.raw_ops.ResourceApplyPowerSign)

    def __init__(self, learning_rate=0.1, base=math.e, beta=0.9, sign_decay_fn=None,
                 use_locking=False, name='PowerSignOptimizer'):
        super().__init__(learning_rate, beta, sign_decay_fn, use_locking, name)
        self._logbase = math.log(base)
        self._logbase_t = None

    def _prepare(self):
        super()._prepare()
        self._logbase_t = tf.convert_to_tensor(self._logbase, name='logbase')

    def _kernel_arguments(self, dtype):
        return {name: tf.cast(value, dtype) for name, value in (
            ('lr', self._lr_t), ('logbase', self._logbase_t),
            ('sign_decay', self._sign_decay_t), ('beta', self._beta_t))}

    def _multiplier(self, agreement, dtype):
        # e ** (log(base) * x) rather than base ** x: TF 1.x's rounding.
        return tf.pow(tf.cast(math.e, dtype), tf.cast(self._logbase_t, dtype) * agreement)


def _required(global_step, decay):
    if global_step is None:
        raise ValueError('global_step is required for %s.' % decay)
    return global_step


def get_linear_decay_fn(decay_steps):
    """A function global_step -> `max(0, (decay_steps - global_step) / decay_steps)`, float32
    (the step counted in int32, at most `decay_steps`)."""
    def linear_decay_fn(global_step):
        step = tf.minimum(_required(global_step, 'linear_decay'), decay_steps)
        remaining = tf.cast(decay_steps, tf.int32) - tf.cast(step, tf.int32)
        return tf.maximum(0.0, tf.cast(remaining, tf.float32)
                          / tf.cast(decay_steps, tf.float32))
    return linear_decay_fn


def _cosine(fraction):
    """`0.5 * (1 + cos(pi * fraction))`."""
    return 0.5 * (1.0 + tf.cos(tf.constant(math.pi) * fraction))


def get_cosine_decay_fn(decay_steps, num_periods=0.5, zero_after=None):
    """A function global_step -> `0.5 * (1 + cos(2 pi num_periods step / decay_steps))`, float32,
    with the step at most `decay_steps`; 0 once `2 num_periods step / decay_steps` reaches
    `2 * zero_after` when that is given."""
    def cosine_decay_fn(global_step):
        step = tf.minimum(_required(global_step, 'cosine_decay'), decay_steps)
        fraction = 2.0 * num_periods * (tf.cast(step, tf.float32)
                                        / tf.cast(decay_steps, tf.float32))
        decayed = _cosine(fraction)
        if zero_after is not None:
            decayed = tf.where(fraction >= 2 * zero_after, 0.0, decayed)
        return decayed
    return cosine_decay_fn


def get_restart_decay_fn(decay_steps, num_periods=1, zero_after=None):
    """A function global_step -> `0.5 * (1 + cos(pi * ((num_periods * step) mod decay_steps) /
    decay_steps))`, float32 (a simplified SGDR restart), with the step at most `decay_steps`;
    0 once `num_periods * step / decay_steps` reaches `zero_after` when that is given."""
    def restart_decay_fn(global_step):
        step = tf.minimum(_required(global_step, 'cosine_decay'), decay_steps)
        within = tf.mod(num_periods * tf.cast(step, tf.float32), decay_steps)
        decayed = _cosine(within / tf.cast(decay_steps, tf.float32))
        if zero_after is not None:
            periods = (tf.cast(num_periods * step, tf.float32)
                       / tf.cast(decay_steps, tf.float32))
            decayed = tf.where(periods >= zero_after, 0.0, decayed)
        return decayed
    return restart_decay_fn
