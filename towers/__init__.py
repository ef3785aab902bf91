"""towers: the TF1 multi-GPU tower pattern on today's TensorFlow.

    from towers import assign_to_device, average_gradients, build_towers

The packages, by concern: `replication` (how the towers are built and updated: the modes),
`training` (assembling a step around a model's recipe, the loop, hooks, checkpoints, stops),
`cluster` (roles on TensorFlow's distributed runtime, the local launcher, `TF_CONFIG`),
`evaluation` (choosing and restoring a checkpoint, metrics, regression against an original),
`benchmarks` (throughput, ratios, scaling) and `legacy` (a user's TF1 script run unchanged).
The core modules beside them: `compat` (the one import of TensorFlow), `devices`, `gradients`,
`flags`, `cli`, `errors`, `files`, `reports` and `datasets`.
"""
from towers.devices import DeviceSetup, PS_OPS, assign_to_device, configure_devices
from towers.errors import LossDivergedError, TowersError
from towers.evaluation import regression
from towers.gradients import average_gradients
from towers.replication.all_reduce import build_replicated
from towers.replication.parameter_server import build_towers
from towers.replication.tower import Objective, Replicated, Tower, split_batch
from towers.replication.registry import Mode
from towers.training.assembly import Recipe, Training, assemble, fit
from towers.training.loop import TrainResult, train

__all__ = [
    'DeviceSetup', 'LossDivergedError', 'Mode', 'Objective', 'PS_OPS', 'Recipe', 'Replicated',
    'Tower', 'TowersError', 'TrainResult', 'Training', 'assemble', 'assign_to_device',
    'average_gradients', 'build_replicated', 'build_towers', 'configure_devices', 'fit',
    'regression', 'split_batch', 'train',
]
