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
from towers import lazy

# Imported when first used (`towers.lazy`): `import towers` alone imports no TensorFlow.
__getattr__, __dir__ = lazy.exports(__name__, {
    'DeviceSetup': 'towers.devices', 'PS_OPS': 'towers.devices',
    'assign_to_device': 'towers.devices', 'configure_devices': 'towers.devices',
    'LossDivergedError': 'towers.errors', 'TowersError': 'towers.errors',
    'regression': 'towers.evaluation.regression',
    'average_gradients': 'towers.gradients',
    'build_replicated': 'towers.replication.all_reduce',
    'build_towers': 'towers.replication.parameter_server',
    'Objective': 'towers.replication.tower', 'Replicated': 'towers.replication.tower',
    'Tower': 'towers.replication.tower', 'split_batch': 'towers.replication.tower',
    'Mode': 'towers.replication.registry',
    'Recipe': 'towers.training.assembly', 'Training': 'towers.training.assembly',
    'assemble': 'towers.training.assembly', 'fit': 'towers.training.assembly',
    'TrainResult': 'towers.training.loop', 'train': 'towers.training.loop',
})

__all__ = [
    'DeviceSetup', 'LossDivergedError', 'Mode', 'Objective', 'PS_OPS', 'Recipe', 'Replicated',
    'Tower', 'TowersError', 'TrainResult', 'Training', 'assemble', 'assign_to_device',
    'average_gradients', 'build_replicated', 'build_towers', 'configure_devices', 'fit',
    'regression', 'split_batch', 'train',
]
