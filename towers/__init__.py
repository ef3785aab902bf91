"""towers: the TF1 multi-GPU tower pattern on today's TensorFlow.

    from towers import assign_to_device, average_gradients, build_towers
"""
from towers.assembly import Recipe, Training, assemble, fit
from towers.devices import DeviceSetup, PS_OPS, assign_to_device, configure_devices
from towers.errors import LossDivergedError, TowersError
from towers.gradients import average_gradients
from towers.modes import Mode
from towers.replicate import Objective, Replicated, Tower, build_towers, split_batch
from towers.replicated import build_replicated
from towers.training import TrainResult, train

__all__ = [
    'DeviceSetup', 'LossDivergedError', 'Mode', 'Objective', 'PS_OPS', 'Recipe', 'Replicated',
    'Tower', 'TowersError', 'TrainResult', 'Training', 'assemble', 'assign_to_device',
    'average_gradients', 'build_replicated', 'build_towers', 'configure_devices', 'fit',
    'split_batch', 'train',
]
