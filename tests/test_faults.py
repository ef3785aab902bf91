"""The fault battery: what real clusters do to a training job, and what it must survive.

kill -9 at random moments, SIGTERM to one process and to a cluster, a dead parameter server
(the faults in files are in tests/test_file_faults.py). The training program is
tests/cluster_train_program.py, wired to towers as the real scripts are; processes are waited
for through their output lines, each test within a deadline, and killed at its end whatever
happened.
"""
import logging
import os
import random
import re
import signal
import sys
import time

import pytest

import towers
from script_runs import assert_one_error_line, train_program
from task_process import Task
from towers.cluster import launcher
from towers.compat import tf
from towers.training import checkpoints, preemption

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(ROOT, 'tests', 'cluster_train_program.py')
LAUNCHER = os.path.join(ROOT, 'scripts', 'launch_local_cluster.py')
TEST_SECS = 240
# A short bound for the tests; the flags' defaults are 10 s and 180 s.
STOP_GRACE_SECS = 3
PS_TIMEOUT_SECS = 3
# What a loaded machine may add to a bound before the process is seen to exit.
SLACK_SECS = 10


@pytest.fixture
def start():
    """Starts processes of the program: `start(name, *flags)`, with `job=` and `index=` a task
    of a cluster of 1 ps and 2 workers on free ports (`start.hosts`); kills those left at the
    end."""
    tasks = []
    hosts = ['localhost:%d' % port for port in launcher.free_local_ports(3)]

    def start_task(name, *flags, job=None, index=0):
        argv = [sys.executable, PROGRAM, '--num_gpus', '1'] + list(flags)
        if job is not None:
            argv += launcher.task_flags(hosts[:1], hosts[1:], job, index)
        task = Task(name, argv, ROOT)
        tasks.append(task)
        return task

    start_task.hosts = hosts
    yield start_task
    for task in tasks:
        task.kill()

def logged_steps(output):
    return [int(step) for step in re.findall(r': step (\d+), loss', output)]


def newest_step(train_dir):
    return int(checkpoints.newest_readable(train_dir).rsplit('-', 1)[1])


def test_kill_9_at_three_random_moments_loses_at_most_the_interval_and_the_run_completes(
        tmp_path, start):
    deadline = time.monotonic() + TEST_SECS
    seed = random.randrange(2 ** 32)
    rng = random.Random(seed)
    interval, max_steps = 10, 100
    train_dir = str(tmp_path / 'train')
    flags = ['--train_dir', train_dir, '--max_steps', str(max_steps),
             '--save_checkpoint_steps', str(interval)]
    reached = 0
    for attempt in range(4):
        run = start('run%d' % attempt, *flags)
        first = int(re.search(r': step (\d+),', run.wait_for_line(r': step \d+,', deadline))
                    .group(1))
        # The first step logged is the one restored from: no step done before the kill is
        # lost beyond the interval.
        assert reached - interval <= first <= reached, (seed, attempt, reached, first)
        if attempt == 3:
            break
        run.wait_for_line(r': step %d,' % (first + rng.randint(1, 25)), deadline)
        os.kill(run.process.pid, signal.SIGKILL)
        assert run.exit_status(deadline) == -signal.SIGKILL
        reached = max(logged_steps(run.all_output())) + 1
        for prefix in checkpoints.candidates(train_dir):
            assert checkpoints.damage(prefix) is None, (seed, prefix)
    assert run.exit_status(deadline) == 0, run.output()
    assert newest_step(train_dir) == max_steps


def test_sigterm_stops_one_process_after_its_step_with_a_checkpoint_of_it_and_status_143(
        tmp_path, start):
    deadline = time.monotonic() + TEST_SECS
    train_dir = str(tmp_path / 'train')
    run = start('run', '--train_dir', train_dir, '--max_steps', '100000')
    run.wait_for_line(r': step 20,', deadline)
    run.process.send_signal(signal.SIGTERM)
    assert run.exit_status(deadline) == 143, run.output()
    output = run.all_output()
    stopped_at = max(logged_steps(output)) + 1
    assert newest_step(train_dir) == stopped_at
    assert 'stopped by SIGTERM at step %d' % stopped_at in output
    assert 'Traceback' not in output


