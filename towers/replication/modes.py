"""A mode's towers: its variable update's builder, wrapped in XLA and mixed precision as the mode
says (`towers.replication` offers these functions; see its docstring)."""
from towers.compat import tf
from towers.replication import precision
from towers.replication.registry import get
from towers.replication.tower import Replicated


def wrap_optimizer(mode, optimizer):
    """`optimizer` as `mode` applies it: with mixed precision, inside dynamic loss scaling.

    Args:
      mode: a `Mode`.
      optimizer: a `tf.train.Optimizer`, or a dict objective name -> optimizer.
    """
    if not mode.mixed_precision:
        return optimizer
    if isinstance(optimizer, dict):
        return {name: precision.LossScaleOptimizer(each) for name, each in optimizer.items()}
    return precision.LossScaleOptimizer(optimizer)


def build(mode, tower_fn, inputs, devices, optimizer, objectives=None, ps_device='/cpu:0'):
    """Builds the towers of `tower_fn` as `mode` says.

    The tower function computes in float16 from float32 master weights with mixed precision,
    and is compiled with XLA (forward and backward passes: gradients of compiled ops are
    compiled too) with `xla`; the variable update's `build` makes the towers.

    Args:
      mode: a `Mode`.
      tower_fn, inputs, devices, objectives, ps_device: as for `towers.build_towers`.
      optimizer: as for `towers.build_towers`, wrapped by `wrap_optimizer` (and the cluster
        role) already.

    Returns:
      A `towers.Replicated`.
    """
    if mode.mixed_precision:
        tower_fn = precision.mixed_precision_tower(tower_fn)
    if mode.xla:
        tower_fn = _compiled(tower_fn)
    return get(mode.variable_update).builder()(tower_fn, inputs, devices, optimizer,
                                               objectives, ps_device=ps_device)


def _compiled(tower_fn):
    def compiled_tower(shard):
        with tf.xla.experimental.jit_scope():
            return tower_fn(shard)
    return compiled_tower


def as_summarized(replicated, mode):
    """`replicated` as summaries should see it: with mixed precision, the gradients of a step
    the loss scale skips (not finite) show as zeros (`precision.summarized_gradients`)."""
    if not mode.mixed_precision:
        return replicated
    grads = {name: precision.summarized_gradients(pairs)
             for name, pairs in replicated.grads.items()}
    return Replicated(*replicated)._replace(grads=grads)
