"""Playing this process's part in training, as its cluster flags (or `TF_CONFIG`) say.

    def work(role, setup):
        return towers.fit(recipe, input_fn, setup, role, ...)
    return cluster.run_task(args, work)
"""
import argparse
import logging
import os

from towers import flags, replication
from towers.cluster import tf_config
from towers.cluster.roles import PS_JOB, WORKER_JOB, ParameterServer, SingleProcess, Worker
from towers.compat import tf
from towers.errors import TowersError
from towers.training import preemption

log = logging.getLogger(__name__)


def from_flags(args, environ=None):
    """The role of this process from the flags of `add_cluster_flags`, or from TF_CONFIG.

    Without --job_name, --ps_hosts and --worker_hosts, a `TF_CONFIG` environment variable
    gives the cluster (`towers.cluster.tf_config`); when both are given, the flags win.

    Args:
      args: the parsed flags.
      environ: the environment variables; `os.environ` by default.

    Returns:
      `SingleProcess` without a cluster, else a `ParameterServer` or a `Worker`.

    Raises:
      TowersError: the flags (or TF_CONFIG) do not describe a cluster this process can be
        part of.
    """
    value = (os.environ if environ is None else environ).get(tf_config.VARIABLE)
    if value and args.job_name is None and not (args.ps_hosts or args.worker_hosts):
        cluster = tf_config.cluster_flags(value)
        if cluster is None:
            log.info('%s describes no cluster to join: training alone', tf_config.VARIABLE)
            return SingleProcess()
        log.info('cluster from %s: %s task %d', tf_config.VARIABLE, cluster['job_name'],
                 cluster['task_index'])
        args = argparse.Namespace(**dict(vars(args), **cluster))
    elif value:
        log.info('cluster flags given: %s is ignored', tf_config.VARIABLE)
    if args.job_name is None:
        if args.ps_hosts or args.worker_hosts:
            raise TowersError('--ps_hosts/--worker_hosts given without --job_name; give '
                              '--job_name ps or --job_name worker (and --task_index)')
        return SingleProcess()
    replication.check(flags.mode_from_flags(args), in_cluster=True,
                      deterministic=args.deterministic)
    if not args.ps_hosts:
        raise TowersError('--job_name %s needs --ps_hosts: the variables live on the parameter '
                          'servers, so give at least one host:port' % args.job_name)
    if not args.worker_hosts:
        raise TowersError('--job_name %s needs --worker_hosts: give the host:port of every '
                          'worker' % args.job_name)
    hosts = args.ps_hosts + args.worker_hosts
    repeated = sorted({h for h in hosts if hosts.count(h) > 1})
    if repeated:
        raise TowersError('%s appear(s) more than once in --ps_hosts/--worker_hosts; every '
                          'task needs its own host:port' % ', '.join(repeated))
    tasks = args.ps_hosts if args.job_name == PS_JOB else args.worker_hosts
    if args.task_index >= len(tasks):
        raise TowersError('--task_index %d, but --%s_hosts lists %d %s task(s) (indices 0..%d)'
                          % (args.task_index, args.job_name, len(tasks), args.job_name,
                             len(tasks) - 1))
    spec = tf.train.ClusterSpec({PS_JOB: args.ps_hosts, WORKER_JOB: args.worker_hosts})
    if args.job_name == PS_JOB:
        return ParameterServer(spec, args.task_index)
    return Worker(spec, args.task_index, args.sync_replicas)


def run_task(args, work):
    """Plays this process's part in training, as the cluster flags say.

    A parameter server serves the variables until every worker is done. A worker (or a
    process training alone) starts with the devices of `--num_gpus`, `--log_device_placement`,
    `--intra_op_threads` and `--inter_op_threads`, calls `work(role, setup)` while watching the
    parameter servers (`--ps_timeout_secs`), and tells the parameter servers that it has
    finished, or stopped. Throughout, SIGTERM and SIGINT request a clean stop
    (`towers.training.preemption`, with `--stop_grace_secs`).

    Args:
      args: flags parsed with `towers.flags.add_device_flags` and `add_cluster_flags`.
      work: a function (role, `DeviceSetup`) that trains: it builds the graph on `setup` and
        trains it with the role's `master`, `is_chief`, `hooks`, `wrap_optimizer` and
        `once_per_step`, as `towers.fit` does; its result is not used.

    Returns:
      The process's exit status: 0, or 128 + the signal after SIGTERM (143) or SIGINT (130).
    """
    role = from_flags(args)
    with preemption.stop_signals(args.stop_grace_secs) as stop:
        if role.is_ps:
            return role.serve(stop)
        setup = role.configure_devices(args.num_gpus, args.log_device_placement,
                                       intra_op_threads=args.intra_op_threads,
                                       inter_op_threads=args.inter_op_threads)
        with role.watch_parameter_servers(args.ps_timeout_secs):
            work(role, setup)
            role.finish(stopped=stop.requested)
    return stop.exit_status if stop.requested else 0
