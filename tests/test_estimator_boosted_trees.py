"""TF 1.15's boosted trees: the columns they take, the features and bucket groups those become,
the feature importances of a trained ensemble, and a classifier trained in memory and a
regressor trained on this project's stand-ins for the BoostedTrees kernels, against TF 1.15
itself."""
import json
import subprocess

import numpy as np
import pytest

from towers.compat import tf
from towers.legacy.estimator.canned import boosted_trees_columns, boosted_trees_explain
from towers.legacy.estimator.canned.boosted_trees import (BoostedTreesClassifier,
                                                         BoostedTreesRegressor)
from towers.legacy.estimator.spec import EstimatorError

TF1_PROGRAM = '''
import json
import numpy as np
import tensorflow as tf
from tensorflow_estimator.python.estimator.canned import boosted_trees as bt

rng = np.random.RandomState(0)
x = rng.uniform(-1, 1, size=(200, 2)).astype(np.float32)
cat = np.array(['a', 'b', 'c'])[rng.randint(0, 3, size=200)]
y = ((x[:, 0] + (cat == 'b') * 0.7 + rng.normal(0, 0.3, 200)) > 0.2).astype(np.float32)
features = {'x': x, 'x0b': x[:, :1], 'cat': cat[:, None]}
COLUMNS
est = tf.estimator.BoostedTreesClassifier(columns, n_batches_per_layer=1, n_trees=2,
                                          max_depth=2, model_dir=MODEL_DIR)
est.train(lambda: tf.data.Dataset.from_tensor_slices((features, y[:, None])).batch(200).repeat())
ordered = sorted(columns, key=lambda column: column.name)
print(json.dumps({
    'importances': list(est.experimental_feature_importances(normalize=True).items()),
    'names': bt._generate_feature_col_name_mapping(ordered),
    'groups': bt._group_features_by_num_buckets(ordered, 100)}))
'''
COLUMNS = '''
columns = [tf.feature_column.numeric_column('x', shape=(2,)),
           tf.feature_column.bucketized_column(tf.feature_column.numeric_column('x0b'),
                                               boundaries=[-0.5, 0., 0.5]),
           tf.feature_column.indicator_column(
               tf.feature_column.categorical_column_with_vocabulary_list('cat', ['a', 'b', 'c']))]
'''


def _columns():
    scope = {'tf': tf}
    exec(COLUMNS, scope)
    return boosted_trees_columns.Columns(scope['columns'])


def test_features_and_bucket_groups_follow_the_columns_sorted_by_name():
    columns = _columns()
    assert columns.names == ['cat', 'cat', 'cat', 'x', 'x', 'x0b_bucketized']
    assert columns.num_numeric_features == 2
    assert columns.bucket_groups(100) == ([2, 100, 4], [[0, 1, 2], [3, 4], [5]])


def test_a_bare_categorical_column_is_refused_as_tf1_15_refused_it():
    column = tf.feature_column.categorical_column_with_identity('k', 3)
    with pytest.raises(EstimatorError, match='CategoricalColumn must be wrapped by '
                                             'IndicatorColumn, got: '):
        boosted_trees_columns.Columns([column])


def test_an_embedding_column_is_refused_in_one_line():
    column = tf.feature_column.embedding_column(
        tf.feature_column.categorical_column_with_identity('k', 3), 2)
    with pytest.raises(EstimatorError, match='float numeric, bucketized and indicator'):
        boosted_trees_columns.Columns([column])


