"""Specification of the legacy runner: `python -m towers.legacy script.py` runs a TF1 script
unchanged on TensorFlow 2, and stops with one line only on what it does not provide."""
import glob
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from towers import evaluation
from towers.compat import tf
from towers.legacy import devices, export, runner
from towers.legacy.modules import Usage

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIENT = os.path.join(REPO, 'tests', 'eager_client.py')
LEGACY_DIR = os.path.join(REPO, 'tests', 'data', 'legacy')
PROGRAM = os.path.join(LEGACY_DIR, 'tower_program.py')
COMPAT_V1_PROGRAM = os.path.join(LEGACY_DIR, 'compat_v1_program.py')
STEPS = 12


def run_legacy(*args):
    return subprocess.run([sys.executable, '-m', 'towers.legacy'] + list(args), cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def run_script(tmp_path, source):
    """Runs `source`, written as tmp_path/script.py, under the runner."""
    script = tmp_path / 'script.py'
    script.write_text(textwrap.dedent(source))
    return run_legacy(str(script))


def error_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith('error:')]


@pytest.fixture(scope='module')
def program_run(tmp_path_factory):
    """The TF1 tower program, run once on 2 towers of 2 virtual devices."""
    folder = tmp_path_factory.mktemp('legacy_program')
    result = run_legacy('--legacy_devices', '2', PROGRAM, '--num_gpus', '2',
                        '--train_dir', str(folder / 'train'),
                        '--data_file', str(folder / 'data' / 'train.bin'),
                        '--max_steps', str(STEPS))
    return result, folder


def test_a_tf1_tower_program_runs_unchanged_to_its_last_step(program_run):
    result, _ = program_run
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'step %d, loss = ' % (STEPS - 1) in result.stdout


def test_its_gpu_towers_run_on_two_virtual_cpu_devices(program_run):
    result, _ = program_run
    assert 'tower 0: tower_0/total_loss on /device:CPU:0' in result.stdout
    assert 'tower 1: tower_1/total_loss on /device:CPU:1' in result.stdout
    assert '/job:localhost/replica:0/task:0/device:CPU:1' in result.stdout


def test_its_checkpoint_restores_into_the_projects_port(program_run):
    _, folder = program_run
    spec = importlib.util.spec_from_file_location('tower_port',
                                                  os.path.join(LEGACY_DIR, 'tower_port.py'))
    port = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(port)
    records = np.fromfile(str(folder / 'data' / 'train.bin'), np.uint8).reshape(
        [-1, 1 + 8 * 8 * 3])
    images = records[:, 1:].reshape([-1, 8, 8, 3]).astype(np.float32)
    mean = images.mean(axis=(1, 2, 3), keepdims=True)
    stddev = np.maximum(images.std(axis=(1, 2, 3), keepdims=True), 1 / np.sqrt(8 * 8 * 3))
    outputs = evaluation.predict(
        lambda batch: {'logits': port.network(batch, is_training=False)},
        tf.train.latest_checkpoint(str(folder / 'train')),
        ((images - mean) / stddev).astype(np.float32), 64)
    accuracy = np.mean(outputs['logits'].argmax(axis=1) == records[:, 0])
    assert accuracy > 0.9


def _export(folder, export_dir, outputs):
    """Runs `towers-legacy export` of the program's checkpoint in this process, from its
    images to `outputs`: (exit status, the .meta file)."""
    meta_graph = glob.glob(str(folder / 'train' / 'model.ckpt-*.meta'))[0]
    with pytest.raises(SystemExit) as exit_info:
        runner.main(['export', '--meta_graph', meta_graph, '--inputs', 'images:split:0',
                     '--outputs', outputs, '--export_dir', str(export_dir)])
    return exit_info.value.code, meta_graph


def test_export_writes_the_programs_checkpoint_as_a_savedmodel_tf2_serves_alike(
        program_run, capsys):
    _, folder = program_run
    status, meta_graph = _export(folder, folder / 'export', 'logits:tower_0/logits/BiasAdd:0')
    assert status == 0
    assert capsys.readouterr().out == (
        'model.ckpt-%d: wrote the SavedModel %s; serving_default: images float32 '
        '[16, 8, 8, 3] -> logits float32 [16, 4]\n' % (STEPS, folder / 'export'))
    images = np.random.RandomState(0).normal(size=[16, 8, 8, 3]).astype(np.float32)
    with evaluation.Restored(
            lambda: tf.train.import_meta_graph(meta_graph, clear_devices=True),
            meta_graph[:-len('.meta')]) as program:
        expected = program.session.run('tower_0/logits/BiasAdd:0', {'split:0': images})
    np.savez(str(folder / 'images.npz'), images=images)
    (folder / 'jobs.json').write_text(json.dumps([{
        'saved_model': str(folder / 'export'), 'images': str(folder / 'images.npz'),
        'out': str(folder / 'served.npz')}]))
    client = subprocess.run([sys.executable, CLIENT, str(folder / 'jobs.json')],
                            capture_output=True, text=True, timeout=300)
    assert client.returncode == 0, client.stderr
    served = np.load(str(folder / 'served.npz'))['logits']
    assert np.max(np.abs(served - expected)) <= 1e-5 * np.max(np.abs(expected))


