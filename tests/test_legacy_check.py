"""Specification of `towers-legacy --check`: the names a TF1-era script and its local modules use,
found without running them, each said to be provided or not (with its replacement), and an exit
status that says whether all are."""
import os
import subprocess
import sys
import textwrap

from towers.legacy import check

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEGACY_DIR = os.path.join(REPO, 'tests', 'data', 'legacy')


def run_check(script):
    return subprocess.run([sys.executable, '-m', 'towers.legacy', '--check', script], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def write(path, source):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return str(path)


def names(uses):
    return {(use.module, use.attributes) for use in uses}


def test_names_are_read_through_aliases_imports_and_assignments(tmp_path):
    script = write(tmp_path / 'train.py', '''
        import numpy as np
        import tensorflow.compat.v1 as tf
        from tensorflow.contrib import slim as contrib_slim
        flags = tf.app.flags
        flags.DEFINE_string('log_dir', '', '')
        net = contrib_slim.conv2d(tf.zeros([1, 2, 2, 1]), np.int(3), [1, 1])
        ''')
    uses, _ = check.read_program(script, [str(tmp_path)])
    assert {('tensorflow', ()), ('tensorflow.contrib', ('slim',)),
            ('tensorflow', ('app', 'flags', 'DEFINE_string')),
            ('tensorflow.contrib', ('slim', 'conv2d')), ('tensorflow', ('zeros',)),
            ('numpy', ('int',))} <= names(uses)


def test_local_modules_are_followed_and_installed_ones_are_not(tmp_path):
    script = write(tmp_path / 'train.py', '''
        import os
        from nets import factory
        ''')
    write(tmp_path / 'nets' / '__init__.py', '')
    write(tmp_path / 'nets' / 'factory.py', '''
        from . import layers
        ''')
    write(tmp_path / 'nets' / 'layers.py', '''
        import tensorflow as tf
        relu = tf.nn.relu
        ''')
    uses, files = check.read_program(script, [str(tmp_path)])
    assert sorted(os.path.relpath(f, str(tmp_path)) for f in files) == [
        os.path.join('nets', name) for name in ('__init__.py', 'factory.py', 'layers.py')] + [
        'train.py']
    assert ('tensorflow', ('nn', 'relu')) in names(uses)


def test_python_2_names_ndarray_tostring_and_syntax_errors_are_reported(tmp_path):
    script = write(tmp_path / 'train.py', '''
        import cPickle
        import old
        for i in xrange(3):
            record = i.tostring()
        ''')
    write(tmp_path / 'old.py', 'print "hello"\n')
    uses, _ = check.read_program(script, [str(tmp_path)])
    assert [use.attributes[0] for use in uses if use.module is None] == [
        'import cPickle', '.tostring()', 'xrange', 'not Python 3 (SyntaxError)']


def test_a_program_using_only_what_the_runner_provides_passes_with_its_names_listed():
    result = run_check(os.path.join(LEGACY_DIR, 'mnist_program.py'))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1].startswith('towers-legacy --check: the runner provides all ')
    for name, provider in (
            ('tensorflow.examples.tutorials.mnist.input_data.read_data_sets', 'towers-legacy'),
            ('tf.contrib.layers.flatten', 'tf-slim'), ('tf.NodeDef', 'TensorFlow'),
            ('tf.app.flags.DEFINE_integer', 'absl')):
        row = next(line for line in lines if line.startswith(name + ' '))
        assert row.endswith(provider)


def test_a_program_using_what_the_runner_lacks_fails_naming_it_and_its_replacement():
    result = run_check(os.path.join(LEGACY_DIR, 'compat_v1_program.py'))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[-1] == ('error: 1 of %s names are not provided: '
                         'tf.contrib.quantize.create_training_graph'
                         % lines[0].rsplit(', ', 1)[1].split()[0])
    assert lines[2].startswith('tf.contrib.quantize.create_training_graph ')
    assert lines[2].endswith('NOT PROVIDED: tf.contrib left TensorFlow in 2.0 and towers-legacy '
                             'does not provide tf.contrib.quantize; use the TensorFlow Model '
                             'Optimization Toolkit (TensorFlow 2 has no graph-rewrite '
                             'quantization)')
    for name, provider in (('np.int', 'towers-legacy (NumPy alias)'),
                           ('tf.contrib.nccl.all_sum', 'towers-legacy'),
                           ('tf.contrib.framework.python.ops.arg_scope', 'tf-slim'),
                           ('tensorflow.python.client.device_lib', 'TensorFlow')):
        assert next(line for line in lines if line.startswith(name + ' ')).endswith(provider)
