"""The fault battery: what real clusters do to a training job, and what it must survive.

kill -9 at random moments, SIGTERM to one process and to a cluster, damaged checkpoints, a
checkpoint rotated away under an evaluation, bad records and flags, errors raised inside the
graph, a full disk, a dead parameter server. The training program is tests/cluster_train_program.py,
wired to towers as the real scripts are; processes are waited for through their output lines,
each test within a deadline, and killed at its end whatever happened.
"""
import errno
import logging
import os
import random
import re
import runpy
import signal
import sys
import time

import pytest

import cluster_train_program
import towers
from models.datasets.cifar10 import synthetic as cifar10_synthetic
from models.datasets.kolektor import synthetic as kolektor_synthetic
from task_process import Task
from towers import cli, evaluation
from towers.training import checkpoints
from towers.cluster import launcher
from towers.training import preemption
from towers.compat import tf
from towers.files import write_file_atomically, write_json

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


def run_cli(capsys, main, *argv):
    """Runs `main` as a script runs, through `towers.cli.run`; returns (status, stderr)."""
    with pytest.raises(SystemExit) as exited:
        cli.run(main, list(argv))
    return exited.value.code, capsys.readouterr().err


def script_main(name):
    return runpy.run_path(os.path.join(ROOT, 'scripts', name))['main']


def assert_one_error_line(status, stderr, expected, statuses=(1,)):
    """A non-zero exit (one of `statuses`) whose stderr ends with the line `expected` (a regular
    expression) and holds no traceback."""
    assert status in statuses, stderr
    assert 'Traceback' not in stderr
    assert re.fullmatch(expected, stderr.strip().splitlines()[-1]), stderr


def train_program(train_dir, max_steps, *flags):
    return cluster_train_program.main(['--train_dir', str(train_dir), '--max_steps',
                                       str(max_steps), '--num_gpus', '1'] + list(flags))


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


def test_a_truncated_newest_data_file_is_skipped_with_a_line_naming_it(tmp_path, caplog):
    assert train_program(tmp_path, 20, '--save_checkpoint_steps', '10') == 0
    data = tmp_path / 'model.ckpt-20.data-00000-of-00001'
    data.write_bytes(data.read_bytes()[:-8])
    with caplog.at_level(logging.INFO):
        assert train_program(tmp_path, 21) == 0
    assert re.search(r'skipping checkpoint \S+/model\.ckpt-20: its data \S+/model\.ckpt-20\.'
                     r'data-\* cannot be read \(tensor \S+: ', caplog.text), caplog.text
    assert 'resuming from step 10 in' in caplog.text


def test_a_garbage_newest_index_is_skipped_with_a_line_naming_it(tmp_path, caplog):
    assert train_program(tmp_path, 20, '--save_checkpoint_steps', '10') == 0
    (tmp_path / 'model.ckpt-20.index').write_bytes(b'garbage' * 20)
    with caplog.at_level(logging.INFO):
        assert train_program(tmp_path, 21) == 0
    assert re.search(r'skipping checkpoint \S+/model\.ckpt-20: its index \S+/model\.ckpt-20\.'
                     r'index cannot be read \(not an sstable', caplog.text), caplog.text
    assert 'resuming from step 10 in' in caplog.text


def test_with_no_checkpoint_readable_training_stops_with_one_line_naming_the_directory(
        tmp_path, capsys):
    assert train_program(tmp_path, 20, '--save_checkpoint_steps', '10') == 0
    for index in tmp_path.glob('*.index'):
        index.write_bytes(b'garbage')
    status, stderr = run_cli(capsys, cluster_train_program.main, '--train_dir', str(tmp_path),
                             '--max_steps', '30', '--num_gpus', '1')
    assert_one_error_line(status, stderr, r'error: no readable checkpoint in %s: all 2 are '
                                          r'damaged \(newest model\.ckpt-20: .*; move them '
                                          r'away to start from scratch' % re.escape(str(tmp_path)))


