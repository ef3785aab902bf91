"""Specification of the 2018 pattern under the runner: a program written against TF 1.x's API
only (a compiled tf.keras model, model_to_estimator, MirroredStrategy(num_gpus=N) in its
RunConfig, a timing SessionRunHook, evaluate) runs unchanged on 1, 2 and 4 devices; N devices
of per-replica batch b train as one device on N*b; its checkpoint restores into this project's
Fashion-MNIST workload, which evaluates it equal."""
import json
import os
import runpy
import subprocess
import sys

import numpy as np
import pytest

from towers import evaluation
from towers.compat import tf

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(REPO, 'tests', 'data', 'legacy', 'keras_estimator_program.py')
GLOBAL_BATCH = 32
STEPS = 20


@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    """{N: (model_dir, report)} of the program on N = 1, 2, 4 devices, per-replica batch 32/N."""
    folder = tmp_path_factory.mktemp('keras_estimator_program')
    results = {}
    for devices in (1, 2, 4):
        model_dir, report = str(folder / ('model%d' % devices)), str(folder / ('%d.json' % devices))
        run = subprocess.run(
            [sys.executable, '-m', 'towers.legacy', '--legacy_devices', str(devices), PROGRAM,
             '--num_gpus', str(devices), '--batch_size', str(GLOBAL_BATCH // devices),
             '--steps', str(STEPS), '--model_dir', model_dir, '--report', report],
            cwd=REPO, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr[-3000:]
        assert '%d GPU(s): %d batches of %d per GPU' % (devices, STEPS, GLOBAL_BATCH // devices) \
            in run.stdout
        with open(report) as f:
            results[devices] = model_dir, json.load(f)
    return results


def test_it_runs_unchanged_on_1_2_and_4_devices_and_evaluates(runs):
    for devices, (_, report) in runs.items():
        assert report['batches'] == STEPS
        assert report['metrics']['global_step'] == STEPS
        # Ten classes: chance is 0.1; 20 steps of Adam learn the bands.
        assert report['metrics']['acc'] > 0.5, (devices, report['metrics'])


def test_n_devices_of_batch_b_train_as_one_device_of_batch_n_times_b(runs):
    one = runs[1][0]
    names = [name for name, _ in tf.train.list_variables(one)]
    assert {'conv1/kernel', 'dense2/bias', 'conv1/kernel/Adam'} <= set(names)
    for devices in (2, 4):
        model_dir = runs[devices][0]
        assert [name for name, _ in tf.train.list_variables(model_dir)] == names
        for name in names:
            np.testing.assert_allclose(tf.train.load_variable(model_dir, name),
                                       tf.train.load_variable(one, name), rtol=1e-5, atol=1e-5,
                                       err_msg='%s on %d devices' % (name, devices))


def test_its_checkpoint_restores_into_the_fashion_mnist_workload_and_evaluates_equal(runs):
    model_dir, report = runs[2]
    network = runpy.run_path(os.path.join(REPO, 'scripts', 'eval_fashion_mnist.py'))
    images = np.asarray(report['images'], np.uint8)
    probabilities = evaluation.predict(network['_probabilities'],
                                       tf.train.latest_checkpoint(model_dir), images,
                                       32)['probabilities']
    np.testing.assert_allclose(probabilities, report['probabilities'], atol=1e-6)
    accuracy = np.mean(np.argmax(probabilities, 1) == np.asarray(report['labels']))
    np.testing.assert_allclose(accuracy, report['metrics']['acc'], atol=1e-6)
