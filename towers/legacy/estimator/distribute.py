"""The distribution strategies a TF 1.x program hands its `RunConfig` (`train_distribute`,
`eval_distribute`): `tf.contrib.distribute.MirroredStrategy` and `OneDeviceStrategy` (TF
1.11-1.14's, with their cross-device ops), and TensorFlow's own `tf.distribute` strategies.

A strategy here says which devices the replicas run on; the Estimator builds one replica of the
`model_fn` per device on this project's towers (`towers.replication.captured`: variables on the
CPU, the replicas' gradients averaged there, one update), whatever cross-device ops the program
chose: all of them computed the same mean of the replicas' gradients.

    config = tf.estimator.RunConfig(
        train_distribute=tf.contrib.distribute.MirroredStrategy(num_gpus=2))

`MirroredStrategy(num_gpus=N)` is '/gpu:0'..'/gpu:N-1' (virtual CPU devices under the runner's
`--legacy_devices N` on a machine without them; with soft placement on the CPU otherwise, as
TF 1.x placed them); `devices=[...]` as given; neither: the GPUs TensorFlow sees, else the CPU.
"""
from towers.compat import tf
from towers.legacy.estimator.spec import EstimatorError


class CrossDeviceOps:
    """TF 1.x's cross-device ops (how a strategy reduces the replicas' gradients): kept as the
    program gave them; the mean is the towers' parameter-server average whichever is chosen."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs

    def __repr__(self):
        return '%s(%s)' % (type(self).__name__, ', '.join(
            [repr(a) for a in self.args] + ['%s=%r' % item for item in self.kwargs.items()]))


class AllReduceCrossDeviceOps(CrossDeviceOps):
    """`tf.contrib.distribute.AllReduceCrossDeviceOps(all_reduce_alg='nccl', num_packs=1,
    agg_small_grads_max_bytes=0, agg_small_grads_max_group=10)`."""

    def __init__(self, all_reduce_alg='nccl', num_packs=1, agg_small_grads_max_bytes=0,
                 agg_small_grads_max_group=10):
        super().__init__(all_reduce_alg=all_reduce_alg, num_packs=num_packs,
                         agg_small_grads_max_bytes=agg_small_grads_max_bytes,
                         agg_small_grads_max_group=agg_small_grads_max_group)


class ReductionToOneDevice(CrossDeviceOps):
    """`tf.contrib.distribute.ReductionToOneDevice(reduce_to_device=None, accumulation_fn=None)`."""


class Strategy:
    """A strategy of the program: the devices its replicas run on.

    Attributes:
      devices: the replicas' devices, in order.
      num_replicas_in_sync: their number.
    """

    def __init__(self, devices):
        # TF 1.x took 'device:CPU:0' as '/device:CPU:0'; TensorFlow 2 needs the latter.
        self.devices = tuple(tf.DeviceSpec.from_string(d if isinstance(d, str) else d.to_string())
                             .to_string() for d in devices)
        self.num_replicas_in_sync = len(self.devices)

    @property
    def num_replicas(self):
        return self.num_replicas_in_sync

    def __repr__(self):
        return '%s(devices=%r)' % (type(self).__name__, list(self.devices))


def _gpu_devices():
    return ['/gpu:%d' % i for i in range(len(tf.config.list_physical_devices('GPU')))]


class MirroredStrategy(Strategy):
    """TF 1.11-1.14's `tf.contrib.distribute.MirroredStrategy` (also `tf.distribute`'s of TF
    1.14, which takes `devices` and `cross_device_ops` only).

    Raises:
      EstimatorError: both `devices` and `num_gpus` given, a negative `num_gpus`, or no device.
    """

    def __init__(self, devices=None, num_gpus=None, num_gpus_per_worker=None,
                 cross_device_ops=None, auto_shard_dataset=False, cross_tower_ops=None,
                 prefetch_on_device=None):
        if num_gpus is None:
            num_gpus = num_gpus_per_worker
        if devices is not None and num_gpus is not None:
            raise EstimatorError('MirroredStrategy: give devices or num_gpus, not both (got %r '
                                 'and %r)' % (devices, num_gpus))
        if num_gpus is not None and num_gpus < 0:
            raise EstimatorError('MirroredStrategy: num_gpus must be >= 0, got %r' % num_gpus)
        if devices is None:
            devices = (['/gpu:%d' % i for i in range(num_gpus)] if num_gpus
                       else _gpu_devices() if num_gpus is None else [])
            devices = devices or ['/cpu:0']
        if not devices:
            raise EstimatorError('MirroredStrategy: devices is empty: expected at least one '
                                 'device string')
        super().__init__(devices)
        self.cross_device_ops = cross_device_ops or cross_tower_ops
        self.auto_shard_dataset = auto_shard_dataset


class OneDeviceStrategy(Strategy):
    """`tf.contrib.distribute.OneDeviceStrategy(device)`: one replica on `device`."""

    def __init__(self, device):
        super().__init__([device])


class BetweenGraphStrategy(Strategy):
    """A strategy of several processes (`TF_CONFIG`): `num_gpus_per_worker` replicas in each
    worker (`cluster` runs them); without a cluster, those replicas in this process, as
    `MirroredStrategy(num_gpus=num_gpus_per_worker)` (TF 1.x's local mode of it).

    Raises:
      EstimatorError: a negative `num_gpus_per_worker`.
    """

    def __init__(self, num_gpus_per_worker=0):
        if num_gpus_per_worker < 0:
            raise EstimatorError('%s: num_gpus_per_worker must be >= 0, got %r'
                                 % (type(self).__name__, num_gpus_per_worker))
        super().__init__(MirroredStrategy(num_gpus=num_gpus_per_worker).devices)
        self.num_gpus_per_worker = max(num_gpus_per_worker, 1)


class ParameterServerStrategy(BetweenGraphStrategy):
    """TF 1.12-1.14's `tf.contrib.distribute.ParameterServerStrategy(num_gpus_per_worker=0)`:
    the variables on the parameter servers, each worker's replicas synchronous among
    themselves and asynchronous to the other workers'."""


class CollectiveAllReduceStrategy(BetweenGraphStrategy):
    """TF 1.13-1.14's `tf.contrib.distribute.CollectiveAllReduceStrategy(num_gpus_per_worker=0,
    communication=AUTO)`: every replica of every worker synchronous, each step the mean of all
    their gradients (in a cluster through the parameter servers: see `cluster`)."""

    def __init__(self, num_gpus_per_worker=0, communication=None):
        super().__init__(num_gpus_per_worker)
        self.communication = communication


def replica_devices(strategy, what):
    """The devices of the replicas of `strategy` (one of this module's, or a
    `tf.distribute.Strategy`), or None for no strategy.

    Raises:
      EstimatorError: `strategy` is something else, or a strategy across processes.
    """
    if strategy is None:
        return None
    if isinstance(strategy, Strategy):
        return list(strategy.devices)
    extended = getattr(strategy, 'extended', None)
    devices = getattr(extended, 'worker_devices', None)
    if devices is None:
        raise EstimatorError('RunConfig %s is %s: expected a distribution strategy '
                             '(tf.contrib.distribute.MirroredStrategy, OneDeviceStrategy or '
                             'a tf.distribute strategy)' % (what, type(strategy).__name__))
    if any('/job:' in d and '/job:localhost' not in d for d in devices):
        raise EstimatorError('RunConfig %s is %s across processes, which towers-legacy does not '
                             'provide yet: use a strategy on this machine\'s devices'
                             % (what, type(strategy).__name__))
    return [tf.DeviceSpec.from_string(d).replace(job=None, replica=None, task=None).to_string()
            for d in devices]


def input_context(num_replicas):
    """The `tf.distribute.InputContext` an `input_fn` taking `input_context` gets: one input
    pipeline feeding `num_replicas` replicas (TF 1.13+)."""
    return tf.distribute.InputContext(num_input_pipelines=1, input_pipeline_id=0,
                                      num_replicas_in_sync=num_replicas)


def session_config(config, devices):
    """A copy of the session `config` that also makes the CPU devices `devices` name
    ('/cpu:1' needs two CPU devices); `config` itself when they name none past '/cpu:0'."""
    cpus = [tf.DeviceSpec.from_string(d) for d in devices or ()]
    count = max([spec.device_index + 1 for spec in cpus
                 if (spec.device_type or '').upper() == 'CPU' and spec.device_index is not None]
                or [0])
    if count <= config.device_count.get('CPU', 1):
        return config
    merged = tf.ConfigProto()
    merged.CopyFrom(config)
    merged.device_count['CPU'] = count
    return merged
