"""`tf.contrib.tpu.RunConfig`, `TPUConfig` and `InputPipelineConfig` (also
`tensorflow.contrib.tpu.python.tpu.tpu_config`): TF 1.15's TPU run configuration, as BERT-era
programs built it before handing it to `TPUEstimator(use_tpu=False)`.

    run_config = tf.contrib.tpu.RunConfig(
        cluster=None, master=None, model_dir='/tmp/model', save_checkpoints_steps=1000,
        tpu_config=tf.contrib.tpu.TPUConfig(
            iterations_per_loop=1000, num_shards=8,
            per_host_input_for_training=tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2))

`RunConfig` is a `tf.estimator.RunConfig` (every argument of it, by keyword) with `tpu_config`,
`cluster` and `master`/`evaluation_master` as TF 1.15 had them; `TPUConfig` a namedtuple with
TF 1.15's fields, defaults and checks. Off a TPU only `iterations_per_loop` changes what a run
does: TPUEstimator logs its step rate every ceil(log_step_count_steps / iterations_per_loop)
steps, as TF 1.15's did.
"""
import collections
import json
import os
import re

from towers.legacy.estimator import run_config as core_run_config
from towers.legacy.estimator.spec import EstimatorError


class InputPipelineConfig:
    """How a TPU run's `input_fn` is called per host or per core (see `TPUConfig`)."""
    PER_SHARD_V1 = 1
    PER_HOST_V1 = 2
    PER_HOST_V2 = 3
    BROADCAST = 4
    SLICED = 5


_ITERATIONS = re.compile(r'^(?P<value>[1-9]\d*)(?P<suffix>[smh])?$')
_SECONDS = {'s': 1, 'm': 60, 'h': 3600}
IterationsPerLoop = collections.namedtuple('IterationsPerLoop', ['value', 'unit'])


def parse_iterations_per_loop(iterations_per_loop):
    """`TPUConfig.iterations_per_loop` (a positive count, or '<N>s', '<N>m', '<N>h') as
    `IterationsPerLoop(value, unit)`: unit 'count' or 'seconds'.

    Raises:
      EstimatorError: anything else.
    """
    match = _ITERATIONS.match(str(iterations_per_loop))
    if match is None:
        raise EstimatorError('TPUConfig iterations_per_loop=%r: expected a positive integer or '
                             'a time <N><s|m|h> such as 3600s, 60m, 1h' % (iterations_per_loop,))
    if match.group('suffix'):
        return IterationsPerLoop(int(match.group('value')) * _SECONDS[match.group('suffix')],
                                 'seconds')
    return IterationsPerLoop(int(match.group('value')), 'count')


def _check_positive_integer(value, name):
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise EstimatorError('%s must be a positive integer, got %r' % (name, value))


def _tpu_job_name_from_tf_config():
    """`TF_CONFIG`'s service.tpu_worker_job_name, as TF 1.15 read it; None without one."""
    try:
        config = json.loads(os.environ.get('TF_CONFIG') or '{}')
    except ValueError:
        return None
    return (config.get('service') or {}).get('tpu_worker_job_name')


