"""Specification of distributed training on localhost: one parameter server and two workers of
two virtual-CPU towers each, running tests/cluster_train_program.py.

Every process is bounded in time and killed at the end of its test, whatever happened.
"""
import datetime
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest

import cluster_train_program
from task_process import Task
from towers.cluster import launcher
from towers.compat import tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, 'tests', 'cluster_train_program.py')
LAUNCHER = os.path.join(ROOT, 'scripts', 'launch_local_cluster.py')
# Without the shutdown fix the SyncReplicas chief waits 120 s in close after its last step.
SHUTDOWN_SECS = 60
TEST_SECS = 150


@pytest.fixture
def start_task():
    """Starts processes of the program as cluster tasks; kills those left at the end."""
    tasks = []
    ports = launcher.free_local_ports(3)
    hosts = ['localhost:%d' % port for port in ports]

    def start(job_name, task_index, *flags):
        argv = ([sys.executable, PROGRAM, '--num_gpus', '2'] + list(flags)
                + launcher.task_flags(hosts[:1], hosts[1:], job_name, task_index))
        task = Task('%s%d' % (job_name, task_index), argv, ROOT)
        tasks.append(task)
        return task

    yield start
    for task in tasks:
        task.kill()


def checkpoint_variables(train_dir):
    reader = tf.train.load_checkpoint(train_dir)
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


def newest_checkpoint_step(train_dir):
    return int(tf.train.latest_checkpoint(train_dir).rsplit('-', 1)[1])


def test_two_workers_of_two_towers_train_like_one_process_of_four_and_every_process_exits(
        tmp_path):
    steps = 6
    one_process = str(tmp_path / 'one_process')
    assert cluster_train_program.main(['--train_dir', one_process, '--max_steps', str(steps),
                                       '--num_gpus', '4']) == 0
    distributed = str(tmp_path / 'cluster')
    launch = subprocess.run(
        [sys.executable, LAUNCHER, '--ps', '1', '--workers', '2', '--num_gpus', '2',
         '--timeout', str(TEST_SECS), '--exit_grace', '30', '--',
         PROGRAM, '--train_dir', distributed, '--max_steps', str(steps)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT,
        timeout=TEST_SECS + 20)
    exited = datetime.datetime.now()
    output = launch.stdout
    assert launch.returncode == 0, output[-4000:]
    assert '[launcher] every process exited with status 0' in output
    assert '[ps0] INFO towers.cluster.roles: ps 0: all 2 worker(s) finished' in output
    last_step = re.findall(r'^\[worker0\] (\S+ \S+): step %d,' % (steps - 1), output, re.M)
    assert last_step, output[-4000:]
    shutdown = exited - datetime.datetime.strptime(last_step[0], '%Y-%m-%d %H:%M:%S.%f')
    assert shutdown.total_seconds() < SHUTDOWN_SECS
    assert newest_checkpoint_step(distributed) == steps
    expected = checkpoint_variables(one_process)
    actual = checkpoint_variables(distributed)
    assert sorted(actual) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_allclose(actual[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


def test_a_killed_worker_rejoins_and_a_killed_chief_resumes_from_its_newest_checkpoint(
        tmp_path, start_task):
    deadline = time.monotonic() + TEST_SECS
    max_steps = 300
    train_dir = str(tmp_path / 'train')
    flags = ('--train_dir', train_dir, '--max_steps', str(max_steps),
             '--save_checkpoint_steps', '20')
    ps = start_task('ps', 0, *flags)
    chief = start_task('worker', 0, *flags)
    worker = start_task('worker', 1, *flags)

    worker.wait_for_line(r': step 30,', deadline)
    worker.process.kill()
    worker = start_task('worker', 1, *flags)
    chief.wait_for_line(r': step 120,', deadline)
    chief.process.kill()
    chief.process.wait()
    newest = newest_checkpoint_step(train_dir)
    chief = start_task('worker', 0, *flags)

    chief.wait_for_line(r'resuming from step %d in ' % newest, deadline)
    for task in (chief, worker, ps):
        assert task.exit_status(deadline) == 0, task.output()
    assert newest_checkpoint_step(train_dir) == max_steps
    assert 'ps 0: all 2 worker(s) finished' in ps.output()
