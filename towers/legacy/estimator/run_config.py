"""`tf.estimator.RunConfig`: where a run writes, how often, with which session, in which cluster.

Every argument of TF 1.15's `RunConfig` is taken and kept, read-only, with `replace` for a
changed copy. The cadence defaults are TF 1.x's: a checkpoint every 600 s when neither
`save_checkpoints_steps` nor `save_checkpoints_secs` is given (giving one turns the other off),
summaries every 100 steps, the `loss = ...` and `global_step/sec` lines every 100 steps, the 5
newest checkpoints kept. The cluster, this task and its role come from `TF_CONFIG` as TF 1.15
read it:

    {"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222"], "ps": ["host2:2222"]},
     "task": {"type": "worker", "index": 0}}

gives task_type 'worker', task_id 0, is_chief False, master 'grpc://host1:2222',
num_ps_replicas 1, num_worker_replicas 2 (the chief counts as a worker). Without `TF_CONFIG`
(or with an empty cluster) a run is one local worker, its chief.
"""
import copy
import json
import os

from towers.compat import tf
from towers.legacy.estimator.spec import EstimatorError

_USE_DEFAULT = object()
DEFAULT_CHECKPOINT_SECS = 600


class TaskType:
    """The task types of `TF_CONFIG` (TF 1.x's `tf.estimator.RunConfig` names)."""
    MASTER = 'master'
    PS = 'ps'
    WORKER = 'worker'
    CHIEF = 'chief'
    EVALUATOR = 'evaluator'


_SETTINGS = ('model_dir', 'tf_random_seed', 'save_summary_steps', 'save_checkpoints_steps',
             'save_checkpoints_secs', 'session_config', 'keep_checkpoint_max',
             'keep_checkpoint_every_n_hours', 'log_step_count_steps', 'train_distribute',
             'device_fn', 'protocol', 'eval_distribute', 'experimental_distribute',
             'experimental_max_worker_delay_secs', 'session_creation_timeout_secs')


def default_session_config():
    """The session config of TF 1.15's Estimator: soft placement, one meta-optimizer pass."""
    config = tf.ConfigProto(allow_soft_placement=True)
    config.graph_options.rewrite_options.meta_optimizer_iterations = 1  # RewriterConfig.ONE
    return config


