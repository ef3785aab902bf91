"""`tf.estimator.RunConfig`: where a run writes, how often, with which session, in which cluster.

Every argument of TF 1.15's `RunConfig` is taken, checked as TF 1.15 checked it (a
`ValueError` naming the setting: `model_dir=''`, a negative interval, `tf_random_seed=1.0`,
`keep_checkpoint_every_n_hours=0`, a `device_fn` that takes anything but `op`, ...) and kept,
read-only, with `replace` for a changed copy. The cadence defaults are TF 1.x's: a checkpoint
every 600 s when neither `save_checkpoints_steps` nor `save_checkpoints_secs` is given (giving
one turns the other off), summaries every 100 steps, the `loss = ...` and `global_step/sec`
lines every 100 steps, the 5 newest checkpoints kept.

The cluster, this task and its role come from `TF_CONFIG` by TF 1.15's rules:

    {"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222"], "ps": ["host2:2222"]},
     "task": {"type": "worker", "index": 0}}

gives task_type 'worker', task_id 0, is_chief False, master 'grpc://host1:2222',
num_ps_replicas 1, num_worker_replicas 2 (the chief counts as a worker), global_id_in_cluster 1
(the chief first, then the other jobs by name, the parameter servers last), and, unless
`session_config` is given, a session config whose device filters show the task only the
parameter servers. A cluster has one "chief" (or, the older form, one "master", and then no
chief and no evaluator); a one-task cluster runs in-process (master ''). An "evaluator" is not
part of the training: its `cluster_spec` is empty. Without a cluster a run is one local worker,
its chief. `TF_CONFIG` may also give "model_dir" (the default `model_dir`), "session_master",
"eval_session_master" (the evaluator's) and "service" (a dict, returned by `service`).
"""
import copy
import json
import os

from towers.compat import tf
from towers.legacy.estimator.calls import fn_args
from towers.legacy.estimator.spec import EstimatorError, EstimatorTypeError

_USE_DEFAULT = object()
DEFAULT_CHECKPOINT_SECS = 600
# TF 1.15's words, which programs matched.
_BOTH_INTERVALS = '`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set.'


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


def _is_int(value):
    return isinstance(value, int)


# Setting -> (what a value other than None must satisfy, TF 1.15's words when it does not).
_CHECKS = {
    'model_dir': (bool, 'model_dir should be non-empty'),
    'save_summary_steps': (lambda steps: steps >= 0, 'save_summary_steps should be >= 0'),
    'save_checkpoints_steps': (lambda steps: steps >= 0,
                               'save_checkpoints_steps should be >= 0'),
    'save_checkpoints_secs': (lambda secs: secs >= 0, 'save_checkpoints_secs should be >= 0'),
    'session_config': (lambda config: isinstance(config, tf.ConfigProto),
                       'session_config must be instance of ConfigProto'),
    'keep_checkpoint_max': (lambda count: count >= 0, 'keep_checkpoint_max should be >= 0'),
    'keep_checkpoint_every_n_hours': (lambda hours: hours > 0,
                                      'keep_checkpoint_every_n_hours should be > 0'),
    'log_step_count_steps': (lambda steps: steps > 0, 'log_step_count_steps should be > 0'),
    'tf_random_seed': (_is_int, 'tf_random_seed must be integer'),
    'experimental_max_worker_delay_secs': (
        _is_int, 'experimental_max_worker_delay_secs must be an integer if set'),
    'session_creation_timeout_secs': (lambda secs: secs > 0,
                                      'session_creation_timeout_secs should be > 0'),
    'device_fn': (lambda fn: callable(fn) and set(fn_args(fn)) == {'op'},
                  'device_fn must be callable with exactly one argument "op"'),
    'protocol': (lambda protocol: protocol in ('grpc', 'grpc+verbs'),
                 'protocol should be grpc or grpc+verbs'),
}


def _check(settings):
    """Raises `EstimatorError` (TF 1.15's `ValueError`) for the first bad value of `settings`."""
    for name, (valid, expected) in _CHECKS.items():
        value = settings[name]
        if value is not None and not valid(value):
            raise EstimatorError('RunConfig: %s, got %r' % (expected, value))


def default_session_config():
    """The session config of TF 1.15's Estimator: soft placement, one meta-optimizer pass."""
    config = tf.ConfigProto(allow_soft_placement=True)
    config.graph_options.rewrite_options.meta_optimizer_iterations = 1  # RewriterConfig.ONE
    return config


def _device_filters(task_type, task_id):
    """The devices a task of a between-graph cluster sees (TF 1.15's), None for other tasks."""
    return {TaskType.MASTER: ['/job:ps', '/job:master'],
            TaskType.CHIEF: ['/job:ps', '/job:chief'],
            TaskType.WORKER: ['/job:ps', '/job:worker/task:%d' % task_id],
            TaskType.PS: ['/job:ps', '/job:worker', '/job:chief', '/job:master'],
            }.get(task_type)


