"""`tf.contrib.learn.RunConfig` (also `tensorflow.contrib.learn.python.learn.run_config` and
`...learn.estimators.run_config`): TF 1.x's contrib.learn run configuration, as a
`tf.estimator.RunConfig` that an `Estimator` takes.

    config = tf.contrib.learn.RunConfig(model_dir='/tmp/model', gpu_memory_fraction=0.5)
    config.is_chief, config.num_worker_replicas, config.tf_config, config.uid()

Its arguments are contrib.learn's (`master`, `num_cores`, `log_device_placement`,
`gpu_memory_fraction`, `evaluation_master`, ...), and so is its reading of `TF_CONFIG`, which
differs from `tf.estimator.RunConfig`'s: without a task `task_type` is None, `is_chief` is
True for task 0, `num_worker_replicas` counts the 'worker' and 'master' jobs only (0 without a
cluster; TF 1.x programs wrote `num_worker_replicas or 1`), a one-task cluster runs locally
(`master` ''), `environment` ('local' unless `TF_CONFIG` says 'cloud') decides whether a
'master' or a 'worker' task 0 is the chief, and `TF_CONFIG`'s 'model_dir' is the default
`model_dir`. `uid()` names the settings that make two configurations one run (those a user may
change, `_DEFAULT_UID_WHITE_LIST`, left out), for `learn_runner`'s check that the Estimator got
the configuration it was given. It subclasses like TF 1.x's (programs overrode `uid`).
"""
import json
import os

from towers.compat import tf
from towers.legacy.estimator import run_config as core_run_config
from towers.legacy.estimator.spec import EstimatorError

# The settings a user may change without making it another run: `uid` leaves them out.
_DEFAULT_UID_WHITE_LIST = [
    'tf_random_seed', 'save_summary_steps', 'save_checkpoints_steps', 'save_checkpoints_secs',
    'session_config', 'keep_checkpoint_max', 'keep_checkpoint_every_n_hours',
    'log_step_count_steps',
]
_USE_DEFAULT = object()


class Environment:
    """Where a run happens, from `TF_CONFIG`'s "environment"."""
    CLOUD = 'cloud'
    GOOGLE = 'google'
    LOCAL = 'local'


class TaskType:
    """The task types of contrib.learn's `TF_CONFIG`."""
    MASTER = 'master'
    PS = 'ps'
    WORKER = 'worker'


def _tf_config():
    text = os.environ.get('TF_CONFIG') or '{}'
    try:
        return json.loads(text)
    except ValueError as err:
        raise EstimatorError('TF_CONFIG is not JSON (%s): %r' % (err, text)) from None


