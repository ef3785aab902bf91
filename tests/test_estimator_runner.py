"""Specification of Estimator programs under the legacy runner: a TF1 program using
`tf.estimator` runs unchanged, resumes after SIGTERM, and stops with one `error:` line on what
the Estimator cannot use."""
import os
import re
import signal
import subprocess
import sys

import pytest

from towers.compat import tf

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(REPO, 'tests', 'data', 'legacy', 'estimator_program.py')
COMMAND = [sys.executable, '-m', 'towers.legacy']


def error_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith('error:')]


def test_an_estimator_run_stopped_by_sigterm_resumes_from_its_last_step(tmp_path):
    model_dir = str(tmp_path / 'model')
    flags = [PROGRAM, '--model_dir', model_dir, '--save_checkpoints_steps', '100000']
    process = subprocess.Popen(COMMAND + flags + ['--max_steps', '100000'], cwd=REPO,
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    seen = []
    for line in process.stderr:
        seen.append(line)
        if 'step = 21 ' in line:
            process.send_signal(signal.SIGTERM)
            break
    rest = process.communicate(timeout=120)[1]
    assert process.returncode == 128 + signal.SIGTERM, ''.join(seen) + rest
    assert 'SIGTERM received: stopping cleanly' in rest
    first = ''.join(seen)
    assert 'Saving checkpoints for 0 into %s/model.ckpt.' % model_dir in first
    assert 'loss = ' in first and 'global_step/sec: ' in first
    stopped_at = int(tf.train.load_variable(tf.train.latest_checkpoint(model_dir),
                                            'global_step'))
    assert stopped_at >= 21
    resumed = subprocess.run(COMMAND + flags + ['--max_steps', str(stopped_at + 5)], cwd=REPO,
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert 'loss = ' in resumed.stderr and 'step = %d' % (stopped_at + 1) in resumed.stderr
    assert 'Loss for final step: ' in resumed.stderr
    assert 'Saving dict for global step %d: accuracy = ' % (stopped_at + 5) in resumed.stderr
    assert 'evaluation: accuracy' in resumed.stdout
    assert 'global_step %d' % (stopped_at + 5) in resumed.stdout


FAULTY = '''
import sys
import numpy as np
import tensorflow as tf

fault = sys.argv[1]

def input_fn():
    x = tf.constant(np.zeros([4, 2], np.float32))
    y = tf.constant(np.zeros([4], np.int64))
    if fault == 'input':
        return x, y, y
    return {'x': x}, y

def model_fn(features, labels, mode):
    logits = tf.layers.dense(features['x'], 2)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, tf.train.get_global_step())
    if fault == 'loss':
        return tf.estimator.EstimatorSpec(mode, train_op=train_op)
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)

model_dir = sys.argv[2]
estimator = tf.estimator.Estimator(model_fn, model_dir=model_dir)
estimator.train(input_fn, steps=1)
'''


@pytest.mark.parametrize('fault, line, expected', [
    ('input', 25, 'the input_fn input_fn() returned a tuple of 3 elements: expected '
                  '(features, labels)'),
    ('loss', 20, "Missing loss. An EstimatorSpec for mode 'train' needs one"),
    ('model_dir', 24, 'is a file: expected a directory'),
])
def test_what_an_estimator_cannot_use_is_one_error_line(tmp_path, fault, line, expected):
    script = tmp_path / 'faulty.py'
    script.write_text(FAULTY)
    model_dir = tmp_path / 'model'
    if fault == 'model_dir':
        model_dir.write_text('not a directory')
    result = subprocess.run(COMMAND + [str(script), fault, str(model_dir)], cwd=REPO,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 1
    errors = error_lines(result.stderr)
    assert len(errors) == 1 and 'Traceback' not in result.stderr, result.stderr
    assert errors[0].startswith('error: %s:%d: ' % (script, line)), errors
    assert expected in errors[0]
    assert not (model_dir.is_dir() and os.listdir(model_dir))


def test_a_replicate_model_fn_program_trains_towers_on_its_gpus_evaluates_and_predicts(
        tmp_path):
    model_dir = str(tmp_path / 'model')
    program = os.path.join(REPO, 'tests', 'data', 'legacy', 'replicate_program.py')
    result = subprocess.run(COMMAND + ['--legacy_devices', '2', program, '--model_dir',
                                       model_dir], cwd=REPO, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert 'towers on 2 GPU(s): /device:GPU:0, /device:GPU:1' in result.stdout
    evaluation = re.search(r'evaluation: accuracy (\S+) loss \S+ global_step 60; predicted '
                           r'(\d+) of 16 right', result.stdout)
    assert evaluation and float(evaluation.group(1)) > 0.8 and int(evaluation.group(2)) >= 14
    with open(os.path.join(model_dir, 'graph.pbtxt')) as f:
        graph = f.read()
    # The second tower's ops on the second device, its variables shared with the first's.
    assert re.search(r'name: "tower_1/hidden/MatMul"\n\s+op: "MatMul"[^}]*device: '
                     r'"/device:CPU:1"', graph)
    assert 'name: "tower_1/hidden/kernel"' not in graph
