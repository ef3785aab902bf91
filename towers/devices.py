"""Where towers and variables go: the classic device function and the session's devices.

`assign_to_device` is the device function of the TF1 multi-GPU tutorials. `configure_devices`
turns `--num_gpus N` into N tower devices on whatever machine this is, with the session config
that makes those devices exist.
"""
import collections
import logging

from towers.compat import tf
from towers.errors import TowersError

log = logging.getLogger(__name__)

# Ops that hold state and must live on the parameter device. The classic list stopped at
# `VariableV2`; resource variables (`VarHandleOp`), which TF 2 creates whenever v2 behaviour is
# even partly on, would otherwise be placed on tower 0.
PS_OPS = frozenset([
    'Variable', 'VariableV2', 'AutoReloadVariable', 'VarHandleOp',
    'MutableHashTable', 'MutableHashTableV2',
    'MutableHashTableOfTensors', 'MutableHashTableOfTensorsV2',
    'MutableDenseHashTable', 'MutableDenseHashTableV2',
])


def assign_to_device(device, ps_device='/cpu:0'):
    """Returns a device function for `tf.device`: variables on `ps_device`, the rest on `device`.

    Args:
      device: the device of the tower's compute ops, e.g. '/gpu:1'.
      ps_device: the device that holds the shared variables: a device string, or a device
        function that chooses one per variable (a cluster worker's, which spreads the
        variables over the parameter servers).

    Returns:
      A function from an op (or NodeDef) to a device string.
    """
    def _assign(op):
        node_def = op if isinstance(op, tf.NodeDef) else op.node_def
        if node_def.op not in PS_OPS:
            return device
        return ps_device(op) if callable(ps_device) else ps_device
    return _assign


DeviceSetup = collections.namedtuple(
    'DeviceSetup', ['tower_devices', 'ps_device', 'config', 'description'])
DeviceSetup.__doc__ = """The devices of one training process.

Attributes:
  tower_devices: list of N device strings, one per tower.
  ps_device: the device that holds the variables and averages the gradients.
  config: the `tf.ConfigProto` every session of the process must use, since it creates the
    virtual devices that `tower_devices` names.
  description: one line saying which case applied.
"""


def configure_devices(num_gpus, log_device_placement=False, ps_device='/cpu:0',
                      intra_op_threads=0, inter_op_threads=0, logical_gpu_memory_mb=2048,
                      physical_gpus=None):
    """Chooses N tower devices for `--num_gpus N` on this machine.

    - N or more GPUs: towers on '/gpu:0' .. '/gpu:N-1'.
    - Fewer GPUs than N (but some): each GPU is split into logical GPUs of
      `logical_gpu_memory_mb` each, round-robin, until there are N.
    - No GPU: N virtual CPU devices '/cpu:0' .. '/cpu:N-1' sharing the machine's cores.

    Args:
      num_gpus: number of towers, >= 1.
      log_device_placement: log where every op runs (the tutorial's flag).
      ps_device: where variables live.
      intra_op_threads, inter_op_threads: thread pool sizes, 0 for TensorFlow's choice.
      logical_gpu_memory_mb: memory of each logical GPU when GPUs are split.
      physical_gpus: number of physical GPUs; by default, those TensorFlow sees.

    Returns:
      A `DeviceSetup`; its description is also logged.
    """
    if num_gpus < 1:
        raise TowersError('--num_gpus must be at least 1, got %d' % num_gpus)
    if physical_gpus is None:
        physical_gpus = len(tf.config.list_physical_devices('GPU'))
    config = tf.ConfigProto(
        allow_soft_placement=True,
        log_device_placement=log_device_placement,
        intra_op_parallelism_threads=intra_op_threads,
        inter_op_parallelism_threads=inter_op_threads)
    if physical_gpus >= num_gpus:
        kind = 'gpu'
        description = '%d towers on %d of %d GPUs' % (num_gpus, num_gpus, physical_gpus)
    elif physical_gpus > 0:
        kind = 'gpu'
        per_gpu = [num_gpus // physical_gpus + (1 if i < num_gpus % physical_gpus else 0)
                   for i in range(physical_gpus)]
        for count in per_gpu:
            virtual = config.gpu_options.experimental.virtual_devices.add()
            virtual.memory_limit_mb.extend([float(logical_gpu_memory_mb)] * count)
        description = ('%d towers on logical GPUs: %d physical GPUs split into %s '
                       '(%d MB each)' % (num_gpus, physical_gpus,
                                         '+'.join(str(c) for c in per_gpu),
                                         logical_gpu_memory_mb))
    else:
        kind = 'cpu'
        config.device_count['CPU'] = num_gpus
        description = '%d towers on %d virtual CPU devices (no GPU found)' % (num_gpus, num_gpus)
    description += '; variables on %s' % ps_device
    log.info('devices: %s', description)
    devices = ['/%s:%d' % (kind, i) for i in range(num_gpus)]
    return DeviceSetup(devices, ps_device, config, description)


class VariablePlacement:
    """A worker's device function: variables round robin over the parameter servers, every
    other op on the worker (its CPU, unless an inner `tf.device` says otherwise).

    It serves as `ps_device` wherever the towers take one (`assign_to_device`,
    `build_towers`, `Replicated.train_op`), and as the scope of everything built outside the
    towers: `with tf.device(setup.ps_device)`.
    """

    def __init__(self, num_ps, worker_device, ps_job='ps'):
        self._num_ps = num_ps
        self._ps_job = '/job:%s' % ps_job
        self._ps_tasks = {}
        self._setter = tf.train.replica_device_setter(
            ps_tasks=num_ps, ps_device=self._ps_job, worker_device=worker_device,
            ps_ops=sorted(PS_OPS), ps_strategy=self._ps_task)

    def _ps_task(self, op):
        # A variable built in the towers inside a `tf.device(placement)` scope passes through
        # this function twice (the towers' device function, then the scope); choosing by name
        # keeps the round robin from counting it twice.
        return self._ps_tasks.setdefault(op.name, len(self._ps_tasks) % self._num_ps)

    def __call__(self, op):
        return self._setter(op)

    def __str__(self):
        return '%s (%d task(s), round robin)' % (self._ps_job, self._num_ps)