def test_importances_of_an_ensemble_tf1_15_trained_equal_its_own(tmp_path, tf1_python):
    from towers.legacy.compare import tf1
    program = TF1_PROGRAM.replace('COLUMNS', COLUMNS).replace(
        'MODEL_DIR', repr(str(tmp_path / 'model')))
    result = subprocess.run([tf1_python, '-c', program], env=tf1.environment(),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    expected = json.loads(result.stdout.strip().splitlines()[-1])
    columns = _columns()
    assert columns.names == expected['names']
    assert [list(part) for part in columns.bucket_groups(100)] == expected['groups']
    serialized = tf.train.load_variable(str(tmp_path / 'model'), 'boosted_trees:0_serialized')
    found = boosted_trees_explain.feature_importances(serialized, columns.names, True)
    assert list(found) == [name for name, _ in expected['importances']]
    assert list(found.values()) == pytest.approx([value for _, value in
                                                  expected['importances']], abs=1e-12)


# A classifier trained in memory on bucketized and indicator columns (train_higgs.py's use), or
# a regressor on weighted examples growing a layer per batch; its ensemble, metrics and
# predictions written as JSON.
TRAINING_PROGRAM = '''
import json
import numpy as np

def data(regression):
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, size=(200, 2)).astype(np.float32)
    cat = np.array(['a', 'b', 'c', 'd'])[rng.randint(0, 4, size=200)]
    score = x[:, 0] * x[:, 1] + (cat == 'b') * 0.5 + rng.normal(0, 0.3, 200)
    features = {'x1': x[:, :1], 'x2': x[:, 1:], 'cat': cat[:, None]}
    if not regression:
        return features, (score > 0.).astype(np.int64)[:, None]
    features['w'] = rng.uniform(0.5, 2., size=(200, 1)).astype(np.float32)
    return features, score.astype(np.float32)[:, None]

def make(tf, estimator, model_dir, regression=False):
    fc = tf.feature_column
    columns = [fc.bucketized_column(fc.numeric_column('x1'), [-0.6, -0.2, 0.2, 0.6]),
               fc.bucketized_column(fc.numeric_column('x2'), [-0.5, 0., 0.5]),
               fc.indicator_column(fc.categorical_column_with_vocabulary_list(
                   'cat', ['a', 'b', 'c', 'd']))]
    options = ({'weight_column': 'w', 'label_dimension': 1} if regression
               else {'train_in_memory': True})
    return estimator(columns, n_batches_per_layer=1, n_trees=3, max_depth=2,
                     learning_rate=0.3, model_dir=model_dir, **options)

def train(tf, estimator, model_dir, regression=False):
    model = make(tf, estimator, model_dir, regression)
    model.train(lambda: tf.data.Dataset.from_tensors(data(regression)).repeat())
    return report(tf, model, model_dir, regression)

def report(tf, model, model_dir, regression=False):
    once = lambda: tf.data.Dataset.from_tensors(data(regression))
    metrics = model.evaluate(once, steps=1)
    return {'metrics': {key: float(value) for key, value in metrics.items()},
            'outputs': [float(p['predictions'][0] if regression else p['probabilities'][1])
                        for p in model.predict(once)],
            'ensemble': tf.train.load_variable(model_dir, 'boosted_trees:0_serialized').hex()}
'''


def _trained_by_tf1_15(tf1_python, estimator, model_dir, regression):
    """`train`'s JSON for TF 1.15's `tf.estimator.<estimator>`, and the program's scope."""
    from towers.legacy.compare import tf1
    program = TRAINING_PROGRAM + (
        'import tensorflow as tf\n'
        'print(json.dumps(train(tf, tf.estimator.%s, %r, %r)))' % (estimator, model_dir,
                                                                  regression))
    result = subprocess.run([tf1_python, '-c', program], env=tf1.environment(),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    scope = {}
    exec(TRAINING_PROGRAM, scope)
    return json.loads(result.stdout.strip().splitlines()[-1]), scope


def test_classifier_trained_in_memory_grows_tf1_15s_trees_to_the_bit(tmp_path, tf1_python):
    tf1_dir, runner_dir = str(tmp_path / 'tf1'), str(tmp_path / 'runner')
    expected, scope = _trained_by_tf1_15(tf1_python, 'BoostedTreesClassifier', tf1_dir, False)
    found = scope['train'](tf, BoostedTreesClassifier, runner_dir)
    assert found['ensemble'] == expected['ensemble']
    # The probabilities (TF 2.21's sigmoid) and the AUC of them differ in the last bits only.
    assert found['metrics']['accuracy'] == expected['metrics']['accuracy']
    assert found['metrics']['auc'] == pytest.approx(expected['metrics']['auc'], abs=1e-6)
    assert np.abs(np.subtract(found['outputs'], expected['outputs'])).max() < 1e-6
    # TF 1.15's checkpoint serves the runner's estimator as it is.
    restored = scope['report'](tf, scope['make'](tf, BoostedTreesClassifier, tf1_dir), tf1_dir)
    assert restored['outputs'] == found['outputs']


def test_regressor_of_weighted_examples_grows_tf1_15s_trees_to_the_bit(tmp_path, tf1_python):
    expected, scope = _trained_by_tf1_15(tf1_python, 'BoostedTreesRegressor',
                                         str(tmp_path / 'tf1'), True)
    found = scope['train'](tf, BoostedTreesRegressor, str(tmp_path / 'runner'), True)
    assert found['ensemble'] == expected['ensemble']
    assert found['outputs'] == expected['outputs']
    assert found['metrics']['loss'] == pytest.approx(expected['metrics']['loss'], rel=1e-6)
    assert found['metrics']['average_loss'] == pytest.approx(
        expected['metrics']['average_loss'], rel=1e-6)
