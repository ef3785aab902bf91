"""`tf.contrib.opt` of TF 1.15: its optimizers on TF 1's `tf.train.Optimizer` (from
`tf.compat.v1`), with TF 1.15's slot names, non-slot variables and updates, dense and sparse.

Modules: `adam` (LazyAdam, Nadam, AdaMax), `weight_decay` (AdamW, MomentumW and the decoupled
weight decay extension), `sign` (AddSign, PowerSign and their sign decays), `lars`,
`reg_adagrad`, `ggt`, and `wrappers` (moving averages, variable clipping, stale-gradient
dropping, the multitask wrapper and its clipping).

Not provided: `ShampooOptimizer` (and `ShampooWOptimizer`), `ElasticAverageOptimizer` and
`ModelAverageOptimizer` (with their custom getters), `AGNOptimizer`, `AdamGSOptimizer`,
`LazyAdamGSOptimizer`, `DelayCompensatedGradientDescentOptimizer` and the SciPy/external
optimizer interfaces.
"""
from towers.legacy.contrib.opt.adam import AdaMaxOptimizer, LazyAdamOptimizer, NadamOptimizer
from towers.legacy.contrib.opt.ggt import GGTOptimizer
from towers.legacy.contrib.opt.lars import LARSOptimizer
from towers.legacy.contrib.opt.reg_adagrad import RegAdagradOptimizer
from towers.legacy.contrib.opt.sign import (AddSignOptimizer, PowerSignOptimizer,
                                            get_cosine_decay_fn, get_linear_decay_fn,
                                            get_restart_decay_fn)
from towers.legacy.contrib.opt.weight_decay import (AdamWOptimizer,
                                                    DecoupledWeightDecayExtension,
                                                    MomentumWOptimizer,
                                                    extend_with_decoupled_weight_decay)
from towers.legacy.contrib.opt.wrappers import (DropStaleGradientOptimizer,
                                                MovingAverageOptimizer,
                                                MultitaskOptimizerWrapper,
                                                VariableClippingOptimizer,
                                                clip_gradients_by_global_norm)

__all__ = [
    'AdaMaxOptimizer', 'AdamWOptimizer', 'AddSignOptimizer', 'DecoupledWeightDecayExtension',
    'DropStaleGradientOptimizer', 'GGTOptimizer', 'LARSOptimizer', 'LazyAdamOptimizer',
    'MomentumWOptimizer', 'MovingAverageOptimizer', 'MultitaskOptimizerWrapper',
    'NadamOptimizer', 'PowerSignOptimizer', 'RegAdagradOptimizer', 'VariableClippingOptimizer',
    'clip_gradients_by_global_norm', 'extend_with_decoupled_weight_decay',
    'get_cosine_decay_fn', 'get_linear_decay_fn', 'get_restart_decay_fn',
]
