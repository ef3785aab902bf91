"""`scripts/estimator_tests.py`: a checkout's test files run unchanged on TF 1.15 and under the
runner, and the tests TF 1.15 passes counted on each side, those that read a private name of
TF 1's implementation left out with why. Checked on a small checkout of the same layout."""
import json
import os
import subprocess
import sys

import pytest

from towers.legacy.compare import suite

SCRIPT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'scripts',
                      'estimator_tests.py')
PACKAGE = os.path.join('tensorflow_estimator', 'python', 'estimator')

TEST_FILE = '''
import tensorflow as tf
from tensorflow_estimator.python.estimator import training
from tensorflow_estimator.python.estimator.canned.v1 import toy_testing_utils


class ToyTest(tf.test.TestCase):

    def test_train_spec_keeps_max_steps(self):
        self.assertEqual(7, training.TrainSpec(input_fn=lambda: None, max_steps=7).max_steps)

    def test_testing_utils_import_from_the_checkout(self):
        self.assertEqual(3, toy_testing_utils.three())

    def test_reads_a_private_name(self):
        self.assertTrue(callable(training._TrainingExecutor))

    def test_is_tensorflow_1(self):
        self.assertTrue(tf.__version__.startswith('1.'))

    def test_skipped(self):
        self.skipTest('not here')


class PrivateInItsConstructorTest(tf.test.TestCase):

    def __init__(self, methodName='runTest'):
        tf.test.TestCase.__init__(self, methodName)
        self.executor = training._TrainingExecutor

    def test_constructed(self):
        self.assertTrue(callable(self.executor))


if __name__ == '__main__':
    tf.test.main()
'''


def _checkout(root):
    utils = os.path.join(root, PACKAGE, 'canned', 'v1')
    os.makedirs(utils)
    for level in range(5):
        # tensorflow_estimator/ ... canned/v1/ are packages, as in a checkout, that also take
        # the installed modules of their names (this checkout holds only a test and its utils)
        folder = os.path.join(root, *os.path.relpath(utils, root).split(os.sep)[:level + 1])
        with open(os.path.join(folder, '__init__.py'), 'w') as f:
            f.write('import pkgutil\n__path__ = pkgutil.extend_path(__path__, __name__)\n')
    with open(os.path.join(utils, 'toy_testing_utils.py'), 'w') as f:
        f.write('def three():\n    return 3\n')
    with open(os.path.join(root, PACKAGE, 'toy_test.py'), 'w') as f:
        f.write(TEST_FILE)
    return root


def test_counts_tf1_passes_under_the_runner_leaving_out_private_reads(tmp_path, tf1_python):
    checkout = _checkout(str(tmp_path / 'checkout'))
    report = tmp_path / 'report.json'
    done = subprocess.run(
        [sys.executable, SCRIPT, '--checkout', checkout, '--files', 'toy_test',
         '--output_dir', str(tmp_path / 'out'), '--tf1_python', tf1_python,
         '--report', str(report), '--require', '0.9'],
        capture_output=True, text=True, env=dict(os.environ, TOWERS_TF1_PYTHON=tf1_python))
    assert done.returncode == 1, done.stdout + done.stderr
    figures = json.loads(report.read_text())['files']['toy_test']
    # a class whose constructor reads a private name fails its own tests, not the file's
    assert figures['tf1_passed'] == 5
    assert sorted(figures['left_out']) == ['PrivateInItsConstructorTest.test_constructed',
                                           'ToyTest.test_reads_a_private_name']
    assert all('training._TrainingExecutor' in why for why in figures['left_out'].values())
    assert (figures['counted'], figures['runner_passed']) == (3, 2)
    assert list(figures['runner_failing']) == ['ToyTest.test_is_tensorflow_1']
    assert 'the runner passes   2 of   3' in done.stdout


def test_a_checkout_without_the_file_is_one_error_line(tmp_path):
    done = subprocess.run([sys.executable, SCRIPT, '--checkout', str(tmp_path),
                           '--files', 'estimator_test'], capture_output=True, text=True)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        'error: --checkout %s has no %s/estimator_test.py: give a tensorflow/estimator '
        'checkout at v1.15.1' % (tmp_path, PACKAGE)]


@pytest.mark.parametrize('line, name', [
    ("AttributeError: tensorflow_estimator.python.estimator.training._TrainingExecutor: "
     "a private name of TensorFlow 1's implementation, which the runner does not give",
     'training._TrainingExecutor'),
    ("AttributeError: <module 'tensorflow_estimator.python.estimator.hooks.hooks' (<x>)> does "
     "not have the attribute '_StopAtCheckpointStepHook'", 'hooks._StopAtCheckpointStepHook'),
    ("AttributeError: 'Estimator' object has no attribute '_model_dir'", None),
    ('AssertionError: TypeError not raised', None)])
def test_a_private_read_is_told_by_its_last_line(line, name):
    assert suite.private_name(line) == name
