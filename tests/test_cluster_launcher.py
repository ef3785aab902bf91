"""Specification of scripts/launch_local_cluster.py, with a stand-in program instead of training:
a few lines of Python that print their arguments and then behave as each test needs."""
import importlib.util
import os
import sys

import pytest

import towers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location(
    'launch_local_cluster', os.path.join(ROOT, 'scripts', 'launch_local_cluster.py'))
launcher = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(launcher)

# Prints its flags, then: a worker exits with the status given after --worker_status, a ps
# with --ps_status, or waits until it is terminated when that status is 'hang'.
STAND_IN = '''
import sys, threading
args = sys.argv[1:]
print(' '.join(args), flush=True)
role = args[args.index('--job_name') + 1]
status = args[args.index('--%s_status' % role) + 1]
if status == 'hang':
    threading.Event().wait()
sys.exit(int(status))
'''


def launch(capsys, *options, ps_status='0', worker_status='0'):
    """Runs the launcher on the stand-in; returns its exit status and its output lines."""
    status = launcher.main(['--exit_grace', '5'] + list(options) + [
        '--', sys.executable, '-c', STAND_IN,
        '--ps_status', ps_status, '--worker_status', worker_status])
    return status, capsys.readouterr().out.splitlines()


def lines_of(lines, role):
    prefix = '[%s] ' % role
    return [line[len(prefix):] for line in lines if line.startswith(prefix)]


def flag(args, name):
    return args[args.index(name) + 1]


def test_each_task_gets_its_cluster_flags_and_its_output_carries_its_role(capsys):
    status, lines = launch(capsys, '--ps', '2', '--workers', '3', '--num_gpus', '2')
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
    status, lines = launch(capsys, '--workers', '2', ps_status='hang', worker_status='3')
    assert status == 3, lines
    assert lines_of(lines, 'launcher')[-1].endswith(
        'exited with status 3; terminating the others')


def test_a_ps_still_running_after_the_workers_finished_is_terminated_as_hung(capsys):
    status, lines = launch(capsys, '--workers', '1', '--exit_grace', '1', ps_status='hang')
    assert status == launcher.EXIT_HUNG, lines
    assert lines_of(lines, 'launcher')[-1] == (
        'ps0 still running 1 s after the workers finished; terminating')


def test_the_time_limit_ends_a_cluster_that_does_not_finish(capsys):
    status, lines = launch(capsys, '--timeout', '1', ps_status='hang', worker_status='hang')
    assert status == launcher.EXIT_TIMEOUT, lines
    assert lines_of(lines, 'launcher')[-1] == 'timed out; terminating ps0, worker0, worker1'


def test_a_missing_training_script_is_an_error():
    with pytest.raises(towers.TowersError, match='give the training script after "--"'):
        launcher.main(['--ps', '1'])
