"""Specification of the training loop: steps, log line, checkpoints, resume, NaN guard, stop
signals."""
import glob
import logging
import os
import re
import signal

import numpy as np
import pytest

import towers
from towers.compat import tf

NUM_TOWERS = 2
BATCH = 4


def linear_tower(shard):
    x, y = shard
    w = tf.get_variable('w', [3, 1], initializer=tf.constant_initializer(0.1))
    tf.losses.mean_squared_error(y, tf.matmul(x, w))
    return {}


def build_model(nan_from_step=None):
    """A 2-tower linear regression with the tutorial's float32 global step.

    Returns (train_op, loss, global_step). With `nan_from_step`, the loss becomes NaN from that
    step on.
    """
    global_step = tf.get_variable('global_step', [], initializer=tf.constant_initializer(0),
                                  trainable=False)
    rs = np.random.RandomState(0)
    x = tf.constant(rs.standard_normal([BATCH, 3]).astype(np.float32))
    y = tf.constant(rs.standard_normal([BATCH, 1]).astype(np.float32))
    replicated = towers.build_towers(linear_tower, (x, y), ['/cpu:0', '/cpu:1'],
                                     tf.train.GradientDescentOptimizer(0.05))
    loss = replicated.tower_losses[-1]
    if nan_from_step is not None:
        loss += tf.where(global_step >= nan_from_step, np.float32(np.nan), np.float32(0))
    return replicated.train_op(global_step=global_step), loss, global_step


def run_training(train_dir, max_steps, nan_from_step=None, hooks=(), progress=None, **kwargs):
    """Trains to `max_steps`; returns the result and the tutorial's lines printed (the
    progress lines go to the list `progress`, when given)."""
    lines = []
    with tf.Graph().as_default():
        train_op, loss, global_step = build_model(nan_from_step)
        result = towers.train(train_op, loss, global_step, str(train_dir), max_steps,
                              examples_per_step=BATCH, num_towers=NUM_TOWERS,
                              config=tf.ConfigProto(device_count={'CPU': NUM_TOWERS}),
                              hooks=hooks, printer=lambda line, flush: lines.append(line),
                              **kwargs)
    if progress is not None:
        progress.extend(line for line in lines if line.startswith('progress: '))
    return result, [line for line in lines if not line.startswith('progress: ')]


def checkpoint_steps(train_dir):
    return sorted(int(re.search(r'model\.ckpt-(\d+)\.index$', p).group(1))
                  for p in glob.glob(os.path.join(str(train_dir), 'model.ckpt-*.index')))


def saved_value(train_dir, step, name):
    reader = tf.train.NewCheckpointReader(os.path.join(str(train_dir), 'model.ckpt-%d' % step))
    return reader.get_tensor(name)


def test_runs_to_max_steps_and_logs_the_tutorial_line_every_ten_steps(tmp_path):
    progress = []
    result, lines = run_training(tmp_path, 25, progress=progress)
    assert result.steps_done == 25 and not result.interrupted
    assert [int(re.search(r'step (\d+),', l).group(1)) for l in lines] == [0, 10, 20]
    assert [line.split()[1] for line in progress] == ['11/25', '21/25', '25/25']
    pattern = (r'^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: step \d+, loss = \d+\.\d\d '
               r'\(\d+\.\d examples/sec; \d+\.\d{3} sec/batch\)$')
    assert all(re.match(pattern, line) for line in lines), lines


def test_checkpoints_at_the_interval_and_at_the_end_store_the_step(tmp_path):
    run_training(tmp_path, 25, save_checkpoint_steps=10)
    assert checkpoint_steps(tmp_path) == [10, 20, 25]
    assert saved_value(tmp_path, 25, 'global_step') == 25.0
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith('model.ckpt-25')


