"""`tf.contrib.estimator.replicate_model_fn` and `TowerOptimizer` (TF 1.5-1.15): towers inside an
Estimator's `model_fn`.

    optimizer = tf.contrib.estimator.TowerOptimizer(tf.train.GradientDescentOptimizer(0.1))
    estimator = tf.estimator.Estimator(
        model_fn=tf.contrib.estimator.replicate_model_fn(model_fn), model_dir=...)

As TF 1.x's: the `input_fn` gives the global batch, which training splits into one equal shard
per device (all GPUs by default, else the CPUs; under `towers-legacy --legacy_devices N`, the N
it shows); the `model_fn` runs once per shard on this project's towers
(`towers.replication.captured`: variables on the CPU, tower i > 0 in name scope 'tower_<i>'
reusing them), every optimizer it uses wrapped in a `TowerOptimizer`, and the towers' gradients
make one update: their mean, or their sum with `loss_reduction=tf.losses.Reduction.SUM`; the
loss is the towers' mean (or sum). The spec is the last tower's, with that train op and loss.

Evaluation and prediction: TF 1.x summed the towers' metric variables into tower 0's and
concatenated their predictions, which is the `model_fn` on the whole batch: that is what runs
here, once, on the first device (its loss is the whole batch's, which TF 1.x's mean of the
towers' losses equals; with `Reduction.SUM` TF 1.x reported the towers' sum).
"""
import copy
import weakref

from towers.compat import tf
from towers.errors import TowersError
from towers.legacy import devices as legacy_devices
from towers.legacy.contrib.wrapping import WrappingOptimizer
from towers.legacy.estimator import calls
from towers.legacy.estimator.spec import EstimatorError, ModeKeys
from towers.replication.captured import build_self_training_towers
from towers.replication.tower import split_batch

# The optimizers a `TowerOptimizer` has applied gradients through.
_WRAPPED = weakref.WeakSet()


class TowerOptimizer(WrappingOptimizer):
    """An optimizer of a `model_fn` under `replicate_model_fn`; without it, the optimizer it
    wraps, unchanged.

    Args:
      optimizer_or_optimizer_fn: a `tf.train.Optimizer`, or a function of no arguments that
        returns one (called once).
    """

    def __init__(self, optimizer_or_optimizer_fn):
        optimizer = optimizer_or_optimizer_fn
        if not isinstance(optimizer, tf.train.Optimizer) and callable(optimizer):
            optimizer = optimizer()
        if not isinstance(optimizer, tf.train.Optimizer):
            raise EstimatorError('TowerOptimizer wraps a tf.train.Optimizer (or a function '
                                 'returning one), got %s' % type(optimizer).__name__)
        super().__init__(optimizer, 'TowerOptimizer')

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        _WRAPPED.add(self._opt)
        return super().apply_gradients(grads_and_vars, global_step=global_step, name=name)

    def get_name(self):
        return self._opt.get_name()


def _local_devices():
    """TF 1.x's default towers: every local GPU, else every local CPU."""
    local = legacy_devices.device_lib.list_local_devices()
    gpus = [d.name for d in local if d.device_type == 'GPU']
    return gpus or [d.name for d in local if d.device_type == 'CPU']


def replicate_model_fn(model_fn, loss_reduction=tf.losses.Reduction.SUM_BY_NONZERO_WEIGHTS,
                       devices=None):
    """A `model_fn` that runs `model_fn` once per device on its shard of the batch (see the
    module docstring).

    Args:
      model_fn: a `model_fn` whose optimizers are `TowerOptimizer`s.
      loss_reduction: how the towers' losses and gradients combine: `Reduction.SUM` sums
        them, the other reductions (but NONE) average them.
      devices: the towers' devices; by default every local GPU, else every local CPU.

    Raises:
      EstimatorError: `loss_reduction` is `Reduction.NONE`.
    """
    if loss_reduction == tf.losses.Reduction.NONE:
        raise EstimatorError('replicate_model_fn: tower losses need to be reduced in some way, '
                             'yet Reduction.NONE is specified')
    summed = loss_reduction == tf.losses.Reduction.SUM

    def replicated_model_fn(features, labels, mode, params=None, config=None):
        towers = list(devices) if devices else _local_devices()
        if len(towers) == 1 or mode != ModeKeys.TRAIN:
            with tf.device(towers[0] if len(towers) > 1 else None):
                return calls.call_model_fn(model_fn, features, labels, mode, params, config)
        try:
            shards = split_batch(features, len(towers))
            label_shards = ([None] * len(towers) if labels is None
                            else split_batch(labels, len(towers)))
        except TowersError as err:
            raise EstimatorError('replicate_model_fn over %d devices: %s'
                                 % (len(towers), err)) from None

        def tower(index, shard):
            spec = calls.call_model_fn(model_fn, shard, label_shards[index], mode,
                                       copy.deepcopy(params), config)
            return spec, spec.train_op

        try:
            built = build_self_training_towers(tower, shards, towers, sum_gradients=summed)
        except TowersError as err:
            raise EstimatorError('replicate_model_fn over %s: %s'
                                 % (', '.join(towers), err)) from None
        unwrapped = [type(call.optimizer).__name__ for call in built.applied[0]
                     if call.optimizer not in _WRAPPED]
        if unwrapped:
            raise EstimatorError('replicate_model_fn over %d devices: the model_fn applies '
                                 'gradients through %s; wrap its optimizers with '
                                 'tf.contrib.estimator.TowerOptimizer'
                                 % (len(towers), ', '.join(unwrapped)))
        losses = [spec.loss for spec in built.results]
        loss = tf.add_n(losses) if summed else tf.add_n(losses) / len(losses)
        return built.results[-1]._replace(train_op=built.train_op, loss=loss)

    return replicated_model_fn