class TPUConfig(collections.namedtuple('TPUConfig', [
        'iterations_per_loop', 'num_shards', 'num_cores_per_replica',
        'per_host_input_for_training', 'tpu_job_name', 'initial_infeed_sleep_secs',
        'input_partition_dims', 'eval_training_input_configuration',
        'experimental_host_call_every_n_steps'])):
    """TF 1.15's `tf.contrib.tpu.TPUConfig`: the TPU settings of a `RunConfig`.

    Fields (TF 1.15's defaults): iterations_per_loop=2 (steps, or '<N>s|m|h', per TPU loop),
    num_shards=None, num_cores_per_replica=None (1, 2, 4, 8, 16, 32, 64 or 128),
    per_host_input_for_training=True (stored as PER_HOST_V1; False as PER_SHARD_V1),
    tpu_job_name=None (TF_CONFIG's service.tpu_worker_job_name), initial_infeed_sleep_secs=None,
    input_partition_dims=None (PER_HOST_V2 with num_cores_per_replica only),
    eval_training_input_configuration=PER_HOST_V1 (or SLICED),
    experimental_host_call_every_n_steps=1.

    Raises:
      EstimatorError: a value TF 1.15 refused (naming the field and what it takes).
    """

    def __new__(cls, iterations_per_loop=2, num_shards=None, num_cores_per_replica=None,
                per_host_input_for_training=True, tpu_job_name=None,
                initial_infeed_sleep_secs=None, input_partition_dims=None,
                eval_training_input_configuration=InputPipelineConfig.PER_HOST_V1,
                experimental_host_call_every_n_steps=1):
        parse_iterations_per_loop(iterations_per_loop)
        if num_shards is not None:
            _check_positive_integer(num_shards, 'TPUConfig num_shards')
        if input_partition_dims is not None:
            if len(input_partition_dims) not in (1, 2):
                raise EstimatorError('TPUConfig input_partition_dims must be a list or tuple '
                                     'of one or two elements')
            if per_host_input_for_training is not InputPipelineConfig.PER_HOST_V2:
                raise EstimatorError('TPUConfig input_partition_dims is only supported with '
                                     'per_host_input_for_training=PER_HOST_V2')
            if num_cores_per_replica is None:
                raise EstimatorError('TPUConfig input_partition_dims requires '
                                     'num_cores_per_replica')
        if num_cores_per_replica is not None and num_cores_per_replica not in (
                1, 2, 4, 8, 16, 32, 64, 128):
            raise EstimatorError('TPUConfig num_cores_per_replica must be 1, 2, 4, 8, 16, 32, '
                                 '64 or 128; got %r' % (num_cores_per_replica,))
        if eval_training_input_configuration not in (InputPipelineConfig.PER_HOST_V1,
                                                     InputPipelineConfig.SLICED):
            raise EstimatorError('TPUConfig eval_training_input_configuration must be '
                                 'PER_HOST_V1 or SLICED; got %r'
                                 % (eval_training_input_configuration,))
        if per_host_input_for_training is False:
            per_host_input_for_training = InputPipelineConfig.PER_SHARD_V1
        elif per_host_input_for_training is True:
            per_host_input_for_training = InputPipelineConfig.PER_HOST_V1
        if initial_infeed_sleep_secs:
            _check_positive_integer(initial_infeed_sleep_secs,
                                    'TPUConfig initial_infeed_sleep_secs')
        return super().__new__(
            cls, iterations_per_loop, num_shards, num_cores_per_replica,
            per_host_input_for_training, tpu_job_name or _tpu_job_name_from_tf_config(),
            initial_infeed_sleep_secs, input_partition_dims, eval_training_input_configuration,
            experimental_host_call_every_n_steps)


class RunConfig(core_run_config.RunConfig):
    """TF 1.15's `tf.contrib.tpu.RunConfig`: a `tf.estimator.RunConfig` with TPU settings.

    Args:
      tpu_config: a `TPUConfig` (`TPUConfig()` by default).
      evaluation_master: the master evaluation runs on; `master` by default (unless
        `TF_CONFIG` makes this task an evaluator).
      master: the master training runs on ('' runs in this process); `TF_CONFIG`'s by default.
      cluster: a `tf.distribute.cluster_resolver.ClusterResolver` whose `master()` and
        `cluster_spec()` this run uses (not with `master`).
      **kwargs: `tf.estimator.RunConfig`'s arguments.

    Raises:
      EstimatorError: both `master` and `cluster` given; `tpu_config` not a `TPUConfig`.
    """

    def __init__(self, tpu_config=None, evaluation_master=None, master=None, cluster=None,
                 **kwargs):
        if master is not None and cluster is not None:
            raise EstimatorError('tf.contrib.tpu.RunConfig: both master and cluster are set; '
                                 'give one')
        if tpu_config is not None and not isinstance(tpu_config, TPUConfig):
            raise EstimatorError('tf.contrib.tpu.RunConfig tpu_config must be a '
                                 'tf.contrib.tpu.TPUConfig, got %s' % type(tpu_config).__name__)
        self._tpu_config = tpu_config or TPUConfig()
        self._cluster = cluster
        self._master_argument = master
        self._evaluation_master_argument = evaluation_master
        super().__init__(**kwargs)

    def _init_cluster(self, text):
        """`TF_CONFIG`'s cluster and task, then the masters and cluster given here (kept by
        `replace`, which runs this again)."""
        super()._init_cluster(text)
        if self._master_argument is not None:
            self._master = self._master_argument
        elif self._cluster is not None:
            self._master = self._cluster.master()
        if self._cluster is not None:
            self._cluster_spec = self._cluster.cluster_spec()
        if self._evaluation_master_argument is not None:
            self._evaluation_master = self._evaluation_master_argument
        elif (not self._evaluation_master
              and self.task_type != core_run_config.TaskType.EVALUATOR):
            self._evaluation_master = self._master

    def _maybe_overwrite_session_config_for_distributed_training(self):
        """Nothing: TF 1.15's TPU RunConfig kept `session_config` as given, also in a
        cluster (no device filters of the task added)."""

    @property
    def tpu_config(self):
        return self._tpu_config

    @property
    def cluster(self):
        return self._cluster

    def replace(self, **kwargs):
        """A copy with the named settings replaced: `tf.estimator.RunConfig`'s, and
        `tpu_config`."""
        tpu_config = kwargs.pop('tpu_config', self._tpu_config)
        new = super().replace(**kwargs)
        new._tpu_config = tpu_config
        return new

    def __repr__(self):
        return 'tf.contrib.tpu.%s, tpu_config=%r)' % (super().__repr__()[:-1],
                                                       self._tpu_config)