def test_restarted_run_continues_from_the_newest_checkpoint(tmp_path):
    run_training(tmp_path, 5)
    weights_at_5 = saved_value(tmp_path, 5, 'w')
    result, lines = run_training(tmp_path, 8, log_every_n_steps=1)
    assert [int(re.search(r'step (\d+),', l).group(1)) for l in lines] == [5, 6, 7]
    assert result.steps_done == 8 and result.timing['steps'] == 3
    # Three more steps from the restored weights, not from the initial ones.
    straight, _ = run_training(tmp_path / 'straight', 8)
    np.testing.assert_allclose(saved_value(tmp_path, 8, 'w'),
                               saved_value(tmp_path / 'straight', 8, 'w'), rtol=1e-6)
    assert not np.allclose(weights_at_5, saved_value(tmp_path, 8, 'w'))


def test_run_already_at_max_steps_does_nothing(tmp_path):
    run_training(tmp_path, 5)
    result, lines = run_training(tmp_path, 5)
    assert result.steps_done == 5 and result.timing['steps'] == 0 and lines == []


def test_nan_loss_stops_with_an_error_naming_the_step_and_saves_no_diverged_checkpoint(tmp_path):
    with pytest.raises(towers.LossDivergedError, match='at step 3') as raised:
        run_training(tmp_path, 10, nan_from_step=3, save_checkpoint_steps=1)
    assert raised.value.step == 3
    assert checkpoint_steps(tmp_path) == [1, 2, 3]


class SignalAtStep(tf.train.SessionRunHook):
    """Sends this process `signum` after the given step, as Ctrl-C or a preemption would."""

    def __init__(self, step, signum):
        self._step = step
        self._signum = signum
        self._runs = 0

    def after_run(self, run_context, run_values):
        self._runs += 1
        if self._runs == self._step:
            os.kill(os.getpid(), self._signum)


@pytest.mark.parametrize('signum', [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_ends_the_step_writes_a_final_checkpoint_and_reports_the_stop(tmp_path,
                                                                                    signum):
    result, _ = run_training(tmp_path, 100, hooks=[SignalAtStep(7, signum)])
    assert result.interrupted and result.steps_done == 7
    assert checkpoint_steps(tmp_path) == [7]
    assert saved_value(tmp_path, 7, 'global_step') == 7.0


def test_stop_signals_act_as_before_once_training_is_over(tmp_path):
    # As this process found them: Python's KeyboardInterrupt and the default for SIGTERM, or
    # ignored where a shell started it in the background.
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    run_training(tmp_path, 2)
    assert {signum: signal.getsignal(signum) for signum in before} == before


def test_checkpoints_every_n_seconds_without_a_step_interval(tmp_path):
    # Every step ends more than a microsecond after the last save.
    run_training(tmp_path, 4, save_checkpoint_secs=1e-6, save_checkpoint_steps=None)
    assert checkpoint_steps(tmp_path) == [1, 2, 3, 4]


def test_by_default_a_short_run_checkpoints_its_last_step_only(tmp_path):
    run_training(tmp_path, 12)
    assert checkpoint_steps(tmp_path) == [12]


def test_the_five_newest_checkpoints_are_kept_across_restarts(tmp_path):
    run_training(tmp_path, 4, save_checkpoint_steps=1)
    run_training(tmp_path, 8, save_checkpoint_steps=1)
    assert checkpoint_steps(tmp_path) == [4, 5, 6, 7, 8]


def test_summaries_are_written_at_the_interval(tmp_path):
    run_training(tmp_path, 12, save_summaries_steps=5)
    steps = set()
    for path in glob.glob(os.path.join(str(tmp_path), 'events.out.tfevents.*')):
        for event in tf.train.summary_iterator(path):
            if any(v.tag.startswith('tower_1/total_loss') for v in event.summary.value):
                steps.add(event.step)
    assert steps == {0, 5, 10, 11}


def test_step_timer_reports_and_logs_median_step_time_and_throughput(tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger='towers'):
        result, _ = run_training(tmp_path, 6)
    assert re.search(r'6 steps in \d+\.\d s: median \d+\.\d{3} s/step, \d+\.\d examples/sec '
                     r'on 2 tower\(s\)', caplog.text)
    timing = result.timing
    assert timing['steps'] == 6
    assert timing['median_step_sec'] > 0
    assert timing['examples_per_sec'] == pytest.approx(BATCH / timing['median_step_sec'])
    assert timing['total_sec'] >= timing['median_step_sec'] * 3
