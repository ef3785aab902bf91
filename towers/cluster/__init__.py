"""Training across machines on TensorFlow's distributed runtime: parameter servers and workers.

Between-graph replication as the TF1 distributed tutorials did it: every process runs a
`tf.distribute.Server` of one `ClusterSpec`; the parameter servers (job 'ps') hold the
variables; each worker builds the whole graph itself, its towers on its own devices, averages
their gradients locally and sends them to the parameter servers. With `--sync_replicas` (the
default) a `SyncReplicasOptimizer` aggregates one update per step from all workers; without it,
each worker applies its own updates (asynchronous training).

A training script hands its work to `run_task`, which plays this process's role:

    def work(role, setup):                 # setup: this process's devices (a DeviceSetup)
        return towers.fit(recipe, input_fn, setup, role, ...)   # a TrainResult
    return cluster.run_task(args, work)    # args parsed with towers.flags.add_cluster_flags

Without cluster flags the role is a `SingleProcess`, whose members reproduce the single-process
behaviour, so the same lines serve both. Without cluster flags but with a `TF_CONFIG`
environment variable (Kubeflow's TFJob, managed training services), the cluster is TF_CONFIG's
(`towers.cluster.tf_config`); flags win when both are given.

Shutdown: a parameter server serves until every worker has called `finish`, then returns, so
no process has to be killed at the end. Each worker's `finish` enqueues its task index on a
queue that lives on each parameter server (TensorFlow's own queues, no other channel).

Reach: TensorFlow's server listens on every network interface whatever the cluster spec names,
and runs any op for whoever connects to it; each task logs once, when its server starts, where it
listens and who can reach it, and the local launcher runs its tasks in a network of their own
whose only interface is loopback (`isolation`).

Faults: SIGTERM or SIGINT (`towers.training.preemption`) stops every role cleanly and boundedly: a
worker after its step (the chief with a last checkpoint; a step still blocked `--stop_grace_secs`
later is cancelled), reporting to the parameter servers that it stopped; a parameter server
once every worker has finished or stopped, or `2 * --stop_grace_secs` after the signal. The
status is 128 + the signal. A parameter server lost mid-run (`ParameterServerWatch`) ends every
worker within `--ps_timeout_secs` with one error line naming it; restarted, the job resumes
from the chief's newest checkpoint.

The modules: `task` plays a process's part (`from_flags`, `run_task`); `roles` holds the roles
(`SingleProcess`, `ParameterServer`, `Worker`); `ps_watch` the watch of the parameter servers
(and `ps_watchdog.py`, the process it runs); `tf_config` reads `TF_CONFIG`; `launcher` runs a
whole cluster on this machine, in a private network (`isolation`).
"""
from towers import lazy

# Imported when first used (`towers.lazy`): a training script reads its flags, and the launcher
# runs, without TensorFlow.
__getattr__, __dir__ = lazy.exports(__name__, {
    'ParameterServerWatch': 'towers.cluster.ps_watch',
    'PS_JOB': 'towers.cluster.roles', 'WORKER_JOB': 'towers.cluster.roles',
    'ParameterServer': 'towers.cluster.roles', 'SingleProcess': 'towers.cluster.roles',
    'Worker': 'towers.cluster.roles',
    'from_flags': 'towers.cluster.task', 'run_task': 'towers.cluster.task',
})

__all__ = ['PS_JOB', 'WORKER_JOB', 'ParameterServer', 'ParameterServerWatch', 'SingleProcess',
           'Worker', 'from_flags', 'run_task']
