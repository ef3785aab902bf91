"""TF 1.15's `tf.contrib.opt.LARSOptimizer`: layer-wise adaptive rate scaling (You, Gitman
and Ginsburg, 2017) on momentum, with slot `momentum` (variable `<var>/<name>`)."""
from towers.compat import tf


class LARSOptimizer(tf.train.Optimizer):
    """Momentum whose learning rate each variable scales by its trust ratio
    `eeta * |w| / (|g| + weight_decay * |w| + epsilon)` (1 when |w| or |g| is 0), with
    `weight_decay * w` added to its gradient. Variables whose name contains a string of
    `skip_list` get plain momentum with the weight decay; sparse gradients get plain momentum
    (no scaling, no weight decay).

    Args:
      learning_rate: the base learning rate (a float, a tensor or a callable).
      momentum: the momentum.
      weight_decay: the weight decay, >= 0.
      eeta: the LARS coefficient.
      epsilon: added to the trust ratio's denominator.
      name: the name of the ops and slots, "LARSOptimizer".
      skip_list: substrings of the names of the variables not to scale, or None.
      use_nesterov: whether to use Nesterov momentum.

    Raises:
      ValueError: a negative momentum or weight decay.
    """

    def __init__(self, learning_rate, momentum=0.9, weight_decay=0.0001, eeta=0.001,
                 epsilon=0.0, name='LARSOptimizer', skip_list=None, use_nesterov=False):
        if momentum < 0.0:
            raise ValueError('momentum should be positive: %s' % momentum)
        if weight_decay < 0.0:
            raise ValueError('weight_decay should be positive: %s' % weight_decay)
        super().__init__(use_locking=False, name=name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._weight_decay = weight_decay
        self._eeta = eeta
        self._epsilon = epsilon
        self._skip_list = skip_list
        self._use_nesterov = use_nesterov
        self._learning_rate_tensor = self._momentum_tensor = None

    def _create_slots(self, var_list):
        for var in var_list:
            self._zeros_slot(var, 'momentum', self._name)

    def _prepare(self):
        self._learning_rate_tensor = tf.convert_to_tensor(
            self._call_if_callable(self._learning_rate), name='learning_rate')
        self._momentum_tensor = tf.convert_to_tensor(self._call_if_callable(self._momentum),
                                                     name='momentum')

    def compute_lr(self, grad, var):
        """(the scaled learning rate of `var`, `grad` plus the weight decay term)."""
        if self._skip_list is not None and any(part in var.name for part in self._skip_list):
            return self._learning_rate_tensor, grad
        w_norm = tf.norm(var, ord=2)
        g_norm = tf.norm(grad, ord=2)
        ratio = self._eeta * w_norm / (g_norm + self._weight_decay * w_norm + self._epsilon)
        trust_ratio = tf.where(w_norm > 0, tf.where(g_norm > 0, ratio, 1.0), 1.0)
        return (self._learning_rate_tensor * trust_ratio,
                grad + self._weight_decay * var)

    def _momentum_step(self, apply, grad, var, target, accum):
        """`apply` (a momentum kernel) on `target` (`var` or its handle) with LARS's rate."""
        scaled_lr, grad = self.compute_lr(grad, var)
        dtype = var.dtype.base_dtype
        return apply(var=target, accum=accum, lr=tf.cast(1.0, dtype), grad=grad * scaled_lr,
                     momentum=tf.cast(self._momentum_tensor, dtype), use_locking=False,
                     use_nesterov=self._use_nesterov)

    def _apply_dense(self, grad, var):
        return self._momentum_step(tf.raw_ops.ApplyMomentum, grad, var, var,
                                   self.get_slot(var, 'momentum')).op

    def _resource_apply_dense(self, grad, var):
        return self._momentum_step(tf.raw_ops.ResourceApplyMomentum, grad, var, var.handle,
                                   self.get_slot(var, 'momentum').handle)

    def _sparse_momentum(self, apply, var, accum, values, indices):
        """`apply` (a sparse momentum kernel) on `var` and `accum` (variables or handles)."""
        dtype = values.dtype.base_dtype
        return apply(var=var, accum=accum, lr=tf.cast(self._learning_rate_tensor, dtype),
                     grad=values, indices=indices,
                     momentum=tf.cast(self._momentum_tensor, dtype),
                     use_locking=self._use_locking, use_nesterov=self._use_nesterov)

    def _apply_sparse(self, grad, var):
        return self._sparse_momentum(tf.raw_ops.SparseApplyMomentum, var,
                                     self.get_slot(var, 'momentum'), grad.values,
                                     grad.indices).op

    def _resource_apply_sparse(self, grad, var, indices):
        return self._sparse_momentum(tf.raw_ops.ResourceSparseApplyMomentum, var.handle,
                                     self.get_slot(var, 'momentum').handle, grad, indices)
