"""TF 1.15's variants of Adam in `tf.contrib.opt`: `LazyAdamOptimizer`, `NadamOptimizer`,
`AdaMaxOptimizer`, on `tf.train.AdamOptimizer` (TF 1's, from `tf.compat.v1`).

They keep Adam's slots (`m`, `v`: variables `<var>/<name>` and `<var>/<name>_1`) and its
non-slot `beta1_power` and `beta2_power` (AdaMax only `beta1_power`), created beside the first
variable by name as Adam creates them. The sparse updates below serve ref and resource
variables alike: their IndexedSlices arrive with duplicate indices already summed.
"""
from towers.compat import tf


def _as(value, like):
    """`value` cast to the dtype of `like` (a variable or a gradient)."""
    return tf.cast(value, like.dtype.base_dtype)


class LazyAdamOptimizer(tf.train.AdamOptimizer):
    """Adam that, for sparse gradients, updates the moments and the variable only at the rows
    the gradient has (the other rows' moments keep their values). Dense gradients get Adam's
    update. Arguments are `tf.train.AdamOptimizer`'s."""

    def _lazy_update(self, values, var, indices):
        beta1_power, beta2_power = (_as(power, var) for power in self._get_beta_accumulators())
        lr, beta1, beta2, epsilon = (_as(value, var) for value in (
            self._lr_t, self._beta1_t, self._beta2_t, self._epsilon_t))
        step_size = lr * tf.sqrt(1 - beta2_power) / (1 - beta1_power)
        m, v = self.get_slot(var, 'm'), self.get_slot(var, 'v')
        m_rows = beta1 * tf.gather(m, indices) + (1 - beta1) * values
        v_rows = beta2 * tf.gather(v, indices) + (1 - beta2) * tf.square(values)
        m_update = tf.scatter_update(m, indices, m_rows, use_locking=self._use_locking)
        v_update = tf.scatter_update(v, indices, v_rows, use_locking=self._use_locking)
        var_update = tf.scatter_sub(var, indices,
                                    step_size * m_rows / (tf.sqrt(v_rows) + epsilon),
                                    use_locking=self._use_locking)
        return tf.group(var_update, m_update, v_update)

    def _apply_sparse(self, grad, var):
        return self._lazy_update(grad.values, var, grad.indices)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._lazy_update(grad, var, indices)


class NadamOptimizer(tf.train.AdamOptimizer):
    """Adam with Nesterov momentum (Dozat, 2015). Arguments are `tf.train.AdamOptimizer`'s."""

    def _nesterov_adam(self, apply, var, m, v, grad):
        beta1_power, beta2_power = self._get_beta_accumulators()
        return apply(var=var, m=m, v=v, beta1_power=_as(beta1_power, grad),
                     beta2_power=_as(beta2_power, grad), lr=_as(self._lr_t, grad),
                     beta1=_as(self._beta1_t, grad), beta2=_as(self._beta2_t, grad),
                     epsilon=_as(self._epsilon_t, grad), grad=grad,
                     use_locking=self._use_locking, use_nesterov=True)

    def _apply_dense(self, grad, var):
        return self._nesterov_adam(tf.raw_ops.ApplyAdam, var, self.get_slot(var, 'm'),
                                   self.get_slot(var, 'v'), grad).op

    def _resource_apply_dense(self, grad, var):
        return self._nesterov_adam(tf.raw_ops.ResourceApplyAdam, var.handle,
                                   self.get_slot(var, 'm').handle,
                                   self.get_slot(var, 'v').handle, grad)

    def _apply_sparse_shared(self, grad, var, indices, scatter_add):
        """Decays all of `m` and `v`, adds the gradient's rows, and moves those rows of `var`
        along the Nesterov-corrected first moment."""
        beta1_power, beta2_power = (_as(power, var) for power in self._get_beta_accumulators())
        lr, beta1, beta2, epsilon = (_as(value, var) for value in (
            self._lr_t, self._beta1_t, self._beta2_t, self._epsilon_t))
        step_size = lr * tf.sqrt(1 - beta2_power) / (1 - beta1_power)
        m, v = self.get_slot(var, 'm'), self.get_slot(var, 'v')
        m_added = grad * (1 - beta1)
        with tf.control_dependencies([tf.assign(m, m * beta1, use_locking=self._use_locking)]):
            m_t = scatter_add(m, indices, m_added)
            m_bar = m_added + beta1 * tf.gather(m_t, indices)
        v_added = (grad * grad) * (1 - beta2)
        with tf.control_dependencies([tf.assign(v, v * beta2, use_locking=self._use_locking)]):
            v_t = scatter_add(v, indices, v_added)
        var_update = scatter_add(var, indices, -step_size * m_bar
                                 / (tf.sqrt(tf.gather(v_t, indices)) + epsilon))
        return tf.group(var_update, m_bar, v_t)


