"""Specification of the step timing: the reference's figures, logged and written by every run."""
import json
import logging
import os

import numpy as np
import pytest

import towers
from towers.compat import tf
from towers.training.loop import TIMING_FILE

GLOBAL_BATCH = 512 * 2  # per tower x towers


def test_total_time_is_the_sum_of_the_step_times(timed_steps):
    summary = timed_steps([0.5, 0.25, 0.25], GLOBAL_BATCH).summary()
    assert summary['step_secs'] == [0.5, 0.25, 0.25]
    assert summary['sum_step_sec'] == 1.0
    assert summary['total_sec'] == 4.0  # wall time from the first step's start until now


def test_images_per_sec_is_the_global_batch_over_the_mean_step_time(timed_steps):
    summary = timed_steps([0.5, 0.25, 0.25, 0.2], GLOBAL_BATCH).summary()
    assert summary['mean_step_sec'] == pytest.approx(0.3)
    assert summary['examples_per_sec_mean'] == pytest.approx(1024 / 0.3)


def test_median_rate_is_not_moved_by_one_slow_first_step(timed_steps):
    summary = timed_steps([10.0, 0.25, 0.25, 0.25, 0.25], GLOBAL_BATCH).summary()
    assert summary['median_step_sec'] == 0.25
    assert summary['examples_per_sec'] == 1024 / 0.25
    assert summary['examples_per_sec_mean'] < 1024 / 2


def test_no_steps_give_no_step_time_figures(timed_steps):
    summary = timed_steps([], GLOBAL_BATCH).summary()
    assert summary['steps'] == 0 and summary['step_secs'] == []
    assert summary['mean_step_sec'] is None and summary['examples_per_sec_mean'] is None


def linear_step():
    global_step = tf.train.get_or_create_global_step()
    rs = np.random.RandomState(0)
    features = tf.constant(rs.standard_normal([4, 3]).astype(np.float32))
    weights = tf.get_variable('w', [3, 1])
    loss = tf.reduce_mean(tf.square(tf.matmul(features, weights)))
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step)
    return train_op, loss, global_step


def test_training_logs_its_timing_and_writes_it_to_the_train_dir(tmp_path, caplog):
    train_op, loss, global_step = linear_step()
    with caplog.at_level(logging.INFO, logger='towers'):
        result = towers.train(train_op, loss, global_step, str(tmp_path), 5, examples_per_step=4,
                              num_towers=2, printer=lambda line, flush: None)
    written = json.loads((tmp_path / TIMING_FILE).read_text())
    assert written == dict(result.timing, num_towers=2)
    assert len(written['step_secs']) == 5
    assert 'mean %.3f s/step' % written['mean_step_sec'] in caplog.text


def test_a_run_without_steps_leaves_the_previous_timing_file(tmp_path):
    train_op, loss, global_step = linear_step()
    printer = lambda line, flush: None  # noqa: E731
    towers.train(train_op, loss, global_step, str(tmp_path), 3, 4, printer=printer)
    first = (tmp_path / TIMING_FILE).read_text()
    towers.train(train_op, loss, global_step, str(tmp_path), 3, 4, printer=printer)
    assert (tmp_path / TIMING_FILE).read_text() == first
    assert os.path.exists(str(tmp_path / 'model.ckpt-3.index'))