class RunConfig:
    """TF 1.15's `tf.estimator.RunConfig` (arguments, properties and defaults).

    Raises:
      EstimatorError: both `save_checkpoints_steps` and `save_checkpoints_secs` given; a bad
        `TF_CONFIG` (naming it and what is wrong); a negative interval.
    """

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=_USE_DEFAULT, save_checkpoints_secs=_USE_DEFAULT,
                 session_config=None, keep_checkpoint_max=5,
                 keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 train_distribute=None, device_fn=None, protocol=None, eval_distribute=None,
                 experimental_distribute=None, experimental_max_worker_delay_secs=None,
                 session_creation_timeout_secs=7200):
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, DEFAULT_CHECKPOINT_SECS
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        elif save_checkpoints_steps is not None and save_checkpoints_secs is not None:
            raise EstimatorError('RunConfig: give save_checkpoints_steps or '
                                 'save_checkpoints_secs, not both (got %s and %s)'
                                 % (save_checkpoints_steps, save_checkpoints_secs))
        settings = dict(locals())
        for name in ('save_summary_steps', 'save_checkpoints_steps', 'save_checkpoints_secs',
                     'keep_checkpoint_max', 'log_step_count_steps'):
            if settings[name] is not None and settings[name] < 0:
                raise EstimatorError('RunConfig: %s must be >= 0, got %r'
                                     % (name, settings[name]))
        self._settings = {name: settings[name] for name in _SETTINGS}
        if model_dir is not None:
            self._settings['model_dir'] = os.fspath(model_dir)
        self._init_cluster(os.environ.get('TF_CONFIG', ''))

    def _init_cluster(self, text):
        """The cluster and this task's role, from a `TF_CONFIG` value (TF 1.15's rules)."""
        try:
            config = json.loads(text) if text else {}
        except ValueError as err:
            raise EstimatorError('TF_CONFIG is not JSON (%s): %r' % (err, text)) from None
        cluster = config.get('cluster') or {}
        task = config.get('task') or {}
        self._cluster_spec = tf.train.ClusterSpec(cluster)
        self._task_type = task.get('type')
        self._task_id = int(task.get('index', 0))
        self._evaluation_master = ''
        if not cluster or self._task_type is None:
            if cluster and len(self._cluster_spec.jobs) > 0:
                raise EstimatorError('TF_CONFIG has a cluster but no "task" ({"type": ..., '
                                     '"index": ...}) saying which task this is')
            self._task_type = self._task_type or TaskType.WORKER
            self._master, self._is_chief = '', True
            self._num_ps_replicas, self._num_worker_replicas = 0, 1
            self._global_id = 0
            return
        jobs = self._cluster_spec.jobs
        if self._task_type not in jobs and self._task_type != TaskType.EVALUATOR:
            raise EstimatorError('TF_CONFIG task type %r is not a job of its cluster (%s)'
                                 % (self._task_type, ', '.join(sorted(jobs))))
        if self._task_type != TaskType.EVALUATOR:
            listed = self._cluster_spec.num_tasks(self._task_type)
            if not 0 <= self._task_id < listed:
                raise EstimatorError('TF_CONFIG task %s %d is not in its cluster: "%s" lists '
                                     '%d task(s)' % (self._task_type, self._task_id,
                                                     self._task_type, listed))
        chiefs = [job for job in (TaskType.CHIEF, TaskType.MASTER) if job in jobs]
        if self._task_type == TaskType.EVALUATOR:
            self._master, self._is_chief = '', False
            self._num_ps_replicas = self._num_worker_replicas = 0
            self._global_id = None
            return
        address = self._cluster_spec.task_address(self._task_type, self._task_id)
        self._master = 'grpc://' + address
        self._num_ps_replicas = (self._cluster_spec.num_tasks(TaskType.PS)
                                 if TaskType.PS in jobs else 0)
        self._num_worker_replicas = sum(self._cluster_spec.num_tasks(job) for job in jobs
                                        if job in (TaskType.CHIEF, TaskType.MASTER,
                                                   TaskType.WORKER))
        self._is_chief = (self._task_type in (TaskType.CHIEF, TaskType.MASTER)
                          or (not chiefs and self._task_type == TaskType.WORKER
                              and self._task_id == 0))
        order = [TaskType.CHIEF, TaskType.MASTER, TaskType.WORKER, TaskType.PS]
        offset = sum(self._cluster_spec.num_tasks(job) for job in
                     order[:order.index(self._task_type)] if job in jobs)
        self._global_id = offset + self._task_id

    def replace(self, **kwargs):
        """A copy with the named settings replaced (only the constructor's arguments).

        Raises:
          EstimatorError: an argument RunConfig does not have.
        """
        unknown = sorted(set(kwargs) - set(_SETTINGS))
        if unknown:
            raise EstimatorError('RunConfig.replace: unknown argument(s) %s; RunConfig has %s'
                                 % (', '.join(unknown), ', '.join(_SETTINGS)))
        settings = dict(self._settings, **kwargs)
        if ('save_checkpoints_steps' in kwargs) != ('save_checkpoints_secs' in kwargs):
            # Replacing one interval turns the other off, as TF 1.x's replace did.
            other = ('save_checkpoints_secs' if 'save_checkpoints_steps' in kwargs
                     else 'save_checkpoints_steps')
            if kwargs.get('save_checkpoints_steps', kwargs.get('save_checkpoints_secs')):
                settings[other] = None
        new = copy.copy(self)
        new._settings = {}
        RunConfig.__init__(new, **settings)
        return new

    def __getattr__(self, name):
        settings = self.__dict__.get('_settings')
        if settings is not None and name in settings:
            return settings[name]
        raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, name))

    @property
    def session_config(self):
        return self._settings['session_config']

    @property
    def cluster_spec(self):
        return self._cluster_spec

    @property
    def task_type(self):
        return self._task_type

    @property
    def task_id(self):
        return self._task_id

    @property
    def master(self):
        return self._master

    @property
    def evaluation_master(self):
        return self._evaluation_master

    @property
    def is_chief(self):
        return self._is_chief

    @property
    def num_ps_replicas(self):
        return self._num_ps_replicas

    @property
    def num_worker_replicas(self):
        return self._num_worker_replicas

    @property
    def global_id_in_cluster(self):
        return self._global_id

    @property
    def service(self):
        return None

    def __repr__(self):
        return 'RunConfig(%s)' % ', '.join('%s=%r' % item for item in self._settings.items())