class AdaMaxOptimizer(tf.train.AdamOptimizer):
    """AdaMax (Kingma and Ba, 2014, section 7.1): Adam with the infinity norm as its second
    moment, `v <- max(beta2 * v, |g|)`, and only `beta1_power` as non-slot variable. Sparse
    gradients update only their rows of `m`, `v` and the variable.

    Args:
      learning_rate, beta1, beta2, epsilon, use_locking: as `tf.train.AdamOptimizer`'s.
      name: the name of the ops and slots, "AdaMax".
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name='AdaMax'):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_locking, name)

    def _beta1_power(self):
        with tf.init_scope():
            return self._get_non_slot_variable('beta1_power', graph=tf.get_default_graph())

    def _create_slots(self, var_list):
        first_var = min(var_list, key=lambda var: var.name)
        self._create_non_slot_variable(initial_value=self._beta1, name='beta1_power',
                                       colocate_with=first_var)
        for var in var_list:
            self._zeros_slot(var, 'm', self._name)
            self._zeros_slot(var, 'v', self._name)

    def _ada_max(self, apply, var, m, v, grad):
        return apply(var=var, m=m, v=v, beta1_power=_as(self._beta1_power(), grad),
                     lr=_as(self._lr_t, grad), beta1=_as(self._beta1_t, grad),
                     beta2=_as(self._beta2_t, grad), epsilon=_as(self._epsilon_t, grad),
                     grad=grad, use_locking=self._use_locking)

    def _apply_dense(self, grad, var):
        return self._ada_max(tf.raw_ops.ApplyAdaMax, var, self.get_slot(var, 'm'),
                             self.get_slot(var, 'v'), grad).op

    def _resource_apply_dense(self, grad, var):
        return self._ada_max(tf.raw_ops.ResourceApplyAdaMax, var.handle,
                             self.get_slot(var, 'm').handle, self.get_slot(var, 'v').handle,
                             grad)

    def _sparse_update(self, values, var, indices):
        beta1_power = _as(self._beta1_power(), var)
        lr, beta1, beta2, epsilon = (_as(value, var) for value in (
            self._lr_t, self._beta1_t, self._beta2_t, self._epsilon_t))
        m, v = self.get_slot(var, 'm'), self.get_slot(var, 'v')
        m_rows = tf.gather(m, indices) * beta1 + values * (1 - beta1)
        v_rows = tf.maximum(tf.gather(v, indices) * beta2, tf.abs(values))
        m_update = tf.scatter_update(m, indices, m_rows, use_locking=self._use_locking)
        v_update = tf.scatter_update(v, indices, v_rows, use_locking=self._use_locking)
        var_update = tf.scatter_add(var, indices,
                                    -lr / (1 - beta1_power) * (m_rows / (v_rows + epsilon)),
                                    use_locking=self._use_locking)
        return tf.group(var_update, m_update, v_update)

    def _apply_sparse(self, grad, var):
        return self._sparse_update(grad.values, var, grad.indices)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._sparse_update(grad, var, indices)

    def _finish(self, update_ops, name_scope):
        with tf.control_dependencies(update_ops):
            beta1_power = self._beta1_power()
            with tf.colocate_with(beta1_power):
                update_beta1 = beta1_power.assign(beta1_power * self._beta1_t,
                                                  use_locking=self._use_locking)
        return tf.group(*update_ops + [update_beta1], name=name_scope)
