"""Specification of the compatibility module: the one place that knows the installed TensorFlow."""
import ast
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from towers import compat
from towers.compat import slim, tf

REPO = pathlib.Path(__file__).resolve().parents[1]


def test_graph_mode_with_reference_variables_as_the_tutorials_expect():
    assert not tf.executing_eagerly()
    assert tf.get_variable('v', [1]).op.type == 'VariableV2'


@pytest.mark.parametrize('shape', [[4, 3], [4, 5, 5, 3]])
def test_slim_batch_norm_trains_and_infers(shape):
    x = tf.constant(np.random.RandomState(0).standard_normal(shape).astype(np.float32))
    trained = slim.batch_norm(x, is_training=True, scope='bn')
    inferred = slim.batch_norm(x, is_training=False, scope='bn', reuse=True)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        trained_value, inferred_value, x_value = sess.run([trained, inferred, x])
    axes = tuple(range(len(shape) - 1))
    np.testing.assert_allclose(trained_value.mean(axis=axes), 0, atol=1e-5)
    # Fresh moving statistics (mean 0, variance 1) leave the input nearly as it is.
    np.testing.assert_allclose(inferred_value, x_value, rtol=1e-2, atol=1e-2)


def test_slim_layers_build_under_arg_scope():
    with slim.arg_scope([slim.conv2d], normalizer_fn=slim.batch_norm):
        out = slim.conv2d(tf.zeros([1, 8, 8, 1]), 4, 3, scope='conv')
    assert out.shape.as_list() == [1, 8, 8, 4]
    assert sorted(v.op.name for v in tf.global_variables()) == [
        'conv/BatchNorm/beta', 'conv/BatchNorm/moving_mean', 'conv/BatchNorm/moving_variance',
        'conv/weights']


def test_tensorflow_older_than_2_16_is_refused_with_the_supported_range():
    with pytest.raises(compat.UnsupportedEnvironmentError, match=r'2\.15\.1.*2\.16 or newer'):
        compat.check_tensorflow_version('2.15.1')
    compat.check_tensorflow_version('2.16.0')
    compat.check_tensorflow_version('2.21.0')


def test_tf_keras_of_another_release_is_refused_naming_the_one_to_install():
    with pytest.raises(compat.UnsupportedEnvironmentError, match=r'tf-keras==2\.21\.\*'):
        compat.check_tf_keras_version('2.20.1', '2.21.0')
    compat.check_tf_keras_version('2.21.0', '2.21.3')


# The TF1 programs the legacy runner is tested on (in tests/data/legacy, and written out by its
# tests) import TensorFlow as their authors wrote them: under the runner that import is this
# project's `tf.compat.v1`.
# TF1 programs as users write them (`import tensorflow as tf`), run under the legacy runner.
USERS_PROGRAMS = (REPO / 'tests' / 'data' / 'legacy', REPO / 'tests' / 'data' / 'horovod')
USERS_STYLE_PROGRAMS = (REPO / 'towers' / 'benchmarks' / 'horovod_program.py',)
WRITES_USERS_PROGRAMS = REPO / 'tests' / 'test_legacy_runner.py'
# Programs run as processes of plain TensorFlow 2 (eager, v2 behaviour on): they must not import
# the compat module, whose import turns v2 behaviour off for the whole process.
PLAIN_TF2_PROCESSES = (REPO / 'towers' / 'export' / 'keras_weights.py',
                       REPO / 'towers' / 'benchmarks' / 'keras_fit.py',
                       REPO / 'tests' / 'eager_client.py')
# The one module that runs inside real TensorFlow 1.15 too (`towers-legacy --compare_tf1`): it
# imports whichever TensorFlow its process has, the runner's `tf.compat.v1` under the runner.
TF1_PROCESSES = (REPO / 'towers' / 'legacy' / 'compare' / 'probe.py',)


def _imports(path):
    """The top-level packages the Python file `path` imports (its import statements, wherever
    they are; docstrings and comments that show an import are not imports)."""
    roots = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split('.')[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split('.')[0])
    return roots


def test_only_the_compat_module_imports_tensorflow_or_tf_slim():
    offenders = []
    for path in REPO.glob('**/*.py'):
        if (path.name == 'compat.py' or '.egg-info' in str(path) or path == WRITES_USERS_PROGRAMS
                or any(folder in path.parents for folder in USERS_PROGRAMS)
                or path in USERS_STYLE_PROGRAMS or path in PLAIN_TF2_PROCESSES
                or path in TF1_PROCESSES):
            continue
        if _imports(path) & {'tensorflow', 'tf_slim', 'tf_keras'}:
            offenders.append(str(path.relative_to(REPO)))
    assert offenders == []


def test_making_an_initializer_again_after_a_run_changes_no_node_that_ran():
    """TensorFlow 2 re-marks each control input op (`_has_manual_control_dependencies`), and
    the C API warns for a node a session ran; the compat module marks an op once."""
    program = ('from towers.compat import tf\n'
               'v = tf.get_variable("v", [2])\n'
               'with tf.Session() as session:\n'
               '    session.run(tf.global_variables_initializer())\n'
               '    session.run(tf.global_variables_initializer())\n'
               'print(v.initializer.get_attr("_has_manual_control_dependencies"))\n')
    result = subprocess.run([sys.executable, '-c', program], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == 'True'
    assert 'was changed by setting attribute after it was run' not in result.stderr
