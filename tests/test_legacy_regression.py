"""Specification of live regression against an original: `regress_builders` (two graph builders,
one set of weights and batches, figures compared with tolerances), its example on the TF1 tower
program, and `regress_cifar10.py --original_dir` on a stand-in of the tutorial."""
import json
import os
import subprocess
import sys
import types

import numpy as np
import pytest

import towers
from models.cifar10 import live_regression as cifar10_live
from towers import legacy, regression
from towers.compat import tf

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEGACY_DIR = os.path.join(REPO, 'tests', 'data', 'legacy')
GOLDEN = os.path.join(REPO, 'tests', 'data', 'regression', 'cifar10', 'golden_train_seed0.json')
NUM_TOWERS = 2
_rng = np.random.RandomState(0)
BATCHES = [(_rng.standard_normal([4, 3]).astype(np.float32),
            _rng.standard_normal([4, 1]).astype(np.float32)) for _ in range(3)]
WEIGHTS = {'linear/w': _rng.standard_normal([3, 1]).astype(np.float32),
           'linear/b': np.array([0.5], np.float32)}
TOLERANCES = {'tower losses': 1e-6}


def squared_error(x, y, scale):
    with tf.variable_scope('linear'):
        w = tf.get_variable('w', [3, 1])
        b = tf.get_variable('b', [1])
    tf.add_to_collection('losses', tf.reduce_mean(tf.square(scale * tf.matmul(x, w) + b - y)))


def original_tower_loss(scope, x, y):
    """An original's `tower_loss`, TF1 style."""
    squared_error(x, y, 1.0)
    return tf.add_n(tf.get_collection('losses', scope), name='total_loss')


def original_average_gradients(tower_grads):
    """An original's `average_gradients`, TF1 style."""
    return [(tf.reduce_mean(tf.stack([g for g, _ in pairs]), 0), pairs[0][1])
            for pairs in zip(*tower_grads)]


def original_build(inputs, setup):
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    built = regression.classic_towers(original_tower_loss, original_average_gradients, inputs,
                                      setup, optimizer)
    return {'train': optimizer.apply_gradients(built.grads), 'losses': built.losses}


class LinearRecipe(towers.Recipe):
    """The port: the same linear model, with a scale of its prediction (1 in a faithful port)."""

    def __init__(self, scale):
        self.scale = scale

    def learning_rate(self, global_step, num_towers):
        return 0.1

    def tower_fn(self, batch):
        squared_error(*batch, self.scale)


def port_build(scale=1.0):
    def build(inputs, setup):
        training = towers.assemble(LinearRecipe(scale), lambda: inputs, setup)
        return {'train': training.train_ops['total'],
                'losses': training.replicated.tower_losses}
    return build


def tower_losses(replay, batches):
    return {'tower losses': [replay.run((replay.outputs['losses'], replay.outputs['train']),
                                        batch)[0] for batch in batches]}


def regress(port, initial_values=lambda shapes: WEIGHTS, tolerances=TOLERANCES):
    return regression.regress_builders(original_build, port, initial_values, BATCHES,
                                       tower_losses, tolerances, NUM_TOWERS)


def test_a_port_equal_to_its_original_passes_every_figure(capsys):
    deviations = regress(port_build())
    assert len(deviations) == 1 + len(BATCHES) * NUM_TOWERS
    assert regression.report(deviations)
    assert 'OK: all 7 figures within tolerance' in capsys.readouterr().out


def test_a_port_with_one_changed_constant_fails_naming_the_figure(capsys):
    deviations = regress(port_build(scale=1.01))
    failed = [d for d in deviations if d.failed]
    assert failed and {d.figure for d in failed} == {'tower losses'}
    assert not regression.report(deviations)
    out = capsys.readouterr().out
    assert 'FAILED: %d of 7 figures beyond tolerance' % len(failed) in out
    assert 'tower losses[0][0]' in out