def test_evaluation_moves_on_when_the_checkpoint_it_reads_is_rotated_away(tmp_path, caplog):
    assert train_program(tmp_path, 20, '--save_checkpoint_steps', '10') == 0
    read = []

    def evaluate(checkpoint):
        read.append(os.path.basename(checkpoint))
        if len(read) == 1:
            # The training rotates it away meanwhile, as its saver does past max_to_keep.
            tf.train.remove_checkpoint(checkpoint)
        tf.train.load_checkpoint(checkpoint).get_tensor('global_step')

    with caplog.at_level(logging.WARNING):
        evaluation.poll_checkpoints(str(tmp_path), evaluate, run_once=True, interval_secs=60)
    assert read == ['model.ckpt-20', 'model.ckpt-10']
    assert re.search(r'checkpoint \S+/model\.ckpt-20 was deleted while it was read',
                     caplog.text)


def test_a_cifar10_label_out_of_range_is_one_line_naming_file_and_record(tmp_path, capsys):
    batches_dir = tmp_path / cifar10_synthetic.GENERATED_DIR
    cifar10_synthetic.generate(str(batches_dir), records_per_file=5)
    path = batches_dir / 'data_batch_3.bin'
    records = bytearray(path.read_bytes())
    records[2 * 3073] = 200
    path.write_bytes(bytes(records))
    status, stderr = run_cli(capsys, script_main('train_cifar10_multi_gpu.py'), '--data_dir',
                             str(tmp_path), '--train_dir', str(tmp_path / 'train'),
                             '--max_steps', '1', '--batch_size', '2')
    assert_one_error_line(status, stderr, re.escape(
        'error: bad CIFAR-10 record in %s: record 2 (byte 6146) has label 200, expected a '
        'class 0..9' % path))


def test_a_truncated_kolektor_image_is_one_line_naming_it(tmp_path, capsys):
    data_dir = tmp_path / 'kolektor'
    kolektor_synthetic.write_dataset(str(data_dir), num_items=2, parts_per_item=2, height=64,
                                     width=32, defect_fraction=0.5)
    image = data_dir / 'kos01' / 'Part1.jpg'
    image.write_bytes(image.read_bytes()[:200])
    status, stderr = run_cli(capsys, script_main('train_segdec.py'), '--data_dir',
                             str(data_dir), '--train_dir', str(tmp_path / 'train'),
                             '--image_height', '64', '--image_width', '32', '--max_steps', '1')
    assert_one_error_line(status, stderr, r'error: cannot read image %s: .+' % re.escape(
        str(image)))


@pytest.mark.parametrize('script, flag, kind, expected', [
    ('train_cifar10_multi_gpu.py', '--data_dir', 'file', 'expected a directory, but {} is a '
                                                         'file'),
    ('train_cifar10_multi_gpu.py', '--train_dir', 'file', 'expected a directory, but {} is a '
                                                          'file'),
    ('cifar10_eval.py', '--checkpoint_dir', 'missing', 'expected an existing directory, but {} '
                                                       'does not exist'),
    ('eval_segdec.py', '--checkpoint_path', 'folder', 'expected a checkpoint prefix such as '
                                                      '{}/model.ckpt-<step>, but {} is a '
                                                      'directory'),
    ('eval_segdec.py', '--out_dir', 'under a file', 'expected a directory, but {} is a file'),
])
def test_a_path_flag_naming_the_wrong_kind_of_thing_is_one_line_naming_it(
        tmp_path, capsys, script, flag, kind, expected):
    path = tmp_path / 'thing'
    culprit = path
    if kind in ('file', 'under a file'):
        path.write_text('')
    elif kind == 'folder':
        path.mkdir()
    if kind == 'under a file':
        path = path / 'out'
    status, stderr = run_cli(capsys, script_main(script), flag, str(path))
    assert_one_error_line(status, stderr, re.escape('error: argument %s: %s' % (
        flag, expected.format(culprit, culprit))))


