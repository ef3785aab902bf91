"""TF 1.15's decoupled weight decay (Loshchilov and Hutter, 2017) in `tf.contrib.opt`:
`DecoupledWeightDecayExtension`, `extend_with_decoupled_weight_decay`, `AdamWOptimizer`,
`MomentumWOptimizer`.

Each variable is first shrunk by `weight_decay * var` (sparse gradients: only their rows), then
the base optimizer's update runs; slots and non-slot variables are the base optimizer's.

The decay waits for the variable's gradient, so that the gradient is always that of the weights
before their decay. TF 1.15 left the order to the executor: a forward pass that read a weight
after its decay got the gradient of the decayed weight (a program that builds its update under
`tf.control_dependencies([loss])` gets the same numbers from both).
"""
from towers.compat import tf


class DecoupledWeightDecayExtension(object):
    """A mixin that adds decoupled weight decay to a `tf.train.Optimizer` subclass; it must
    come first among the bases: `class AdamW(DecoupledWeightDecayExtension, AdamOptimizer)`.

    Args:
      weight_decay: a float, a scalar tensor or a callable returning one: the factor each
        decayed variable is multiplied by and subtracted at each step.
      **kwargs: the base optimizer's arguments.

    `apply_gradients(..., decay_var_list=...)` decays only the listed variables (all of them
    when it is None or empty). `minimize(..., decay_var_list=...)` accepts the list but, as in
    TF 1.15, decays every variable: its `minimize` called `apply_gradients` without the list.
    """

    def __init__(self, weight_decay, **kwargs):
        self._weight_decay = weight_decay
        self._weight_decay_tensor = None
        self._decay_var_refs = None
        super().__init__(**kwargs)

    def minimize(self, loss, global_step=None, var_list=None,
                 gate_gradients=tf.train.Optimizer.GATE_OP, aggregation_method=None,
                 colocate_gradients_with_ops=False, name=None, grad_loss=None,
                 decay_var_list=None):
        """`tf.train.Optimizer.minimize`, decaying every variable (see the class)."""
        del decay_var_list  # TF 1.15 lost it on the way to apply_gradients.
        return super().minimize(
            loss, global_step=global_step, var_list=var_list, gate_gradients=gate_gradients,
            aggregation_method=aggregation_method,
            colocate_gradients_with_ops=colocate_gradients_with_ops, name=name,
            grad_loss=grad_loss)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None,
                        decay_var_list=None):
        """`tf.train.Optimizer.apply_gradients`, decaying the variables of `decay_var_list`
        (all of them when it is None or empty) before their updates."""
        self._decay_var_refs = ({var.ref() for var in decay_var_list} if decay_var_list
                            else None)
        return super().apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def _prepare(self):
        weight_decay = self._weight_decay
        if callable(weight_decay):
            weight_decay = weight_decay()
        self._weight_decay_tensor = tf.convert_to_tensor(weight_decay, name='weight_decay')
        super()._prepare()

    def _decays_variable(self, var):
        return self._decay_var_refs is None or var.ref() in self._decay_var_refs

    def _decay_weights(self, var, gradient, indices=None):
        """Shrinks `var` (its rows `indices`, when given) by the weight decay, once `gradient`
        (a tensor) is computed; a no-op for a variable not to decay."""
        if not self._decays_variable(var):
            return tf.no_op()
        decay = tf.cast(self._weight_decay_tensor, var.dtype.base_dtype)
        with tf.control_dependencies([gradient]):
            if indices is None:
                return var.assign_sub(decay * var, self._use_locking)
            return tf.scatter_add(var, indices, -decay * tf.gather(var, indices),
                                  use_locking=self._use_locking)

    def _apply_dense(self, grad, var):
        with tf.control_dependencies([self._decay_weights(var, grad)]):
            return super()._apply_dense(grad, var)

    def _resource_apply_dense(self, grad, var):
        with tf.control_dependencies([self._decay_weights(var, grad)]):
            return super()._resource_apply_dense(grad, var)

    def _apply_sparse(self, grad, var):
        with tf.control_dependencies([self._decay_weights(var, grad.values, grad.indices)]):
            return super()._apply_sparse(grad, var)

    def _resource_apply_sparse(self, grad, var, indices):
        with tf.control_dependencies([self._decay_weights(var, grad, indices)]):
            return super()._resource_apply_sparse(grad, var, indices)


def extend_with_decoupled_weight_decay(base_optimizer):
    """A subclass of the optimizer class `base_optimizer` with decoupled weight decay.

    Its constructor takes `weight_decay` first, then `base_optimizer`'s arguments by keyword;
    `extend_with_decoupled_weight_decay(tf.train.AdamOptimizer)` is `AdamWOptimizer` with
    Adam's default name.
    """
    class OptimizerWithDecoupledWeightDecay(DecoupledWeightDecayExtension, base_optimizer):
        """`base_optimizer` that first decays the variables by `weight_decay * var`; the base's
        arguments by keyword, as TF 1.15 required."""

    return OptimizerWithDecoupledWeightDecay


class MomentumWOptimizer(DecoupledWeightDecayExtension, tf.train.MomentumOptimizer):
    """`tf.train.MomentumOptimizer` with decoupled weight decay (SGDW); slot `momentum`.

    Args:
      weight_decay: see `DecoupledWeightDecayExtension`.
      learning_rate, momentum, use_locking, use_nesterov: `tf.train.MomentumOptimizer`'s.
      name: the name of the ops and slots, "MomentumW".
    """

    def __init__(self, weight_decay, learning_rate, momentum, use_locking=False,
                 name='MomentumW', use_nesterov=False):
        super().__init__(weight_decay, learning_rate=learning_rate, momentum=momentum,
                         use_locking=use_locking, name=name, use_nesterov=use_nesterov)


class AdamWOptimizer(DecoupledWeightDecayExtension, tf.train.AdamOptimizer):
    """`tf.train.AdamOptimizer` with decoupled weight decay; Adam's slots and beta powers.

    Args:
      weight_decay: see `DecoupledWeightDecayExtension`.
      learning_rate, beta1, beta2, epsilon, use_locking: `tf.train.AdamOptimizer`'s.
      name: the name of the ops and slots, "AdamW".
    """

    def __init__(self, weight_decay, learning_rate=0.001, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, use_locking=False, name='AdamW'):
        super().__init__(weight_decay, learning_rate=learning_rate, beta1=beta1, beta2=beta2,
                         epsilon=epsilon, use_locking=use_locking, name=name)