def test_a_relative_tolerance_is_relative_to_the_originals_value():
    deviations = regression.compare_figures('r', {'norm': 100.0}, {'norm': 100.5},
                                            {'norm': regression.Relative(1e-2)})
    assert [d.error for d in deviations if d.what == 'norm'] == [0.005]
    assert not any(d.failed for d in deviations)


def test_a_figure_without_a_tolerance_is_an_error_naming_it():
    with pytest.raises(towers.TowersError, match=r'the figures of the original \(tower losses\) '
                                                 r'are not those given tolerances \(\)'):
        regress(port_build(), tolerances={})


def test_a_variable_without_an_initial_value_is_an_error_naming_the_side():
    with pytest.raises(towers.TowersError, match='^the original: no initial value for '
                                                 'variable.* linear/b'):
        regress(port_build(), initial_values=lambda shapes: {'linear/w': WEIGHTS['linear/w']})


def test_an_original_dir_without_the_tutorials_modules_is_an_error_naming_them(tmp_path):
    with pytest.raises(towers.TowersError, match='--original_dir %s has no cifar10.py, '
                                                 'cifar10_multi_gpu_train.py' % tmp_path):
        legacy.import_originals(str(tmp_path), ['cifar10', 'cifar10_multi_gpu_train'],
                                '--original_dir')


def test_an_original_whose_tower_loss_reads_its_own_input_is_an_error_naming_it(tmp_path):
    originals = {'cifar10_multi_gpu_train': types.SimpleNamespace(tower_loss=lambda scope: 0)}
    with pytest.raises(towers.TowersError, match=r"tower_loss takes \(scope\); the live "
                                                 r"regression runs the tutorial's "
                                                 r"tower_loss\(scope, images, labels\)"):
        cifar10_live.LiveRegression(originals, str(tmp_path))


def test_the_example_proves_the_tf1_program_and_its_port_equal():
    result = subprocess.run([sys.executable, os.path.join(LEGACY_DIR, 'regress_example.py')],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'tower_program.py (original) vs tower_port.py (port), 2 towers' in result.stdout
    assert 'OK: all 14 figures within tolerance' in result.stdout


def test_regress_cifar10_against_an_original_dir_compares_training_and_checkpoints(tmp_path):
    golden = tmp_path / 'golden.json'
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, 'scripts', 'regress_cifar10.py'), '--original_dir',
         os.path.join(LEGACY_DIR, 'cifar10_original'), '--tower_counts', '1', '--steps', '2',
         '--write_golden', str(golden)],
        cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    for title in ('original vs project: 1 tower(s), seed 0, 2 steps',
                  "evaluation of the original's checkpoint by the original and the project",
                  "evaluation of the project's checkpoint by the original and the project"):
        assert title in result.stdout
    assert 'OK: all' in result.stdout
    written = json.loads(golden.read_text())['runs']
    with open(GOLDEN) as f:
        assert list(written) == ['1'] and set(written['1']) == set(json.load(f)['runs']['1'])


def test_regress_cifar10_against_the_original_on_tf1_15_is_within_the_goldens_tolerance(
        tmp_path, tf1_python):
    golden = tmp_path / 'golden.json'
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, 'scripts', 'regress_cifar10.py'), '--original_dir',
         os.path.join(LEGACY_DIR, 'cifar10_original'), '--original_tf1', '--tf1_python',
         tf1_python, '--tower_counts', '2', '--steps', '20', '--write_golden', str(golden)],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'the original trains on real TensorFlow 1.15.5' in result.stdout
    # TF 1.15's checkpoint evaluated here, the project's on TF 1.15 by the original's network.
    for title in ('original on TensorFlow 1.15 vs project: 2 tower(s), seed 0, 20 steps',
                  "evaluation of the original's checkpoint by the original on TensorFlow 1.15 "
                  "and the project",
                  "evaluation of the project's checkpoint by the original on TensorFlow 1.15 "
                  "and the project"):
        assert title in result.stdout
    assert 'OK: all' in result.stdout
    written = json.loads(golden.read_text())
    assert 'real TensorFlow 1.15.5' in written['source']
    assert len(written['runs']['2']['tower_losses_per_step']) == 20