class RunConfig(core_run_config.RunConfig):
    """TF 1.x's `tf.contrib.learn.RunConfig`.

    Args (TF 1.x's):
      master: the TensorFlow master; by default `TF_CONFIG`'s address of this task, or '' (local).
      num_cores: threads of each of the session's pools (`tf_config`), 0 for TensorFlow's choice.
      log_device_placement: whether `tf_config` logs where each op runs.
      gpu_memory_fraction: the share of each GPU's memory `tf_config` lets the process take.
      tf_random_seed, save_summary_steps, save_checkpoints_secs, save_checkpoints_steps,
      keep_checkpoint_max, keep_checkpoint_every_n_hours, log_step_count_steps, model_dir,
      session_config: as `tf.estimator.RunConfig`'s; a checkpoint every 600 s unless
        `save_checkpoints_steps` is given.
      evaluation_master: the master evaluation runs on.

    Raises:
      EstimatorError: `TF_CONFIG` is not JSON, names a task its cluster lacks, or gives a
        'model_dir' other than `model_dir`.
    """

    def __init__(self, master=None, num_cores=0, log_device_placement=False,
                 gpu_memory_fraction=1, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_secs=_USE_DEFAULT, save_checkpoints_steps=None,
                 keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000,
                 log_step_count_steps=100, evaluation_master='', model_dir=None,
                 session_config=None):
        self._master_argument = master
        self._evaluation_master_argument = evaluation_master or ''
        self._tf_config_proto = tf.ConfigProto(
            log_device_placement=log_device_placement,
            inter_op_parallelism_threads=num_cores, intra_op_parallelism_threads=num_cores,
            gpu_options=tf.GPUOptions(per_process_gpu_memory_fraction=gpu_memory_fraction))
        intervals = {}
        if save_checkpoints_steps is not None:
            intervals['save_checkpoints_steps'] = save_checkpoints_steps
        if save_checkpoints_secs is not _USE_DEFAULT:
            intervals['save_checkpoints_secs'] = save_checkpoints_secs
        super().__init__(
            model_dir=_model_dir(model_dir), tf_random_seed=tf_random_seed,
            save_summary_steps=save_summary_steps, session_config=session_config,
            keep_checkpoint_max=keep_checkpoint_max,
            keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
            log_step_count_steps=log_step_count_steps, **intervals)

    def _init_cluster(self, text):
        """The cluster and this task's role, by contrib.learn's rules (see the module)."""
        config = _tf_config()
        task = config.get('task') or {}
        self._task_type = task.get('type')
        self._task_id = self.get_task_id()
        self._cluster_spec = tf.train.ClusterSpec(config.get('cluster') or {})
        self._master = (self._master_argument if self._master_argument is not None
                        else _master(self._cluster_spec, self._task_type, self._task_id))
        jobs = self._cluster_spec.as_dict()
        self._num_ps_replicas = len(jobs.get(TaskType.PS, []))
        self._num_worker_replicas = (len(jobs.get(TaskType.WORKER, []))
                                     + len(jobs.get(TaskType.MASTER, [])))
        self._environment = config.get('environment', Environment.LOCAL)
        if self._task_type is None:
            self._is_chief = self._task_id == 0
        elif self._environment == Environment.CLOUD:
            self._is_chief = self._task_type == TaskType.MASTER and self._task_id == 0
        else:
            self._is_chief = self._task_type == TaskType.WORKER and self._task_id == 0
        self._evaluation_master = self._evaluation_master_argument
        self._global_id = self._task_id

    @staticmethod
    def get_task_id():
        """`TF_CONFIG`'s task index, 0 without one."""
        index = (_tf_config().get('task') or {}).get('index')
        return int(index) if index else 0

    @property
    def environment(self):
        return self._environment

    @property
    def tf_config(self):
        """The `tf.ConfigProto` of `num_cores`, `log_device_placement` and
        `gpu_memory_fraction` (what TF 1.x's `Experiment` started a server with)."""
        return self._tf_config_proto

    def uid(self, whitelist=None):
        """A string of every setting and cluster property but those in `whitelist`
        (`_DEFAULT_UID_WHITE_LIST` by default): equal for two configurations of one run."""
        state = dict(self._settings)
        state.update({name.lstrip('_'): value for name, value in vars(self).items()
                      if name != '_settings' and not name.startswith('__')})
        state['cluster_spec'] = sorted(self._cluster_spec.as_dict().items())
        for name in _DEFAULT_UID_WHITE_LIST if whitelist is None else whitelist:
            state.pop(name, None)
        return ', '.join('%s=%r' % item for item in sorted(state.items()))

    def __repr__(self):
        return 'tf.contrib.learn.' + super().__repr__()


def _model_dir(model_dir):
    """`model_dir`, or `TF_CONFIG`'s 'model_dir' when it is None; they must agree."""
    from_tf_config = _tf_config().get('model_dir')
    if from_tf_config is not None and model_dir is not None and from_tf_config != model_dir:
        raise EstimatorError('RunConfig: model_dir %s differs from TF_CONFIG\'s "model_dir" %s; '
                             'give one, or the same in both' % (model_dir, from_tf_config))
    return model_dir or from_tf_config


def _master(cluster_spec, task_type, task_id):
    """This task's 'grpc://address' in `cluster_spec`; '' for no cluster, a one-task cluster
    (which runs locally) or no task type."""
    jobs = cluster_spec.jobs
    if not jobs or not task_type:
        return ''
    if len(jobs) == 1 and cluster_spec.num_tasks(jobs[0]) == 1:
        return ''
    if task_type not in jobs:
        raise EstimatorError('TF_CONFIG task type %r is not a job of its cluster (%s)'
                             % (task_type, ', '.join(sorted(jobs))))
    addresses = cluster_spec.job_tasks(task_type)
    if not 0 <= task_id < len(addresses):
        raise EstimatorError('TF_CONFIG task %s %d is not in its cluster: "%s" lists %d '
                             'task(s)' % (task_type, task_id, task_type, len(addresses)))
    return 'grpc://' + addresses[task_id]
