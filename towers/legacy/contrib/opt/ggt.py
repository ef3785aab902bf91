"""TF 1.15's `tf.contrib.opt.GGTOptimizer` (Agarwal et al., 2018): full-matrix adaptive
regularization over a window of past first moments, on `tf.train.Optimizer` (TF 1.15 built it
on contrib's OptimizerV2; the variables and the arithmetic are the same).

All variables' gradients are laid end to end in one vector, in the order of the variables'
names. Non-slot variables (top level, beside the first variable by name): `global_step` (a
float step count), `moment1` and `flat_grad` ([N], N the variables' total size) and
`grad_buffer` ([window, N], the last `window` first moments). Each step:
    m <- beta1 * m + (1 - beta1) * g;  buffer[(t - 1) % window] <- m
    M <- buffer^T / sqrt(min(t, window));  U, S <- SVD(M^T M + svd_eps I)
    step <- M U diag((sqrt(S) + sigma_eps)^-3) U^T M^T m
            + (m - M U diag(1 / S) U^T M^T m) / min(sqrt(S))   (when min(sqrt(S)) > eps)
    vars <- vars - lr * step
"""
from towers.compat import tf


class GGTOptimizer(tf.train.Optimizer):
    """The GGT optimizer; dense gradients only.

    Args:
      learning_rate: the step size.
      beta1: the decay of the first moment.
      use_locking: kept for `tf.train.Optimizer`.
      name: the name of the ops, "GGT".
      window: how many past first moments the preconditioner uses.
      eps: the smallest square root of a singular value for which the correction term is
        added.
      svd_eps: the damping added to `M^T M` before its SVD.
      sigma_eps: added to the square roots of the singular values before inverting them.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, use_locking=False, name='GGT',
                 window=10, eps=1e-4, svd_eps=1e-6, sigma_eps=1e-2):
        super().__init__(use_locking, name)
        self._hyper = {'lr': learning_rate, 'beta1': beta1, 'window': window, 'eps': eps,
                       'svd_eps': svd_eps, 'sigma_eps': sigma_eps}
        self._hyper_t = {}
        # Variable name -> (offset, size) in the flat vector.
        self._layout = {}
        self._variables = []

    def _create_slots(self, var_list):
        offset = 0
        for var in sorted(var_list, key=lambda var: var.name):
            size = var.shape.num_elements()
            self._layout[var.name] = (offset, size)
            offset += size
        first_var = min(var_list, key=lambda var: var.name)
        dtype = var_list[0].dtype.base_dtype
        window = tf.convert_to_tensor(self._hyper['window'], name='window')
        for name, initial_value in (('global_step', tf.cast(0., dtype)),
                                    ('grad_buffer', tf.zeros([window, offset], dtype)),
                                    ('moment1', tf.zeros([offset], dtype)),
                                    ('flat_grad', tf.zeros([offset], dtype))):
            self._create_non_slot_variable(initial_value, name, first_var)

    def _non_slot(self, name):
        with tf.init_scope():
            return self._get_non_slot_variable(name, graph=tf.get_default_graph())

    def _prepare(self):
        self._hyper_t = {name: tf.convert_to_tensor(value, name=name)
                         for name, value in self._hyper.items()}
        self._variables = []

    def _gather_gradient(self, grad, var):
        """Writes `grad` into its place in `flat_grad`; the step itself is in `_finish`."""
        self._variables.append(var)
        offset, size = self._layout[var.name]
        return tf.scatter_update(self._non_slot('flat_grad'), tf.range(offset, offset + size),
                                 tf.reshape(grad, [-1]))

    def _apply_dense(self, grad, var):
        return self._gather_gradient(grad, var)

    def _resource_apply_dense(self, grad, var):
        return self._gather_gradient(grad, var)

    def _apply_sparse(self, grad, var):
        raise NotImplementedError('GGTOptimizer supports dense gradients only; %s has a '
                                  'sparse one (tf.gather or an embedding lookup)' % var.op.name)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._apply_sparse(grad, var)

    def _finish(self, update_ops, name_scope):
        dtype = self._variables[0].dtype.base_dtype
        hyper = {name: tf.cast(value, dtype) for name, value in self._hyper_t.items()
                 if name != 'window'}
        window = self._hyper_t['window']
        with tf.control_dependencies(update_ops):
            step = tf.assign_add(self._non_slot('global_step'), 1.)
            moment1 = self._non_slot('moment1')
            moment1 = moment1.assign(hyper['beta1'] * moment1
                                     + (1. - hyper['beta1']) * self._non_slot('flat_grad'))
            row = tf.floormod(tf.cast(step - 1., tf.int32), window)
            buffer = tf.scatter_update(self._non_slot('grad_buffer'), row, moment1)
        scale = tf.sqrt(tf.minimum(step, tf.cast(window, dtype)))
        m = tf.transpose(buffer / scale)
        damping = tf.cast(tf.eye(window), dtype) * hyper['svd_eps']
        sigma, u, _ = tf.svd(tf.matmul(m, m, transpose_a=True) + damping)
        sigma_sqrt = tf.sqrt(sigma)
        sigma_sqrt_min = tf.reduce_min(sigma_sqrt)
        moment1_2d = moment1[:, tf.newaxis]

        def through_svd(diagonal):
            """M U diag(diagonal) U^T M^T m, nested as TF 1.15 nested it."""
            projected = tf.matmul(u, tf.matmul(m, moment1_2d, transpose_a=True),
                                  transpose_a=True)
            return tf.matmul(m, tf.matmul(u, tf.matmul(tf.diag(diagonal), projected)))

        head = through_svd(1.0 / tf.pow(sigma_sqrt + hyper['sigma_eps'], 3))
        tail = (moment1_2d - through_svd(1.0 / sigma)) / sigma_sqrt_min
        zeros = tf.zeros([moment1.shape[0], 1], dtype)
        new_step = tf.cond(sigma_sqrt_min > hyper['eps'], lambda: head + tail,
                           lambda: zeros + head)
        updates = []
        for var in self._variables:
            offset, size = self._layout[var.name]
            updates.append(tf.assign_sub(var, hyper['lr'] * tf.reshape(
                new_step[offset:offset + size], var.shape)))
        return tf.group(updates, name=name_scope)