def test_sigterm_to_the_launcher_stops_every_task_with_the_chiefs_checkpoint_and_status_143(
        tmp_path):
    deadline = time.monotonic() + TEST_SECS
    train_dir = str(tmp_path / 'train')
    cluster = Task('launcher', [
        sys.executable, LAUNCHER, '--ps', '1', '--workers', '2', '--num_gpus', '1',
        '--exit_grace', '60', '--', PROGRAM, '--train_dir', train_dir, '--max_steps', '100000',
        '--stop_grace_secs', str(STOP_GRACE_SECS)], ROOT)
    try:
        cluster.wait_for_line(r'^\[worker0\] .*: step 20,', deadline)
        cluster.process.send_signal(signal.SIGTERM)
        assert cluster.exit_status(deadline) == 143, cluster.output()
    finally:
        cluster.kill()
    output = cluster.all_output()
    # Every task exited by itself, with the status of SIGTERM: none is left behind.
    assert ('[launcher] terminated ps0 (status 143), worker0 (status 143), worker1 (status 143)'
            in output), output[-3000:]
    chief_done = max(logged_steps('\n'.join(line for line in output.splitlines()
                                            if line.startswith('[worker0]')))) + 1
    # The step the chief was in when the signal came completes, or is the next one.
    assert chief_done <= newest_step(train_dir) <= chief_done + 1


def test_a_cluster_step_still_blocked_after_the_grace_is_cancelled_and_the_chief_saves_it(
        tmp_path, caplog):
    # A step that waits for a token no one will give, as a synchronous worker's waits for a
    # worker that stopped first; a server of this process plays the cluster.
    server = tf.distribute.Server.create_local_server()
    tokens = 3
    with tf.Graph().as_default():
        global_step = tf.train.get_or_create_global_step()
        queue = tf.FIFOQueue(tokens, tf.int32, shapes=[], name='tokens')
        give_tokens = queue.enqueue_many([list(range(tokens))])
        with tf.control_dependencies([queue.dequeue()]):
            train_op = global_step.assign_add(1)

        class GiveTokensThenSignal(tf.train.SessionRunHook):
            runs = 0

            def after_create_session(self, session, coord):
                session.run(give_tokens)

            def before_run(self, run_context):
                self.runs += 1
                if self.runs == tokens + 1:
                    os.kill(os.getpid(), signal.SIGTERM)

        started = time.monotonic()
        with caplog.at_level(logging.WARNING), preemption.stop_signals(grace_secs=0.5):
            result = towers.train(train_op, tf.constant(0.0), global_step, str(tmp_path),
                                  100, examples_per_step=1, master=server.target,
                                  hooks=[GiveTokensThenSignal()])
    assert time.monotonic() - started < 0.5 + SLACK_SECS
    assert result.interrupted
    assert 'the current step still runs 0.5 s after SIGTERM' in caplog.text
    assert tf.train.load_variable(str(tmp_path), 'global_step') == tokens

def test_a_killed_ps_stops_every_worker_within_the_bound_naming_it_and_a_restart_resumes(
        tmp_path, start, caplog):
    deadline = time.monotonic() + TEST_SECS
    train_dir = str(tmp_path / 'train')
    flags = ['--train_dir', train_dir, '--save_checkpoint_steps', '10', '--ps_timeout_secs',
             str(PS_TIMEOUT_SECS)]
    ps = start('ps0', *flags, '--max_steps', '100000', job='ps')
    workers = [start('worker%d' % i, *flags, '--max_steps', '100000', job='worker', index=i)
               for i in range(2)]
    workers[0].wait_for_line(r': step 25,', deadline)
    ps.kill()
    killed = time.monotonic()
    for index, worker in enumerate(workers):
        assert_one_error_line(
            worker.exit_status(deadline), worker.all_output(),
            r'error: lost parameter server ps 0 at %s: no answer for \d+ s \(Connection '
            r'refused\); worker %d stops\. Restart the job: the chief resumes from its newest '
            r'checkpoint' % (re.escape(start.hosts[0]), index),
            # The watchdog process kills the worker: it may be blocked inside TensorFlow.
            statuses=(-signal.SIGKILL,))
    assert time.monotonic() - killed < PS_TIMEOUT_SECS + SLACK_SECS

    # What the chief left reads whole, and the restarted job resumes from it (one process
    # plays the restarted cluster: a restarted chief restores the same way, as
    # tests/test_cluster_training.py shows).
    resume = newest_step(train_dir)
    with caplog.at_level(logging.INFO):
        assert train_program(train_dir, resume + 1) == 0
    assert 'resuming from step %d in ' % resume in caplog.text