def test_a_reader_error_raised_inside_the_graph_is_one_line_naming_the_file(tmp_path, capsys):
    path = tmp_path / 'data_batch_1.bin'
    path.write_bytes(bytes(100))

    def main(argv):
        records = tf.data.FixedLengthRecordDataset([str(path)], 3073)
        with tf.Session() as sess:
            sess.run(tf.data.make_one_shot_iterator(records).get_next())

    status, stderr = run_cli(capsys, main)
    assert_one_error_line(status, stderr, r'error: reading the input data failed \(in '
                                          r'IteratorGetNext\): .*input file "%s".*'
                                          % re.escape(str(path)))


def test_a_label_out_of_range_inside_the_graph_is_one_line_calling_it_bad_input(capsys):
    def main(argv):
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.constant([3, 200]), logits=tf.zeros([2, 10]), name='cross_entropy')
        with tf.Session() as sess:
            sess.run(loss)

    status, stderr = run_cli(capsys, main)
    assert_one_error_line(status, stderr, r'error: bad input data \(in cross_entropy\S*\): '
                                          r'Received a label value of 200 which is outside the '
                                          r'valid range of \[0, 10\).*; check the labels of the '
                                          r'data set')


def test_any_other_os_error_is_one_line_naming_the_path(tmp_path, capsys):
    def main(argv):
        open(str(tmp_path), 'w')

    status, stderr = run_cli(capsys, main)
    assert_one_error_line(status, stderr, re.escape('error: cannot use %s: Is a directory'
                                                    % tmp_path))


class DiskFullSaver(tf.train.Saver):
    """A saver whose saves fail from a given step on as TensorFlow's fail on a full disk: part
    of the data file written under a temporary name, then ResourceExhaustedError."""

    def __init__(self, full_from_step, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._full_from = full_from_step

    def save(self, sess, save_path, global_step=None, **kwargs):
        if global_step < self._full_from:
            return super().save(sess, save_path, global_step=global_step, **kwargs)
        partial = '%s-%d.data-00000-of-00001.tempstate42' % (save_path, global_step)
        with open(partial, 'wb') as f:
            f.write(bytes(64))
        raise tf.errors.ResourceExhaustedError(None, None, '%s; No space left on device'
                                               % partial)


def train_linear(train_dir, max_steps, saver=None):
    """Trains y = w x to `max_steps` with checkpoints every 10 steps; returns the result."""
    with tf.Graph().as_default():
        global_step = tf.train.get_or_create_global_step()
        weight = tf.get_variable('w', [], initializer=tf.zeros_initializer())
        loss = tf.square(weight * 2.0 - 1.0)
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step)
        return towers.train(train_op, loss, global_step, str(train_dir), max_steps,
                            examples_per_step=1, save_checkpoint_steps=10,
                            saver=saver and saver(tf.global_variables()),
                            printer=lambda *args, **kwargs: None)


def test_a_full_disk_while_checkpointing_says_so_and_the_previous_checkpoint_resumes(tmp_path):
    with pytest.raises(towers.TowersError) as raised:
        train_linear(tmp_path, 30, saver=lambda variables: DiskFullSaver(20, variables))
    assert re.fullmatch(r'the disk is full: cannot write checkpoint \S+/model\.ckpt-20 \(\S+'
                        r'; No space left on device\); the previous checkpoint \S+/model\.ckpt-'
                        r'10 is intact, and a restart resumes from it', str(raised.value))
    assert checkpoints.newest_readable(str(tmp_path)).endswith('model.ckpt-10')
    assert train_linear(tmp_path, 30).steps_done == 30


def test_a_full_disk_while_writing_a_report_says_so_and_the_previous_report_stays(tmp_path,
                                                                                  capsys):
    report = tmp_path / 'results.json'
    write_json(str(report), {'average_precision': 0.9})
    before = report.read_text()

    def fill_the_disk_half_way(temporary):
        with open(temporary, 'w') as f:
            f.write('{"average_prec')
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    status, stderr = run_cli(capsys, lambda argv: write_file_atomically(
        str(report), fill_the_disk_half_way))
    assert_one_error_line(status, stderr, re.escape(
        'error: the disk is full: cannot write %s (No space left on device)' % report))
    assert report.read_text() == before
    assert os.listdir(tmp_path) == ['results.json']


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