def _read_tf_config():
    """`TF_CONFIG` as a dict ({} when unset or empty)."""
    text = os.environ.get('TF_CONFIG', '')
    try:
        config = json.loads(text) if text else {}
    except ValueError as err:
        raise EstimatorError('TF_CONFIG is not JSON (%s): %r' % (err, text)) from None
    if config:
        tf.logging.info('TF_CONFIG environment variable: %s', config)
    return config


def _model_dir(model_dir, tf_config):
    """`model_dir`, or `TF_CONFIG`'s "model_dir" when it is None; they must agree."""
    from_config = tf_config.get('model_dir')
    if from_config is None or model_dir == '':
        return model_dir  # '' is refused with the other settings.
    if from_config == '':
        raise EstimatorError('RunConfig: model_dir in TF_CONFIG should be non-empty: give a '
                             'directory or leave "model_dir" out')
    if model_dir is not None and model_dir != from_config:
        raise EstimatorError(
            'RunConfig: `model_dir` provided in RunConfig construct, if set, must have the same '
            'value as the model_dir in TF_CONFIG. model_dir: %s, TF_CONFIG["model_dir"]: %s'
            % (model_dir, from_config))
    tf.logging.info('Using model_dir in TF_CONFIG: %s', from_config)
    return from_config


class RunConfig:
    """TF 1.15's `tf.estimator.RunConfig` (arguments, properties, defaults and checks).

    Raises:
      EstimatorError (a `ValueError`): both `save_checkpoints_steps` and
        `save_checkpoints_secs` given; a setting TF 1.15 refused; a bad `TF_CONFIG` (naming
        what is wrong, in TF 1.15's words).
      EstimatorTypeError (a `TypeError`): `TF_CONFIG`'s "service" is not a dict.
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
            raise EstimatorError('RunConfig: %s Got save_checkpoints_steps=%s and '
                                 'save_checkpoints_secs=%s: give one'
                                 % (_BOTH_INTERVALS, save_checkpoints_steps,
                                    save_checkpoints_secs))
        settings = dict(locals())
        self._settings = {name: settings[name] for name in _SETTINGS}
        tf_config = _read_tf_config()
        self._settings['model_dir'] = _model_dir(
            os.fspath(model_dir) if model_dir is not None else None, tf_config)
        _check(self._settings)
        self._service = tf_config.get('service')
        if self._service is not None and not isinstance(self._service, dict):
            raise EstimatorTypeError('If "service" is set in TF_CONFIG, it must be a dict. '
                                     'Given %s' % type(self._service).__name__)
        self._init_cluster(tf_config)

    def _init_cluster(self, tf_config):
        """The cluster and this task's role, from the `TF_CONFIG` dict `tf_config` (see the
        module docstring)."""
        self._cluster_spec = tf.train.ClusterSpec(tf_config.get('cluster') or {})
        task = tf_config.get('task') or {}
        if not self._cluster_spec.jobs:
            self._init_local(task, tf_config)
        else:
            self._init_task(task, tf_config)
        self._maybe_overwrite_session_config_for_distributed_training()

    def _init_local(self, task, tf_config):
        """A run without a cluster: one worker, its own chief."""
        self._task_type = task.get('type', TaskType.WORKER)
        self._task_id = int(task.get('index', 0))
        if self._task_type != TaskType.WORKER:
            raise EstimatorError('If "cluster" is not set in TF_CONFIG, task type must be '
                                 'WORKER; TF_CONFIG\'s task type is %r' % self._task_type)
        if self._task_id != 0:
            raise EstimatorError('If "cluster" is not set in TF_CONFIG, task index must be 0; '
                                 'TF_CONFIG\'s task index is %d' % self._task_id)
        self._master = tf_config.get('session_master', '')
        self._evaluation_master = tf_config.get('eval_session_master', '')
        self._is_chief = True
        self._num_ps_replicas, self._num_worker_replicas = 0, 1
        self._global_id = 0

    def _init_task(self, task, tf_config):
        """This task's role in the cluster of `TF_CONFIG`."""
        spec = self._cluster_spec
        jobs = spec.jobs
        chief = TaskType.MASTER if TaskType.MASTER in jobs else TaskType.CHIEF
        if chief == TaskType.MASTER and TaskType.CHIEF in jobs:
            raise EstimatorError('TF_CONFIG: If `master` node exists in `cluster`, job `chief` '
                                 'is not supported (the cluster has both)')
        if chief not in jobs:
            raise EstimatorError('If "cluster" is set in TF_CONFIG, it must have one '
                                 '"chief" node; its jobs are %s' % ', '.join(jobs))
        if spec.num_tasks(chief) > 1:
            raise EstimatorError('The "cluster" in TF_CONFIG must have only one "%s" '
                                 'node. It lists %s' % (chief, ', '.join(spec.job_tasks(chief))))
        self._task_type, index = task.get('type'), task.get('index')
        if not self._task_type:
            raise EstimatorError('If "cluster" is set in TF_CONFIG, task type must be '
                                 'set: add "task": {"type": ..., "index": ...}')
        if index is None:
            raise EstimatorError('If "cluster" is set in TF_CONFIG, task index must '
                                 'be set: add "index" to "task"')
        self._task_id = int(index)
        if self._task_id < 0:
            raise EstimatorError('TF_CONFIG: Task index must be non-negative number, got %d'
                                 % self._task_id)
        if self._task_type == TaskType.EVALUATOR:
            if chief == TaskType.MASTER:
                raise EstimatorError('TF_CONFIG: If `master` node exists in `cluster`, '
                                     'task_type `evaluator` is not supported.')
            self._init_evaluator(tf_config)
            return
        if self._task_type not in jobs:
            raise EstimatorError('TF_CONFIG: %s is not a valid task_type in the cluster_spec, '
                                 'whose jobs are %s' % (self._task_type, ', '.join(jobs)))
        if self._task_id >= spec.num_tasks(self._task_type):
            raise EstimatorError('TF_CONFIG: %d is not a valid task_id for task_type %s in the '
                                 'cluster_spec, which lists %d' % (
                                     self._task_id, self._task_type,
                                     spec.num_tasks(self._task_type)))
        if 'session_master' in tf_config:
            self._master = tf_config['session_master']
        elif len(jobs) == 1 and spec.num_tasks(jobs[0]) == 1:
            self._master = ''  # A cluster of one task runs in-process.
        else:
            self._master = 'grpc://' + spec.task_address(self._task_type, self._task_id)
        self._evaluation_master = ''
        self._is_chief = self._task_type == chief
        self._num_ps_replicas = spec.num_tasks(TaskType.PS) if TaskType.PS in jobs else 0
        self._num_worker_replicas = 1 + (spec.num_tasks(TaskType.WORKER)
                                         if TaskType.WORKER in jobs else 0)
        order = ([chief] + sorted(job for job in jobs if job not in (chief, TaskType.PS))
                 + ([TaskType.PS] if TaskType.PS in jobs else []))
        self._global_id = self._task_id + sum(
            spec.num_tasks(job) for job in order[:order.index(self._task_type)])

    def _init_evaluator(self, tf_config):
        """The evaluator: outside the training cluster, never the chief."""
        self._cluster_spec = tf.train.ClusterSpec({})
        self._master = ''
        self._evaluation_master = tf_config.get('eval_session_master', '')
        self._is_chief = False
        self._num_ps_replicas = self._num_worker_replicas = 0
        self._global_id = None

    def _maybe_overwrite_session_config_for_distributed_training(self):
        """Without a `session_config`, a between-graph cluster task's (TF 1.15's hook, which
        subclasses overrode): the defaults, with the task's device filters."""
        filters = _device_filters(self._task_type, self._task_id)
        if self.session_config is None and self._cluster_spec.jobs and filters:
            config = default_session_config()
            config.device_filters.extend(filters)
            self._settings['session_config'] = config

    def replace(self, **kwargs):
        """A copy with the named settings replaced (only the constructor's arguments; the
        cluster stays). Replacing one checkpoint interval with a value turns the other off.

        Raises:
          EstimatorError (a `ValueError`): an argument RunConfig does not have or cannot
            replace; both intervals given; a value the constructor refuses.
        """
        unknown = [name for name in kwargs if name not in _SETTINGS]
        if unknown:
            raise EstimatorError('RunConfig.replace: Replacing %s is not supported. Allowed '
                                 'properties are %s' % (', '.join(unknown), ', '.join(_SETTINGS)))
        settings = dict(self._settings, **kwargs)
        steps, secs = settings['save_checkpoints_steps'], settings['save_checkpoints_secs']
        if 'save_checkpoints_steps' in kwargs and 'save_checkpoints_secs' in kwargs:
            if steps is not None and secs is not None:
                raise EstimatorError('RunConfig.replace: %s Got save_checkpoints_steps=%s and '
                                     'save_checkpoints_secs=%s' % (_BOTH_INTERVALS, steps, secs))
        elif 'save_checkpoints_steps' in kwargs and steps is not None:
            settings['save_checkpoints_secs'] = None
        elif 'save_checkpoints_secs' in kwargs and secs is not None:
            settings['save_checkpoints_steps'] = None
        _check(settings)
        new = copy.copy(self)
        new._settings = settings
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
        """`TF_CONFIG`'s "service" dict, None without one."""
        return self._service

    def __repr__(self):
        return 'RunConfig(%s)' % ', '.join('%s=%r' % item for item in self._settings.items())

    def logged(self):
        """This config as TF 1.15's Estimator logged it (`Using config: {...}`, the config's
        `vars`): TF 1.15's private attribute names ('_model_dir', ...) -> values, in its order."""
        values = {'_' + name: value for name, value in self._settings.items()}
        values.update(_service=self.service, _cluster_spec=self.cluster_spec,
                      _task_type=self.task_type, _task_id=self.task_id,
                      _global_id_in_cluster=self.global_id_in_cluster, _master=self.master,
                      _evaluation_master=self.evaluation_master, _is_chief=self.is_chief,
                      _num_ps_replicas=self.num_ps_replicas,
                      _num_worker_replicas=self.num_worker_replicas)
        return values