def test_export_of_a_tensor_not_in_the_graph_is_one_line_naming_it(program_run, capsys,
                                                                     tmp_path):
    _, folder = program_run
    status, _ = _export(folder, tmp_path / 'export', 'logits:tower_0/logit/BiasAdd:0')
    assert status == 1
    assert capsys.readouterr().err == (
        'error: --outputs logits:tower_0/logit/BiasAdd:0: the graph has no tensor '
        'tower_0/logit/BiasAdd:0; the closest: tower_0/logits/BiasAdd:0, '
        'tower_1/logits/BiasAdd:0, tower_0/logits/MatMul:0\n')


def test_export_is_a_subcommand_unless_a_script_is_called_export(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert export.is_command(['export', '--meta_graph', 'model.ckpt-1.meta'])
    (tmp_path / 'export').write_text('')
    assert not export.is_command(['export', '--num_gpus', '2'])


def test_at_exit_one_line_lists_the_compatibility_pieces_used(program_run):
    result, _ = program_run
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith('towers-legacy: compatibility pieces used: tensorflow as '
                           'tf.compat.v1 (v2 behaviour off), ')
    for piece in ('tf.contrib.slim', 'tf.contrib.layers', 'tf.contrib.framework',
                  'tf.app.flags', 'tf.app.run', 'tf.gfile',
                  '--legacy_devices 2: /gpu:0../gpu:1 are virtual CPU devices'):
        assert piece in last


@pytest.fixture(scope='module')
def compat_v1_run(tmp_path_factory):
    """The `import tensorflow.compat.v1 as tf` program, run once on 2 towers of 2 devices."""
    folder = tmp_path_factory.mktemp('compat_v1_program')
    result = run_legacy('--legacy_devices', '2', COMPAT_V1_PROGRAM, '--log_dir', str(folder),
                        '--max_steps', '8', '--hparams', 'layers=[6,4],learning_rate=0.1')
    return result, folder


def test_a_compat_v1_program_trains_its_gpu_towers_on_two_devices(compat_v1_run):
    result, folder = compat_v1_run
    assert result.returncode == 0, result.stderr
    assert 'tower 0: loss on /device:CPU:0' in result.stdout
    assert 'tower 1: loss on /device:CPU:1' in result.stdout
    losses = [float(line.split(' = ')[1]) for line in result.stdout.splitlines()
              if line.startswith('step ')]
    assert len(losses) == 8 and losses[-1] < losses[0]
    assert tf.train.latest_checkpoint(str(folder)) is not None


def test_its_hparams_flag_overrides_the_hparams_defaults(compat_v1_run):
    result, _ = compat_v1_run
    assert 'hparams: {"batch_size": 16, "layers": [6, 4], "learning_rate": 0.1}' in \
        result.stdout


def test_its_usage_line_lists_the_pieces_it_reached_through_compat_v1(compat_v1_run):
    last = compat_v1_run[0].stderr.strip().splitlines()[-1]
    for piece in ('tf.contrib.quantize', 'tf.contrib.training',
                  'tf.contrib.framework.python.ops', 'tf.gfile', 'numpy.int', 'tf.app.flags',
                  "the script's --log_dir (absl.logging's removed)",
                  'tf.data.Dataset.prefetch(NumPy integer)', 'tf.contrib.nccl'):
        assert piece in last


def test_first_use_of_a_contrib_piece_the_runner_lacks_is_one_line_at_its_line(tmp_path):
    result = run_legacy('--legacy_devices', '2', COMPAT_V1_PROGRAM, '--log_dir', str(tmp_path),
                        '--quantize')
    line = next(number for number, text in enumerate(open(COMPAT_V1_PROGRAM), 1)
                if 'contrib_quantize.create_training_graph' in text)
    assert result.returncode == 1
    assert error_lines(result.stderr) == [
        'error: %s:%d: tf.contrib.quantize.create_training_graph is not available: tf.contrib '
        'left TensorFlow in 2.0 and towers-legacy does not provide tf.contrib.quantize; use '
        'the TensorFlow Model Optimization Toolkit (TensorFlow 2 has no graph-rewrite '
        'quantization)' % (COMPAT_V1_PROGRAM, line)]
    assert 'Traceback' not in result.stderr


def test_numpys_removed_names_work_and_are_listed_in_the_usage_line(tmp_path):
    result = run_script(tmp_path, '''
        import numpy as np
        import tensorflow as tf

        print(np.cast[np.float32]([1, 2]).dtype, np.fromstring(b'\\x01\\x02', np.uint8),
              np.float_, np.asscalar(np.array([7])))
        ''')
    assert result.returncode == 0, result.stderr
    assert "float32 [1 2] <class 'numpy.float64'> 7" in result.stdout
    assert result.stderr.strip().splitlines()[-1].endswith(
        'numpy.cast, numpy.fromstring (binary), numpy.float_, numpy.asscalar')


def test_tf_keras_modules_import_by_their_tensorflow_path(tmp_path):
    result = run_script(tmp_path, '''
        import tensorflow as tf
        from tensorflow.keras import backend as K
        from tensorflow.keras.layers import Dense
        import tensorflow.compat.v1.keras.models as models

        print(K is tf.keras.backend, Dense is tf.keras.layers.Dense,
              models.Sequential is tf.keras.models.Sequential)
        ''')
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ['True', 'True', 'True']


def test_a_script_failing_for_its_own_reasons_shows_its_own_traceback(tmp_path):
    result = run_script(tmp_path, '''
        import tensorflow as tf

        def build():
            raise ValueError('the script has a bug')

        build()
        ''')
    assert result.returncode == 1
    assert 'Traceback (most recent call last)' in result.stderr
    assert '%s", line 5, in build' % (tmp_path / 'script.py') in result.stderr
    assert 'ValueError: the script has a bug' in result.stderr
    assert 'runpy' not in result.stderr and 'towers/legacy' not in result.stderr
    assert not error_lines(result.stderr)


def test_the_scripts_tensorflow_is_the_projects_with_contrib_data_lookup_and_scipy_misc(
        tmp_path):
    result = run_script(tmp_path, '''
        import numpy as np
        import tensorflow as tf
        from scipy.misc import imresize
        from towers import compat

        print('the same tf as the project: %s' % (tf is compat.tf))

        table = tf.contrib.lookup.index_table_from_tensor(['a', 'b', 'c'], num_oov_buckets=1)
        ids = table.lookup(tf.constant(['b', 'zebra', 'a']))
        dataset = tf.data.Dataset.range(8).apply(
            tf.contrib.data.shuffle_and_repeat(8, count=1, seed=0)).apply(
            tf.contrib.data.map_and_batch(lambda x: 10 * x, 4))
        batch = dataset.make_one_shot_iterator().get_next()
        with tf.Session() as sess:
            sess.run(tf.tables_initializer())
            print('ids %s' % sess.run(ids).tolist())
            print('batches %s' % sorted(sess.run(batch).tolist() + sess.run(batch).tolist()))
        print('resized %s' % (imresize(np.zeros([4, 6], np.uint8), (2, 3)).shape,))
        ''')
    assert result.returncode == 0, result.stderr
    assert 'the same tf as the project: True' in result.stdout
    assert 'ids [1, 3, 0]' in result.stdout
    assert 'batches [0, 10, 20, 30, 40, 50, 60, 70]' in result.stdout
    assert 'resized (2, 3)' in result.stdout
    last = result.stderr.strip().splitlines()[-1]
    for piece in ('tf.contrib.lookup', 'tf.contrib.data', 'scipy.misc.imresize'):
        assert piece in last


def test_a_missing_script_is_one_error_line(capsys):
    with pytest.raises(SystemExit) as exit_info:
        runner.main(['--legacy_devices', '2', 'no_such_script.py'])
    assert exit_info.value.code == 1
    assert capsys.readouterr().err == 'error: cannot run no_such_script.py: no such file\n'


def test_runner_options_come_before_the_script_and_the_rest_is_the_scripts(tmp_path):
    script = tmp_path / 'train.py'
    script.write_text('')
    options, path, argv = runner.parse_command(['--legacy_devices=4', str(script),
                                                '--legacy_devices', '2', '--num_gpus=4'])
    assert (options.legacy_devices, path, argv) == (4, str(script),
                                                    ['--legacy_devices', '2', '--num_gpus=4'])


def test_legacy_devices_rename_gpu_scopes_to_virtual_cpu_devices_without_a_gpu():
    device_map = devices.DeviceMap(4, Usage(), physical_gpus=0)
    assert device_map.device('/gpu:3') == '/device:CPU:3'
    assert device_map.device(lambda op: '/job:worker/task:1/gpu:2')(None) == \
        '/job:worker/task:1/device:CPU:2'
    assert device_map.device('/cpu:0') == '/cpu:0'


def test_legacy_devices_keep_gpu_names_where_gpus_are_split_into_logical_ones():
    device_map = devices.DeviceMap(4, Usage(), physical_gpus=2)
    assert device_map.device('/gpu:3') == '/gpu:3'
    split = device_map.session_config(None).gpu_options.experimental.virtual_devices
    assert [list(gpu.memory_limit_mb) for gpu in split] == [[2048.0, 2048.0]] * 2


def test_the_scripts_session_config_gains_the_devices_and_keeps_its_settings():
    config = devices.DeviceMap(3, Usage(), physical_gpus=0).session_config(
        tf.ConfigProto(allow_soft_placement=True, log_device_placement=True))
    assert config.device_count['CPU'] == 3
    assert config.allow_soft_placement and config.log_device_placement


def test_keras_datasets_read_the_cached_file_and_never_download(tmp_path):
    script = tmp_path / 'script.py'
    script.write_text(textwrap.dedent('''
        import tensorflow as tf
        (x, y), (xt, yt) = tf.keras.datasets.mnist.load_data('MNIST-data-0')
        print(x.shape, y.tolist(), xt.shape)
        tf.keras.datasets.mnist.load_data('MNIST-data-0')
        tf.keras.datasets.mnist.load_data('MNIST-data-1')
        '''))
    cache = tmp_path / 'home' / '.keras' / 'datasets'
    cache.mkdir(parents=True)
    with open(cache / 'MNIST-data-0', 'wb') as f:
        np.savez(f, x_train=np.zeros((3, 28, 28), np.uint8), y_train=np.arange(3, dtype=np.uint8),
                 x_test=np.zeros((2, 28, 28), np.uint8), y_test=np.zeros(2, np.uint8))
    result = subprocess.run([sys.executable, '-m', 'towers.legacy', str(script)], cwd=REPO,
                            capture_output=True, text=True, timeout=300,
                            env=dict(os.environ, HOME=str(tmp_path / 'home')))
    assert result.returncode == 1
    assert result.stdout.splitlines() == ['(3, 28, 28) [0, 1, 2] (2, 28, 28)']
    # A generated file is not the published one: read, and said once.
    assert result.stderr.count('is not the published file') == 1
    assert error_lines(result.stderr) == [
        'error: %s:6: tf.keras.datasets: %s is not in the Keras cache (it comes from '
        'https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz); towers-legacy '
        'does not download: put the file there' % (script, cache / 'MNIST-data-1')]
    assert not (cache / 'MNIST-data-1').exists()


def test_tf1_private_estimator_util_and_contribs_projector_import_as_opennmt_v1_did(tmp_path):
    result = run_script(tmp_path, '''
        from tensorflow.python.estimator.util import fn_args
        from tensorflow_estimator.python.estimator.util import fn_args as fn_args_115
        try:
            from tensorflow.contrib.tensorboard.plugins import projector
        except ModuleNotFoundError:
            from tensorboard.plugins import projector
        print(fn_args(lambda features, labels, mode=None: 0), fn_args_115 is fn_args,
              type(projector.ProjectorConfig()).__name__)
        ''')
    assert result.returncode == 0, result.stderr
    assert result.stdout.split('\n')[0] == "('features', 'labels', 'mode') True ProjectorConfig"


def test_tf1_private_paths_give_tf115s_names_and_no_others(tmp_path):
    result = run_script(tmp_path, '''
        import tensorflow as tf
        from tensorflow.python.feature_column import feature_column
        from tensorflow.python.framework import ops
        from tensorflow.python.ops import control_flow_ops, variables
        from tensorflow_estimator.python.estimator import estimator, estimator_lib, training
        from tensorflow_estimator.python.estimator.export import export_lib
        from tensorflow_estimator.python.estimator.mode_keys import ModeKeys
        from tensorflow.python.estimator.export import export  # TF 1.12's path
        print(issubclass(estimator.EstimatorV2, estimator_lib.Estimator),
              estimator_lib.Estimator is tf.estimator.Estimator,
              ModeKeys is tf.estimator.ModeKeys, export_lib.PredictOutput.__name__,
              tf.estimator.export.PredictOutput is export_lib.PredictOutput)
        # the implementation's own globals are not TF 1.15's names
        print(hasattr(export_lib, 'export'), hasattr(estimator, 'tf'), hasattr(training, 'tf'))
        try:
            training._TrainingExecutor
        except AttributeError as err:
            print(err)
        value = control_flow_ops.cond(tf.constant(True), lambda: 1., lambda: 2.)
        with tf.Session() as session:
            print(isinstance(value, ops.Tensor), session.run(value),
                  variables.VariableV1 is tf.Variable,
                  type(feature_column.numeric_column('x')).__name__)
        ''')
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        'True True True PredictOutput True', 'False False False',
        "tensorflow_estimator.python.estimator.training._TrainingExecutor: a private name of "
        "TensorFlow 1's implementation, which the runner does not give",
        'True 1.0 True _NumericColumn']
