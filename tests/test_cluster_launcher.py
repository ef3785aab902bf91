"""Specification of the local cluster launcher (towers/cluster/launcher.py and
scripts/launch_local_cluster.py), with a stand-in program instead of training: a few lines of
Python that print their arguments and then behave as each test needs."""
import os
import pwd
import re
import runpy
import signal
import sys

import pytest

from script_runs import run_in_process
from towers import cli
from towers.cluster import isolation, launcher

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, 'scripts', 'launch_local_cluster.py')

# Prints its flags, then: a worker exits with the status given after --worker_status, a ps
# with --ps_status, or, when that status is 'hang', prints its process id and waits until it
# is terminated; 'linger' the same, but once terminated it prints 'stopping' and takes 1 s.
STAND_IN = '''
import os, signal, sys, threading, time
args = sys.argv[1:]
print(' '.join(args), flush=True)
role = args[args.index('--job_name') + 1]
status = args[args.index('--%s_status' % role) + 1]
if status == 'linger':
    def stop(signum, frame):
        print('stopping', flush=True)
        time.sleep(1)
        sys.exit(143)
    signal.signal(signal.SIGTERM, stop)
    print('hanging as process %d' % os.getpid(), flush=True)
    while True:
        signal.pause()
if status == 'hang':
    print('hanging as process %d' % os.getpid(), flush=True)
    threading.Event().wait()
sys.exit(int(status))
'''


def stand_in(ps_status='0', worker_status='0'):
    return [sys.executable, '-c', STAND_IN, '--ps_status', ps_status,
            '--worker_status', worker_status]


def launch(capsys, num_ps=1, num_workers=2, ps_status='0', worker_status='0', **options):
    """Runs the launcher on the stand-in; returns its exit status and its output lines."""
    options.setdefault('exit_grace', 5)
    status = launcher.launch(stand_in(ps_status, worker_status), num_ps, num_workers,
                             **options)
    return status, capsys.readouterr().out.splitlines()


# Why a system allows no private network, as the kernel setting that forbids it is named.
UNAVAILABLE = 'user namespaces are disabled (user.max_user_namespaces=0)'


@pytest.fixture
def no_private_network(monkeypatch):
    """A system that allows no private network."""
    def unavailable():
        raise isolation.IsolationUnavailable(UNAVAILABLE)
    monkeypatch.setattr(isolation, 'private_network', unavailable)


def lines_of(lines, role):
    prefix = '[%s] ' % role
    return [line[len(prefix):] for line in lines if line.startswith(prefix)]


def flag(args, name):
    return args[args.index(name) + 1]


def test_each_task_gets_its_cluster_flags_and_its_output_carries_its_role(capsys):
    status, lines = launch(capsys, num_ps=2, num_workers=3, num_gpus=2)
    assert status == 0, lines
    tasks = {}
    for job, count in (('ps', 2), ('worker', 3)):
        for index in range(count):
            [printed] = lines_of(lines, '%s%d' % (job, index))
            tasks[job, index] = printed.split()
    assert {(flag(a, '--job_name'), int(flag(a, '--task_index'))) for a in tasks.values()} == (
        set(tasks))
    assert {flag(a, '--num_gpus') for a in tasks.values()} == {'2'}
    [hosts] = {(flag(a, '--ps_hosts'), flag(a, '--worker_hosts')) for a in tasks.values()}
    addresses = hosts[0].split(',') + hosts[1].split(',')
    assert len(set(addresses)) == 5
    assert all(address.startswith('localhost:') for address in addresses)
    assert lines_of(lines, 'launcher')[-1] == 'every process exited with status 0'


def test_a_failing_task_ends_the_cluster_with_its_status(capsys):
    status, lines = launch(capsys, num_workers=2, ps_status='hang', worker_status='3')
    assert status == 3, lines
    assert lines_of(lines, 'launcher')[-2].endswith(
        'exited with status 3; terminating the others')
    # The other worker may have exited by itself before.
    assert lines_of(lines, 'launcher')[-1].startswith('terminated ps0 (status 143)')


def test_a_ps_still_running_after_the_workers_finished_is_terminated_as_hung(capsys):
    status, lines = launch(capsys, num_workers=1, exit_grace=1, ps_status='hang')
    assert status == launcher.EXIT_HUNG, lines
    assert lines_of(lines, 'launcher')[-2:] == [
        'ps0 still running 1 s after the workers finished; terminating',
        'terminated ps0 (status 143)']


