"""`train_and_evaluate` across processes: the tasks of `TF_CONFIG` as TF 1.x's Estimator ran them,
on this project's cluster roles (`towers.cluster.roles`).

    TF_CONFIG='{"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222"],
                            "ps": ["host2:2222"]},
                "task": {"type": "worker", "index": 0}}'

- `ps`: serves the variables (`ParameterServer`) until every chief and worker has reported its
  end, then exits 0 (TF 1.x's parameter servers served until they were killed).
- `chief` (or `master`) and `worker`: start their server and train between-graph and
  asynchronously, as TF 1.x did: each builds the `model_fn`'s graph with the variables spread
  over the parameter servers (`VariablePlacement`, round robin as TF 1.x's
  `replica_device_setter`), the rest on itself, and runs its steps
  until the shared global step reaches `TrainSpec.max_steps`; the chief initialises or restores
  the variables and writes the checkpoints and summaries. Neither evaluates. With
  `RunConfig(train_distribute=ParameterServerStrategy(num_gpus_per_worker=N))` each worker
  runs a replica of the `model_fn` on each of its N devices (`replicas`: one update of their
  mean gradients, workers asynchronous); with `CollectiveAllReduceStrategy(num_gpus_per_worker=
  N)` the workers are synchronous too: every step applies the mean of every replica of every
  worker, as TF 1.x's all-reduce did, here through the parameter servers
  (`tf.train.SyncReplicasOptimizer`, towers' synchronous cluster), which the cluster must
  therefore list.
- `evaluator`: joins no server; after `EvalSpec.start_delay_secs` it evaluates each new
  checkpoint the chief writes into `model_dir` (at most one per `throttle_secs`) and runs the
  exporters, and exits once it has evaluated a checkpoint at `max_steps`.

The cluster's job names follow `towers.cluster.tf_config` (the chief is worker 0 of the
runtime, the workers follow it). A lost task is what the project's cluster handles today: a
killed worker or chief ends its process; the launcher (`scripts/launch_local_cluster.py`) then
stops the others (the chief saving its checkpoint) and exits with the lost task's status, and a
rerun resumes from the chief's newest checkpoint; a lost parameter server ends every worker
within `PS_TIMEOUT_SECS` with one line naming it.
"""
import collections
import os
import time

from towers.cluster import tf_config
from towers.cluster.roles import PS_JOB, WORKER_JOB, ParameterServer, Worker
from towers.compat import tf
from towers.errors import TowersError
from towers.legacy.estimator import distribute
from towers.legacy.estimator.run_config import TaskType
from towers.legacy.estimator.spec import EstimatorError
from towers.training import preemption

EVALUATOR = TaskType.EVALUATOR
# The task types TF 1.15's train_and_evaluate ran, in the order its error listed them.
TASK_TYPES = (TaskType.CHIEF, EVALUATOR, TaskType.MASTER, TaskType.PS, TaskType.WORKER)
# How long a worker waits for a parameter server that stopped answering.
PS_TIMEOUT_SECS = 180.0
# How often an idle evaluator looks for a new checkpoint.
POLL_SECS = 1.0

Placement = collections.namedtuple(
    'Placement', ['master', 'is_chief', 'device_fn', 'session_config', 'hooks',
                  'replica_devices', 'ps_device', 'wrap_optimizer'])
Placement.__doc__ = """Where a training graph runs.

Attributes:
  master, is_chief: the session target; whether this process is the chief.
  device_fn: the device function the graph is built under (None: none).
  session_config: its `tf.ConfigProto`.
  hooks: a function () -> the role's session hooks, called once the graph is built.
  replica_devices: None, or the devices of the `model_fn`'s replicas (`replicas`).
  ps_device: where the replicas' variables live (a device or a device function).
  wrap_optimizer: None, or optimizer -> the optimizer that applies the replicas' update.
"""


def local_placement(config, session_config, replica_devices=None):
    """The placement of a run in this process: `RunConfig`'s master, chief and `device_fn`,
    the replicas of its `train_distribute` on `replica_devices`."""
    return Placement(config.master, config.is_chief, config.device_fn, session_config, list,
                     replica_devices, '/cpu:0', None)


