"""`towers-legacy --tf2`: TensorFlow 2 programs (2.0-2.15) that used `tf.estimator` run with TF 2
behaviour kept (eager outside the Estimator) and TF 2.15's `tf.estimator`: the TF 2 tutorial
programs of tests/data/legacy/tf2 on iris CSVs of the tutorial's format, in a home of their own
(`tf.keras.utils.get_file` finds them in its cache and downloads nothing), whose tmp holds the
temporary model_dirs."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(REPO, 'tests', 'data', 'legacy', 'tf2')
EVAL = 'eval: '


@pytest.fixture(scope='module')
def home(tmp_path_factory):
    """A home whose Keras cache holds iris_training.csv (120 rows) and iris_test.csv (30) in
    the tutorial's format: a header 'N,4,setosa,versicolor,virginica', then 4 measurements and
    the class, three clusters."""
    home = tmp_path_factory.mktemp('home')
    datasets = home / '.keras' / 'datasets'
    datasets.mkdir(parents=True)
    rng = np.random.RandomState(0)
    means = np.array([[5.0, 3.4, 1.5, 0.25], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.5, 2.0]])
    for name, rows in (('iris_training.csv', 120), ('iris_test.csv', 30)):
        labels = rng.randint(0, 3, rows)
        values = means[labels] + rng.randn(rows, 4) * [0.35, 0.35, 0.45, 0.2]
        lines = ['%d,4,setosa,versicolor,virginica' % rows] + [
            ','.join('%.1f' % value for value in row) + ',%d' % label
            for row, label in zip(values, labels)]
        (datasets / name).write_text('\n'.join(lines) + '\n')
    (home / 'tmp').mkdir()
    return home


def environment(home):
    """The caller's environment with `home` as HOME, and its tmp as TMPDIR: an Estimator
    without a model_dir makes a temporary one there."""
    return dict(os.environ, HOME=str(home), TMPDIR=str(home / 'tmp'))


def run_tf2(home, *args, cwd=REPO):
    result = subprocess.run([sys.executable, '-m', 'towers.legacy', '--tf2'] + list(args),
                            cwd=cwd, capture_output=True, text=True, timeout=300,
                            env=environment(home))
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result


def evaluation(result):
    line = next(line for line in result.stdout.splitlines() if line.startswith(EVAL))
    return json.loads(line[len(EVAL):].replace("'", '"'))


def test_the_premade_estimator_tutorial_runs_eagerly_around_a_dnn_classifier_of_tf2(home):
    result = run_tf2(home, os.path.join(PROGRAMS, 'premade_estimator.py'), '60')
    assert 'eager: True [2. 4.]' in result.stdout
    assert 'after: eager True 3.0' in result.stdout
    metrics = evaluation(result)
    assert sorted(metrics) == ['accuracy', 'average_loss', 'global_step', 'loss']
    assert metrics['global_step'] == 60
    # TF 2's canned estimators average the loss over the batch: one batch of 30 examples.
    assert metrics['loss'] == pytest.approx(metrics['average_loss'], rel=1e-6)
    assert result.stdout.count('Prediction is') == 3


def test_a_tf2_keras_model_becomes_an_estimator_with_its_eager_weights(home, tmp_path):
    model_dir = tmp_path / 'model'
    result = run_tf2(home, os.path.join(PROGRAMS, 'keras_to_estimator.py'), str(model_dir),
                     '40')
    assert 'eager batch: (32, 4)' in result.stdout
    metrics = evaluation(result)
    assert sorted(metrics) == ['global_step', 'loss'] and metrics['global_step'] == 40
    assert np.isfinite(metrics['loss'])
    # TF 2.15 turned the model's Adam (TF 2.11+'s) into the legacy one, and said so.
    assert 'Automatically converting your optimizer' in result.stderr


def test_tf_estimator_is_tf2s_and_tf_compat_v1_estimator_tf1s(home, tmp_path):
    script = tmp_path / 'names.py'
    script.write_text(textwrap.dedent('''
        import tensorflow as tf
        import tensorflow_estimator as tfe
        from tensorflow_estimator.compat.v1 import estimator as estimator_v1
        print('eager', tf.executing_eagerly())
        print('dnn', tf.estimator.DNNClassifier.__name__,
              tf.compat.v1.estimator.DNNClassifier.__name__, estimator_v1.DNNClassifier.__name__,
              tfe.estimator.LinearRegressor.__name__,
              tfe.compat.v1.estimator.LinearRegressor.__name__)
        print('heads', tf.estimator.BinaryClassHead.__name__, tf.estimator.RegressionHead.__name__)
        print('inputs', hasattr(tf.estimator, 'inputs'),
              tf.compat.v1.estimator.inputs.numpy_input_fn.__name__)
        def model_fn(features, labels, mode):
            pass
        print('export_savedmodel', hasattr(tf.estimator.Estimator(model_fn), 'export_savedmodel'),
              hasattr(tf.compat.v1.estimator.Estimator(model_fn), 'export_savedmodel'))
        print('eval_output', tf.estimator.export.EvalOutput.__name__)
    '''))
    lines = dict(line.split(' ', 1) for line in run_tf2(home, str(script)).stdout.splitlines())
    assert lines['eager'] == 'True'
    assert lines['dnn'] == ('DNNClassifierV2 DNNClassifier DNNClassifier LinearRegressorV2 '
                            'LinearRegressor')
    assert lines['heads'] == 'BinaryClassHead RegressionHead'
    assert lines['inputs'] == 'False numpy_input_fn'
    assert lines['export_savedmodel'] == 'False True'
    assert lines['eval_output'] == 'EvalOutput'


def test_tf2s_mirrored_strategy_on_two_devices_trains_a_v2_classifier_as_one_on_the_batch(
        home, tmp_path):
    script = tmp_path / 'mirrored.py'
    script.write_text(textwrap.dedent('''
        import sys
        import numpy as np
        import tensorflow as tf
        x = np.random.RandomState(0).rand(256, 4).astype('float32')
        y = (x.sum(1) > 2).astype('int64')

        def input_fn(input_context=None):  # the global batch: 32, or 16 for each of 2 replicas
            dataset = tf.data.Dataset.from_tensor_slices(({'x': x}, y)).repeat()
            return dataset.batch(16 if input_context else 32)

        values = []
        for name, strategy in (('one', None),
                               ('two', tf.distribute.MirroredStrategy(['/gpu:0', '/gpu:1']))):
            config = tf.estimator.RunConfig(train_distribute=strategy, tf_random_seed=1)
            estimator = tf.estimator.DNNClassifier(
                [8], [tf.feature_column.numeric_column('x', shape=[4])], config=config,
                model_dir=sys.argv[1] + name, optimizer='SGD')
            estimator.train(input_fn, steps=5)
            values.append({variable: estimator.get_variable_value(variable)
                           for variable in estimator.get_variable_names()})
        print('compared', len(values[0]), 'max_diff', max(
            float(np.max(np.abs(values[0][variable] - values[1][variable])))
            for variable in values[0]))
    '''))
    result = subprocess.run([sys.executable, '-m', 'towers.legacy', '--tf2', '--legacy_devices',
                             '2', str(script), str(tmp_path / 'model_')], cwd=REPO,
                            capture_output=True, text=True, timeout=300,
                            env=environment(home))
    assert result.returncode == 0, result.stderr[-3000:]
    words = result.stdout.split()
    assert int(words[words.index('compared') + 1]) >= 6
    assert float(words[words.index('max_diff') + 1]) < 1e-6
