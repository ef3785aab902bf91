"""TF 1.15's `tf.contrib.opt.RegAdagradOptimizer`: Adagrad whose updates can leave the
accumulators alone, so that a regularization loss does not slow the learning rate's decay."""
import contextlib

from towers.compat import tf


class RegAdagradOptimizer(tf.train.AdagradOptimizer):
    """`tf.train.AdagradOptimizer` (slot `accumulator`) with `avoid_updating_slots()`: the
    updates built inside it use the accumulators without adding to them.

        loss_update = opt.minimize(loss)
        with opt.avoid_updating_slots():
            reg_update = opt.minimize(reg_loss)

    Args:
      learning_rate, initial_accumulator_value, use_locking: Adagrad's.
      name: the name of the ops and slots, "RegAdagrad".
    """

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name='RegAdagrad'):
        super().__init__(learning_rate, initial_accumulator_value=initial_accumulator_value,
                         use_locking=use_locking, name=name)
        self._should_update_slots = True

    @contextlib.contextmanager
    def avoid_updating_slots(self):
        """The updates built inside leave the accumulators as they are."""
        before = self._should_update_slots
        self._should_update_slots = False
        try:
            yield
        finally:
            self._should_update_slots = before

    def _adagrad(self, apply, var, accum, grad, **indices):
        """`apply` (an Adagrad kernel) on `var` and `accum` (variables or handles)."""
        return apply(var=var, accum=accum,
                     lr=tf.cast(self._learning_rate_tensor, grad.dtype.base_dtype), grad=grad,
                     use_locking=self._use_locking, update_slots=self._should_update_slots,
                     **indices)

    def _apply_dense(self, grad, var):
        return self._adagrad(tf.raw_ops.ApplyAdagrad, var, self.get_slot(var, 'accumulator'),
                             grad)

    def _resource_apply_dense(self, grad, var):
        return self._adagrad(tf.raw_ops.ResourceApplyAdagrad, var.handle,
                             self.get_slot(var, 'accumulator').handle, grad)

    def _apply_sparse(self, grad, var):
        return self._adagrad(tf.raw_ops.SparseApplyAdagrad, var,
                             self.get_slot(var, 'accumulator'), grad.values,
                             indices=grad.indices)

    def _resource_apply_sparse(self, grad, var, indices):
        return self._adagrad(tf.raw_ops.ResourceSparseApplyAdagrad, var.handle,
                             self.get_slot(var, 'accumulator').handle, grad, indices=indices)
