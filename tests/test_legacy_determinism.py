"""Specification of `towers-legacy --deterministic --seed N`: a TF1 script's runs repeated."""
import os
import subprocess
import sys
import textwrap

import pytest

from checkpoint_bytes import differing

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(REPO, 'tests', 'data', 'legacy', 'tower_program.py')
# A TF1 program of two towers on a shuffled tf.data input with dropout: every step draws.
DATA_PROGRAM = '''
    import sys
    import numpy as np
    import tensorflow as tf

    with tf.Graph().as_default():
        rng = np.random.RandomState(0)
        data = tf.data.Dataset.from_tensor_slices(
            (rng.normal(size=[64, 4]).astype(np.float32), rng.randint(3, size=64)))
        features, labels = tf.data.make_one_shot_iterator(
            data.shuffle(64).repeat().batch(8)).get_next()
        optimizer = tf.train.GradientDescentOptimizer(0.1)
        grads = []
        for tower, (x, y) in enumerate(zip(tf.split(features, 2), tf.split(labels, 2))):
            with tf.device('/gpu:%d' % tower), tf.variable_scope('net', reuse=tower > 0):
                hidden = tf.nn.dropout(tf.layers.dense(x, 16, tf.nn.relu), rate=0.5)
                loss = tf.losses.sparse_softmax_cross_entropy(y, tf.layers.dense(hidden, 3))
                grads.append(optimizer.compute_gradients(loss))
        train = optimizer.apply_gradients(
            [(tf.add_n([g for g, _ in pairs]) / 2, pairs[0][1]) for pairs in zip(*grads)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(5):
                sess.run(train)
            tf.train.Saver().save(sess, sys.argv[1])
'''


def run_legacy(*args):
    result = subprocess.run([sys.executable, '-m', 'towers.legacy', '--legacy_devices', '2']
                            + list(args), cwd=REPO, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.fixture(scope='module')
def program(tmp_path_factory):
    path = tmp_path_factory.mktemp('program') / 'program.py'
    path.write_text(textwrap.dedent(DATA_PROGRAM))
    return str(path)


def test_a_tf1_program_on_tf_data_trains_to_the_same_bytes_twice(program, tmp_path):
    runs = [str(tmp_path / name / 'model.ckpt') for name in ('first', 'second')]
    for checkpoint in runs:
        result = run_legacy('--deterministic', '--seed', '1', program, checkpoint)
    assert differing(*runs) == []
    assert 'op determinism, graph seed 1' in result.stderr


def test_the_tower_program_starts_from_the_same_weights_twice(tmp_path):
    """Its queue runner's shuffle samples what its thread has enqueued so far, which timing
    decides: its training is not repeatable, its initial weights (random without a seed) are."""
    def initial(name):
        run_legacy('--deterministic', '--seed', '1', PROGRAM, '--num_gpus', '2',
                   '--train_dir', str(tmp_path / name), '--data_file',
                   str(tmp_path / 'data' / 'train.bin'), '--max_steps', '0')
        return str(tmp_path / name / 'model.ckpt-0')
    assert differing(initial('first'), initial('second')) == []