def test_the_time_limit_ends_a_cluster_that_does_not_finish(capsys):
    status, lines = launch(capsys, timeout=1, ps_status='hang', worker_status='hang')
    assert status == launcher.EXIT_TIMEOUT, lines
    assert lines_of(lines, 'launcher')[-2:] == [
        'timed out; terminating ps0, worker0, worker1',
        'terminated ps0 (status 143), worker0 (status 143), worker1 (status 143)']


def test_terminating_the_launcher_terminates_every_task():
    hanging = []

    def printer(line):
        if 'hanging as process' in line:
            hanging.append(int(line.split()[-1]))
            if len(hanging) == 3:
                os.kill(os.getpid(), signal.SIGTERM)

    status = launcher.launch(stand_in('hang', 'hang'), 1, 2, exit_grace=5, printer=printer)
    assert status == 128 + signal.SIGTERM
    for pid in hanging:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_a_second_sigterm_while_the_launcher_stops_its_tasks_does_not_interrupt_it(capsys):
    # `timeout` and process managers signal the whole process group: the launcher hears
    # SIGTERM again while it waits for its tasks to stop.
    hanging = []

    def printer(line):
        print(line)
        if 'hanging as process' in line:
            hanging.append(int(line.split()[-1]))
            if len(hanging) == 3:
                os.kill(os.getpid(), signal.SIGTERM)
        if line.endswith('] stopping'):
            os.kill(os.getpid(), signal.SIGTERM)

    status = launcher.launch(stand_in('linger', 'linger'), 1, 2, exit_grace=5, printer=printer)
    assert status == 128 + signal.SIGTERM
    assert lines_of(capsys.readouterr().out.splitlines(), 'launcher')[-1] == (
        'terminated ps0 (status 143), worker0 (status 143), worker1 (status 143)')
    for pid in hanging:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_free_local_ports_are_distinct_ports():
    ports = launcher.free_local_ports(5)
    assert len(set(ports)) == 5
    assert all(0 < port < 65536 for port in ports)


def test_a_missing_training_script_is_an_error():
    finished = run_in_process('launch_local_cluster.py', '--ps', '1')
    assert finished.returncode == 1, finished.stderr
    assert finished.stderr.splitlines()[-1].startswith(
        'error: give the training script after "--"')


def test_the_tasks_run_in_a_private_network_of_loopback_alone(capsys):
    status = launcher.launch([sys.executable, '-c', 'import socket; print(*[name for _, name '
                                                    'in socket.if_nameindex()])'], 1, 2)
    lines = capsys.readouterr().out.splitlines()
    assert status == 0, lines
    assert lines_of(lines, 'launcher')[0].endswith('; in a private network (loopback only)')
    for role in ('ps0', 'worker0', 'worker1'):
        assert lines_of(lines, role) == ['lo']


def test_without_a_private_network_a_first_line_says_why_and_what_it_exposes(
        capsys, no_private_network):
    status, lines = launch(capsys)
    assert status == 0, lines
    ports = re.findall(r'localhost:(\d+)', lines_of(lines, 'launcher')[1])
    assert lines[0] == (
        '[launcher] not isolated: %s; the tasks listen on every network interface: anyone who '
        'can reach this machine on ports %s can run any op in them as %s'
        % (UNAVAILABLE, ', '.join(ports), pwd.getpwuid(os.geteuid()).pw_name))
    assert lines_of(lines, 'worker1')


def test_require_isolation_without_a_private_network_is_one_error_line_and_starts_nothing(
        tmp_path, capsys, no_private_network):
    started = tmp_path / 'started'
    main = runpy.run_path(SCRIPT)['main']
    with pytest.raises(SystemExit) as exited:
        cli.run(main, ['--require_isolation', '--', sys.executable, '-c',
                       'open(%r, "w")' % str(started)])
    output = capsys.readouterr()
    assert exited.value.code == 1
    assert output.err == ('error: --require_isolation: the cluster cannot have a private '
                          'network: %s\n' % UNAVAILABLE)
    assert output.out == ''
    assert not started.exists()
