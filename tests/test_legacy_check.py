"""Specification of `towers-legacy --check`: the names a TF1-era script and its local modules use,
found without running them, each said to be provided or not (with its replacement), and an exit
status that says whether all are."""
import os
import subprocess
import sys
import sysconfig
import textwrap
import types

import numpy as np
import pytest

from towers.compat import tf
from towers.errors import EXIT_ERROR
from towers.legacy import check, program, runner
from towers.legacy.modules import Usage

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEGACY_DIR = os.path.join(REPO, 'tests', 'data', 'legacy')


def run_check(script, **environment):
    return subprocess.run([sys.executable, '-m', 'towers.legacy', '--check', script], cwd=REPO,
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **environment))


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
    uses, _ = program.read_program(script, [str(tmp_path)])
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
    uses, files = program.read_program(script, [str(tmp_path)])
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
    uses, _ = program.read_program(script, [str(tmp_path)])
    assert [use.attributes[0] for use in uses if use.module is None] == [
        'import cPickle', '.tostring()', 'xrange', 'not Python 3 (SyntaxError)']


def test_python_2_names_in_branches_that_run_only_on_python_2_are_not_uses(tmp_path):
    script = write(tmp_path / 'train.py', '''
        import sys
        import six
        from six import PY2, PY3
        if six.PY2:
            text = unicode
        else:
            text = str
        if not PY3:
            numbers = xrange
        if sys.version_info[0] == 2:
            read = raw_input
        if sys.version_info >= (3, 0):
            pass
        else:
            base = basestring
        kind = long if PY2 else int
        try:
            line = raw_input()
        except NameError:
            line = input()
        if six.PY3:
            loop = xrange
        ''')
    uses, _ = program.read_program(script, [str(tmp_path)])
    assert [(use.attributes[0], use.where.rsplit(os.sep, 1)[-1]) for use in uses
            if use.module is None] == [('xrange', 'train.py:23')]


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


def test_installed_packages_are_not_read_also_where_pythonpath_names_their_folder(tmp_path):
    script = write(tmp_path / 'program' / 'train.py', '''
        import mine
        import pandas_like
        import vendored
        ''')
    uses_np_strings = 'import numpy as np\nupper = np.strings.upper\n'
    site_packages = tmp_path / 'lib' / 'site-packages'
    write(site_packages / 'pandas_like' / '__init__.py', uses_np_strings)
    write(tmp_path / 'target' / 'vendored' / '__init__.py', uses_np_strings)
    write(tmp_path / 'target' / 'vendored-1.0.dist-info' / 'RECORD',
          'vendored/__init__.py,sha256=x,30\nvendored-1.0.dist-info/RECORD,,\n')
    write(tmp_path / 'source' / 'mine' / '__init__.py', 'import tensorflow as tf\n')
    write(tmp_path / 'source' / 'mine.egg-info' / 'SOURCES.txt', 'mine/__init__.py\n')
    _, files = program.read_program(script, [str(tmp_path / 'program'), str(site_packages),
                                           str(tmp_path / 'target'), str(tmp_path / 'source')])
    assert [os.path.relpath(f, str(tmp_path)) for f in files] == [
        os.path.join('program', 'train.py'), os.path.join('source', 'mine', '__init__.py')]


def test_files_of_python_and_of_site_packages_are_installed_and_the_users_are_not(tmp_path):
    assert program.installed(np.__file__)
    assert program.installed(os.path.join(sysconfig.get_paths()['stdlib'], 'os.py'))
    assert program.installed(str(tmp_path / 'dist-packages' / 'lib.py'))
    assert not program.installed(str(tmp_path / 'train.py'))


def test_import_star_is_a_use_of_the_module_not_of_a_name_star(tmp_path):
    script = write(tmp_path / 'train.py', '''
        from numpy import *
        from tensorflow.contrib.slim import *
        ''')
    uses, _ = program.read_program(script, [str(tmp_path)])
    assert names(uses) == {('numpy', ()), ('tensorflow.contrib.slim', ())}


@pytest.mark.parametrize('name', ['strings', '_core', 'char', 'tests'])
def test_numpys_own_names_and_submodules_are_never_reported(name):
    assert check._look_up_numpy((name,)) is None


def test_numpy_1s_array_functions_under_np_lib_are_provided_and_a_missing_one_is_named():
    assert check._look_up_numpy(('lib', 'pad'))[1:] == ('towers-legacy (NumPy alias)', None)
    assert check._look_up_numpy(('lib', 'stride_tricks')) is None
    assert check._look_up_numpy(('lib', 'no_such_function'))[1] is None


def test_a_name_numpy_2_removed_is_reported():
    assert check._look_up_numpy(('byte_bounds',))[1:] == (
        None, '`np.byte_bounds` was removed in the NumPy 2.0 release. Now it\'s available '
              'under `np.lib.array_utils.byte_bounds`')


