"""Specification of the cluster flags and of the role each combination gives a process."""
import logging
import os
import pwd

import pytest

import towers
from towers import flags
from towers import cluster
from towers.cluster import launcher
from towers.compat import tf

PS = ['localhost:2222']
WORKERS = ['localhost:2223', 'localhost:2224']


def parse(*argv):
    parser = flags.FlagParser()
    flags.add_training_flags(parser)
    return parser.parse_args(list(argv))


def role_of(*argv):
    return cluster.from_flags(parse(*argv))


def test_no_cluster_flags_give_a_single_process_with_single_process_behaviour():
    role = role_of()
    assert isinstance(role, cluster.SingleProcess)
    assert not role.is_ps
    assert (role.master, role.is_chief, tuple(role.hooks)) == ('', True, ())
    assert (role.task_index, role.num_workers, role.replicas_to_aggregate) == (0, 1, 1)
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    assert role.wrap_optimizer(optimizer) is optimizer
    assert role.once_per_step([optimizer]) == [optimizer]
    assert role.configure_devices(2, physical_gpus=0).tower_devices == ['/cpu:0', '/cpu:1']


def test_task_flags_make_the_role_they_name():
    worker = cluster.from_flags(parse(*launcher.task_flags(PS, WORKERS, 'worker', 1)))
    assert isinstance(worker, cluster.Worker)
    assert (worker.task_index, worker.num_workers, worker.num_ps) == (1, 2, 1)
    assert not worker.is_chief
    ps = cluster.from_flags(parse(*launcher.task_flags(PS, WORKERS, 'ps', 0)))
    assert isinstance(ps, cluster.ParameterServer)
    assert ps.is_ps and ps.num_workers == 2


def test_worker_zero_is_the_chief():
    assert role_of(*launcher.task_flags(PS, WORKERS, 'worker', 0)).is_chief


@pytest.mark.parametrize('extra, sync', [
    ([], True), (['--sync_replicas'], True), (['--sync_replicas=true'], True),
    (['--sync_replicas=false'], False), (['--nosync_replicas'], False)])
def test_updates_are_synchronous_unless_turned_off(extra, sync):
    worker = role_of(*launcher.task_flags(PS, WORKERS, 'worker', 0) + extra)
    assert worker.sync == sync
    assert worker.replicas_to_aggregate == (2 if sync else 1)


@pytest.mark.parametrize('argv, runs_them', [
    (launcher.task_flags(PS, WORKERS, 'worker', 0), [True]),
    (launcher.task_flags(PS, WORKERS, 'worker', 1), []),
    (launcher.task_flags(PS, WORKERS, 'worker', 1) + ['--nosync_replicas'], [True])])
def test_once_per_step_ops_run_on_each_async_worker_but_on_the_sync_chief_alone(argv,
                                                                               runs_them):
    assert role_of(*argv).once_per_step([True]) == runs_them


@pytest.mark.parametrize('argv, message', [
    (['--ps_hosts', 'localhost:1'], '--job_name'),
    (['--job_name', 'worker', '--worker_hosts', 'localhost:1'], '--ps_hosts'),
    (['--job_name', 'ps', '--ps_hosts', 'localhost:1'], '--worker_hosts'),
    (launcher.task_flags(PS, WORKERS, 'worker', 2), r'--task_index 2, but --worker_hosts lists 2'),
    (launcher.task_flags(PS, WORKERS, 'ps', 1), r'--task_index 1, but --ps_hosts lists 1'),
    (launcher.task_flags(PS, PS + WORKERS, 'worker', 0), 'localhost:2222 appear'),
])
def test_impossible_cluster_flags_are_errors_naming_the_flag(argv, message):
    with pytest.raises(towers.TowersError, match=message):
        role_of(*argv)


@pytest.mark.parametrize('argv', [
    ['--ps_hosts', 'localhost'], ['--worker_hosts', 'a:1,b'], ['--task_index', '-1'],
    ['--job_name', 'chief'], ['--sync_replicas=maybe']])
def test_malformed_cluster_flags_are_errors_naming_the_flag(argv):
    with pytest.raises(flags.FlagError, match='argument --%s' % argv[0].split('=')[0][2:]):
        parse(*argv)


def test_hosts_are_read_as_comma_separated_host_port_entries():
    args = parse('--ps_hosts', 'ps0.example.com:2222, ps1:2222', '--worker_hosts', 'w:1')
    assert args.ps_hosts == ['ps0.example.com:2222', 'ps1:2222']
    assert args.worker_hosts == ['w:1']



def test_a_task_started_by_hand_logs_once_that_its_server_is_reachable_from_the_network(
        caplog):
    ps_port, worker_port = launcher.free_local_ports(2)
    worker = role_of(*launcher.task_flags(['localhost:%d' % ps_port],
                                          ['localhost:%d' % worker_port], 'worker', 0))
    with caplog.at_level(logging.INFO):
        worker.configure_devices(1, physical_gpus=0)
    [said] = [record for record in caplog.records if 'listens on' in record.getMessage()]
    assert said.levelno == logging.WARNING
    # TensorFlow's server binds IPv6's and IPv4's every interface, or IPv4's alone.
    assert said.getMessage() in [
        'worker 0 listens on %s:%d, every network interface (the cluster names localhost:%d), '
        'and is reachable from the network: anyone who can reach this machine on port %d can '
        'run any op in this process as %s; see docs/security.md'
        % (host, worker_port, worker_port, worker_port, pwd.getpwuid(os.geteuid()).pw_name)
        for host in ('[::]', '0.0.0.0')]
