"""An optimizer that hands every call to the optimizer it wraps: what `tf.contrib`'s
`TowerOptimizer` (`replicate`) and `CrossShardOptimizer` (`tpu`) are where there is no tower
to aggregate over and no TPU shard."""
from towers.compat import tf


class WrappingOptimizer(tf.train.Optimizer):
    """A `tf.train.Optimizer` whose gradients, updates and slots are those of `opt`.

    Args:
      opt: the wrapped `tf.train.Optimizer`.
      name: this optimizer's name.
    """

    def __init__(self, opt, name):
        super().__init__(False, name)
        self._opt = opt

    def compute_gradients(self, *args, **kwargs):
        return self._opt.compute_gradients(*args, **kwargs)

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        return self._opt.apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def get_slot(self, *args, **kwargs):
        return self._opt.get_slot(*args, **kwargs)

    def get_slot_names(self, *args, **kwargs):
        return self._opt.get_slot_names(*args, **kwargs)

    def variables(self):
        return self._opt.variables()