@pytest.fixture
def fake_tensorflow(monkeypatch):
    """A module 'legacy_fake_tf' with a stub marked missing, a function `FAILS_WHEN_CALLED`
    names, a class with a marked method and a working one, and a working function."""
    module = types.ModuleType('legacy_fake_tf')

    def stub():
        raise NotImplementedError

    def works():
        return 0

    class Spec:
        def merge_from(self, other):
            raise NotImplementedError

        def to_string(self):
            return ''

    stub.__towers_legacy_missing__ = 'the runner does not provide it yet'
    Spec.merge_from.__towers_legacy_missing__ = 'Spec is immutable here'
    works.__module__ = Spec.__module__ = 'legacy_fake_tf'
    module.__dict__.update(stub=stub, Spec=Spec, works=works)
    monkeypatch.setitem(sys.modules, 'legacy_fake_tf', module)
    return module


@pytest.mark.parametrize('attributes, expected', [
    (('stub',), ('legacy_fake_tf.stub', None, 'the runner does not provide it yet')),
    (('Spec', 'merge_from'), ('legacy_fake_tf.Spec.merge_from', None,
                              'Spec is immutable here')),
    (('Spec', 'to_string'), ('legacy_fake_tf.Spec', 'Python', None)),
    (('works',), ('legacy_fake_tf.works', 'Python', None))])
def test_a_name_whose_object_fails_when_called_is_not_provided_and_says_why(
        fake_tensorflow, attributes, expected):
    assert check.look_up(program.Use('legacy_fake_tf', attributes, 'train.py:1')) == expected


@pytest.fixture(scope='module')
def site_packages_check(tmp_path_factory):
    """--check of a script that imports installed packages, with site-packages on PYTHONPATH,
    and calls tf.keras's model_to_estimator (tf-keras' raises, the runner's replaces it)."""
    script = write(tmp_path_factory.mktemp('legacy_check') / 'train.py', '''
        import matplotlib.pyplot as plt
        import sklearn.metrics
        import tensorflow as tf
        estimator = tf.keras.estimator.model_to_estimator(keras_model=None)
        ''')
    return run_check(script, PYTHONPATH=sysconfig.get_paths()['purelib'])


def test_with_site_packages_on_pythonpath_only_the_script_is_read(site_packages_check):
    assert ': 1 file read, ' in site_packages_check.stdout.splitlines()[0]


def test_model_to_estimator_of_tf_keras_is_the_runners_and_provided(site_packages_check):
    assert site_packages_check.returncode == 0, site_packages_check.stdout
    row = next(line for line in site_packages_check.stdout.splitlines()
               if line.startswith('tf.keras.estimator.model_to_estimator '))
    assert row.endswith('towers-legacy') and 'NOT PROVIDED' not in row


def run_in_process(tmp_path, monkeypatch, capsys, source):
    """Runs `source` as tmp_path/script.py through `runner.run_script` in this process (its
    `tf` is the runner's, `towers.compat.tf`); returns (status, stdout, stderr lines, script
    path)."""
    script = write(tmp_path / 'script.py', source)
    monkeypatch.setattr(sys, 'argv', list(sys.argv))
    monkeypatch.setattr(sys, 'path', list(sys.path))
    status = runner.run_script(script, [], Usage())
    captured = capsys.readouterr()
    return status, captured.out, captured.err.splitlines(), script


def test_a_tensorflow_name_the_runner_lacks_stops_the_script_with_one_line_at_its_line(
        tmp_path, monkeypatch, capsys):
    status, out, lines, script = run_in_process(tmp_path, monkeypatch, capsys, '''
        from towers.compat import tf

        print('probe: %s' % hasattr(tf.train, 'SomethingRemoved'))
        try:
            tf.foo_removed_name
        except AttributeError:
            print('version-tolerant code goes on')
        saver = tf.train.SomethingRemoved()
        ''')
    assert status == EXIT_ERROR
    assert out == 'probe: False\nversion-tolerant code goes on\n'
    assert lines[0] == ('error: %s:9: tf.train.SomethingRemoved is not available: '
                        'tf.compat.v1.train of TensorFlow %s does not have it'
                        % (script, tf.__version__))
    assert len(lines) == 2 and lines[1].startswith('towers-legacy: compatibility pieces used')


def test_a_missing_tensorflow_name_read_by_an_installed_package_keeps_its_traceback(
        tmp_path, monkeypatch, capsys):
    library = write(tmp_path / 'site-packages' / 'library.py', '''
        def saver(tf):
            return tf.train.SomethingRemoved()
        ''')
    status, _, lines, _ = run_in_process(tmp_path, monkeypatch, capsys, '''
        import importlib.util
        from towers.compat import tf

        spec = importlib.util.spec_from_file_location('library', %r)
        library = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(library)
        library.saver(tf)
        ''' % library)
    assert status == EXIT_ERROR
    assert lines[0] == 'Traceback (most recent call last):'
    assert not [line for line in lines if line.startswith('error:')]