def worker_placement(role, setup, session_config, replicated):
    """The placement of a chief or worker `role` started with `setup` (its `DeviceSetup`): its
    server, the variables over the parameter servers, the role's device filters; with
    `replicated`, a replica of the `model_fn` on each of its tower devices."""
    merged = tf.ConfigProto()
    merged.CopyFrom(session_config)
    # RunConfig's device filters name TF_CONFIG's jobs; the runtime's jobs are the role's.
    merged.ClearField('device_filters')
    merged.MergeFrom(setup.config)
    # The graph is built under `setup.ps_device` (replica_device_setter's merge): an op with
    # its own `tf.device` keeps it (a SyncReplicasOptimizer's accumulators and token queue on
    # the parameter server, the replicas on their devices).
    return Placement(role.master, role.is_chief, setup.ps_device,
                     merged, lambda: list(role.hooks),
                     list(setup.tower_devices) if replicated else None, setup.ps_device,
                     role.wrap_optimizer if replicated else None)


def run(estimator, train_spec, eval_spec, evaluate_newest):
    """Plays this process's task of `TF_CONFIG` (see the module docstring).

    Args:
      estimator: the `Estimator`.
      train_spec, eval_spec: the `TrainSpec` and `EvalSpec`.
      evaluate_newest: a function () -> the metrics of the newest checkpoint, evaluated and
        exported unless it was already, or None when there is none yet.

    Returns:
      (metrics, export results) of the evaluator's last evaluation; (None, []) elsewhere.

    Raises:
      EstimatorError: a task type TF 1.15 did not run (its words: "Task type ... is not
        supported"); `TF_CONFIG` describes no cluster this task can be part of; a
        distribution strategy in a cluster.
      SystemExit: the task stopped on SIGTERM or Ctrl-C (143, 130).
    """
    config = estimator.config
    if config.task_type not in TASK_TYPES:
        raise EstimatorError('Task type %s is not supported. Supported task types are %s '
                             '(TF_CONFIG\'s "task")' % (config.task_type, list(TASK_TYPES)))
    if config.task_type == EVALUATOR:
        return _evaluate_continuously(train_spec, eval_spec, evaluate_newest)
    strategy = config.train_distribute
    if strategy is not None and not isinstance(strategy, distribute.BetweenGraphStrategy):
        raise EstimatorError(
            'RunConfig train_distribute=%s in a TF_CONFIG cluster is not provided by '
            'towers-legacy: train the cluster with tf.contrib.distribute.'
            'ParameterServerStrategy or CollectiveAllReduceStrategy (num_gpus_per_worker=N), '
            'or with no strategy' % type(strategy).__name__)
    try:
        cluster = tf_config.cluster_flags(os.environ.get(tf_config.VARIABLE, ''))
    except TowersError as err:
        raise EstimatorError(str(err)) from None
    spec = tf.train.ClusterSpec({PS_JOB: cluster['ps_hosts'],
                                 WORKER_JOB: cluster['worker_hosts']})
    with preemption.stop_signals() as stop:
        if cluster['job_name'] == PS_JOB:
            status = ParameterServer(spec, cluster['task_index']).serve(stop)
            if status:
                raise SystemExit(status)
            return None, []
        role = Worker(spec, cluster['task_index'],
                      sync=isinstance(strategy, distribute.CollectiveAllReduceStrategy))
        setup = role.configure_devices(strategy.num_gpus_per_worker if strategy else 1)
        with role.watch_parameter_servers(PS_TIMEOUT_SECS):
            try:
                with estimator.placed(lambda session_config: worker_placement(
                        role, setup, session_config, replicated=strategy is not None)):
                    estimator.train(train_spec.input_fn, hooks=list(train_spec.hooks),
                                    max_steps=train_spec.max_steps)
            finally:
                role.finish(stopped=stop.requested)
    return None, []


def _evaluate_continuously(train_spec, eval_spec, evaluate_newest):
    """The evaluator's loop: every new checkpoint after `start_delay_secs`, at most one per
    `throttle_secs`, until one at `max_steps` (or a stop)."""
    metrics, exports = None, []
    with preemption.stop_signals() as stop:
        _sleep(eval_spec.start_delay_secs, stop)
        while not stop.requested:
            started = time.monotonic()
            result = evaluate_newest()
            if result is not None:
                metrics, exports = result
                if train_spec.max_steps and metrics['global_step'] >= train_spec.max_steps:
                    tf.logging.info('Exiting evaluation, global_step=%s >= train max_steps=%s',
                                    metrics['global_step'], train_spec.max_steps)
                    break
                _sleep(eval_spec.throttle_secs - (time.monotonic() - started), stop)
            else:
                _sleep(POLL_SECS, stop)
    if stop.requested:
        raise SystemExit(stop.exit_status)
    return metrics, exports


def _sleep(seconds, stop):
    end = time.monotonic() + max(0.0, seconds)
    while not stop.requested and time.monotonic() < end:
        time.sleep(min(0.2, end - time.monotonic()))

