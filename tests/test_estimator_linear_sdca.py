"""TF 1.15's `tf.estimator.experimental.LinearSDCA`: a linear classifier and regressor trained by
SDCA end with TF 1.15's variables (names and values), example states and evaluation, the V2
classes with TF 2.15's, and what SDCA cannot train is refused with TF's words.

SDCA's kernel visits the examples of a batch in an order it draws from the system's entropy, so
every run here trains on batches of one example: only then do two runs, of any TensorFlow, agree.
"""
import json
import subprocess

import numpy as np
import pytest

from towers.compat import tf
from towers.legacy.estimator.canned.linear import (LinearClassifier, LinearClassifierV2,
                                                   LinearEstimator, LinearRegressor,
                                                   LinearRegressorV2)
from towers.legacy.estimator.canned import head as head_lib
from towers.legacy.estimator.canned.linear_sdca import LinearSDCA
from towers.legacy.estimator.namespace import Namespace
from towers.legacy.estimator.spec import EstimatorError
from towers.legacy.modules import Usage

# Defines `run(Classifier, Regressor, LinearSDCA, model_dir, **regressor_settings)`: both trained
# 24 steps (two epochs of 12 examples, one a batch) -> their variables (the example-state
# tables summed over their rows) and evaluation.
PROGRAM = '''
import numpy as np

rng = np.random.RandomState(0)
ROWS = 12
x = rng.uniform(-1, 1, size=(ROWS, 2)).astype(np.float32)
cat = np.array(['a', 'b', 'c', 'z'])[rng.randint(0, 4, size=ROWS)]
FEATURES = {'x': x, 'x0b': x[:, :1], 'cat': cat, 'example_id': np.array(
    ['id%d' % row for row in range(ROWS)]), 'w': rng.uniform(0.5, 2, ROWS).astype(np.float32)}
CLASSES = ((x[:, 0] + (cat == 'b') * 0.7 + rng.normal(0, 0.3, ROWS)) > 0.2).astype(np.float32)
VALUES = (2 * x[:, 0] - x[:, 1] + (cat == 'b') * 0.7 + rng.normal(0, 0.1, ROWS)).astype(
    np.float32)
fc = tf.feature_column
COLUMNS = [fc.numeric_column('x', shape=(2,)),
           fc.bucketized_column(fc.numeric_column('x0b'), boundaries=[-0.5, 0., 0.5]),
           fc.categorical_column_with_vocabulary_list('cat', ['a', 'b', 'c'])]


def _trained(estimator, labels):
    estimator.train(lambda: tf.data.Dataset.from_tensor_slices((FEATURES, labels)).batch(
        1).repeat(), steps=24)
    metrics = estimator.evaluate(
        lambda: tf.data.Dataset.from_tensor_slices((FEATURES, labels)).batch(ROWS))
    variables = {}
    for name in estimator.get_variable_names():
        value = estimator.get_variable_value(name)
        variables[name] = (np.sum(value, 0) if 'HashTable' in name else value).tolist()
    return {'variables': variables,
            'metrics': {key: float(value) for key, value in metrics.items()}}


def run(Classifier, Regressor, LinearSDCA, model_dir, **regressor_settings):
    classifier = Classifier(COLUMNS, model_dir=model_dir + '/classifier', weight_column='w',
                            optimizer=LinearSDCA('example_id', symmetric_l2_regularization=0.5))
    regressor = Regressor(COLUMNS, model_dir=model_dir + '/regressor', optimizer=LinearSDCA(
        'example_id', num_table_shards=2, symmetric_l1_regularization=0.05,
        symmetric_l2_regularization=2.), **regressor_settings)
    return {'classifier': _trained(classifier, CLASSES), 'regressor': _trained(regressor, VALUES)}
'''
TF1_MAIN = '''
import json, sys
print(json.dumps(run(tf.estimator.LinearClassifier, tf.estimator.LinearRegressor,
                     tf.estimator.experimental.LinearSDCA, sys.argv[1],
                     partitioner=tf.fixed_size_partitioner(2))))
'''
# Measured by hand: PROGRAM's run(tf.estimator.LinearClassifier, tf.estimator.LinearRegressor,
# tf.estimator.experimental.LinearSDCA, model_dir) on TensorFlow 2.15.1 + tensorflow-estimator
# 2.15.0 (/tmp/tf215), its values flattened (the metrics but global_step, 24).
TF215_REGRESSOR_NAMES = [
    'ShardedMutableHashTable-1-of-2-keys', 'ShardedMutableHashTable-1-of-2-values',
    'ShardedMutableHashTable-2-of-2-keys', 'ShardedMutableHashTable-2-of-2-values',
    'global_step'] + ['linear/linear_model/%s%s' % (variable, unshrunk) for variable in (
        'bias_weights', 'cat/weights', 'x/weights', 'x0b_bucketized/weights')
                      for unshrunk in ('', '_unshrunk')]
TF215 = {'classifier': {'variables': {
    'linear/linear_model/bias_weights': [-0.1554802656173706],
    'linear/linear_model/cat/weights': [0.3262415826320648, 0.654900848865509,
                                        0.05241144448518753],
    'linear/linear_model/x/weights': [1.3907321691513062, -0.42162275314331055],
    'linear/linear_model/x0b_bucketized/weights': [-0.9379448890686035, 0.21188008785247803,
                                                   -0.3056430518627167, 0.876227617263794]},
    'metrics': {'accuracy': 0.8929983377456665, 'accuracy_baseline': 0.5612926483154297,
                'auc': 1.0000001192092896, 'auc_precision_recall': 1.0,
                'average_loss': 0.3674374520778656, 'label/mean': 0.5612926483154297,
                'loss': 0.4754152297973633, 'precision': 1.0,
                'prediction/mean': 0.49412065744400024, 'recall': 0.8093656897544861}},
    'regressor': {'variables': {
        'ShardedMutableHashTable-1-of-2-values': [-1.0269994735717773, 0.68462073802948,
                                                  -2.0380377769470215, 5.0],
        'ShardedMutableHashTable-2-of-2-values': [0.7809158563613892, 0.449997216463089,
                                                  -2.8699827194213867, 7.0],
        'linear/linear_model/bias_weights': [-0.09804181009531021],
        'linear/linear_model/bias_weights_unshrunk': [-0.12304180860519409],
        'linear/linear_model/cat/weights': [-0.033261388540267944, 0.4559783637523651,
                                            -0.07673691213130951],
        'linear/linear_model/cat/weights_unshrunk': [-0.05826139077544212, 0.4809783697128296,
                                                     -0.10173691064119339],
        'linear/linear_model/x/weights': [0.9879084825515747, -0.5075468420982361],
        'linear/linear_model/x/weights_unshrunk': [1.0129084587097168, -0.5325468182563782],
        'linear/linear_model/x0b_bucketized/weights': [
            -0.4424203038215637, -0.17402850091457367, -0.03020353429019451, 0.5736105442047119],
        'linear/linear_model/x0b_bucketized/weights_unshrunk': [
            -0.4674203097820282, -0.19902850687503815, -0.05520353466272354, 0.598610520362854]},
        'metrics': {'average_loss': 0.1283237189054489, 'label/mean': 0.02495977282524109,
                    'loss': 0.1283237189054489, 'prediction/mean': -0.0020334571599960327}}}
SDCA = LinearSDCA('example_id')
X = tf.feature_column.numeric_column('x')


def _run(tmp_path, Classifier, Regressor, **regressor_settings):
    scope = {'tf': tf}
    exec(PROGRAM, scope)
    return scope['run'](Classifier, Regressor, LinearSDCA, str(tmp_path), **regressor_settings)


@pytest.fixture(scope='module')
def tf115(tmp_path_factory, tf1_python):
    """TF 1.15.5's results of PROGRAM, the regressor's variables in two parts."""
    from towers.legacy.compare import tf1
    result = subprocess.run([tf1_python, '-c', 'import tensorflow as tf\n' + PROGRAM + TF1_MAIN,
                             str(tmp_path_factory.mktemp('tf115'))], env=tf1.environment(),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


def _assert_same(ours, theirs):
    """`theirs`' variables and metrics in `ours`, equal up to float rounding."""
    for kind in theirs:
        for name, value in theirs[kind]['variables'].items():
            np.testing.assert_allclose(np.ravel(ours[kind]['variables'][name]), np.ravel(value),
                                       rtol=1e-5, atol=1e-6, err_msg=name)
        assert {key: ours[kind]['metrics'][key] for key in theirs[kind]['metrics']} == (
            pytest.approx(theirs[kind]['metrics'], rel=1e-5))


def test_sdca_trains_the_variables_and_evaluation_of_tf1_15(tmp_path, tf115):
    ours = _run(tmp_path, LinearClassifier, LinearRegressor,
                partitioner=tf.fixed_size_partitioner(2))
    assert 'linear/linear/linear_model/cat/weights/part_1_unshrunk' in ours['regressor'][
        'variables']
    for kind in tf115:
        assert sorted(ours[kind]['variables']) == sorted(tf115[kind]['variables'])
    _assert_same(ours, tf115)


def test_sdca_trains_the_v2_classes_as_tf2_15(tmp_path):
    ours = _run(tmp_path, LinearClassifierV2, LinearRegressorV2)
    assert sorted(ours['regressor']['variables']) == TF215_REGRESSOR_NAMES
    _assert_same(ours, TF215)


@pytest.mark.parametrize('tf2', [False, True])
def test_sdca_is_tf_estimator_experimental_linear_sdca_of_both_faces(tf2):
    namespace = Namespace(Usage(), tf2=tf2)
    assert namespace.root.experimental.LinearSDCA is LinearSDCA


@pytest.mark.parametrize('make, message', [
    (lambda: LinearClassifier([X], n_classes=3, optimizer=SDCA),
     'LinearSDCA cannot be used in a multi-class setting.'),
    (lambda: LinearRegressorV2([X], label_dimension=2, optimizer=SDCA),
     'LinearSDCA can only be used with one-dimensional label.'),
    (lambda: LinearClassifier([X], optimizer=SDCA, sparse_combiner='mean'),
     'sparse_combiner must be "sum" when optimizer is a LinearSDCA object.'),
    (lambda: LinearEstimator(head_lib.MultiClassHead(3), [X], optimizer=SDCA),
     'LinearSDCA cannot be used in a multi-class setting.'),
])
def test_what_sdca_cannot_train_is_refused_as_tf1_15_refused_it(make, message):
    with pytest.raises(EstimatorError, match=message):
        make()


def test_a_non_positive_l2_is_refused_when_training_begins(tmp_path):
    estimator = LinearRegressor([X], model_dir=str(tmp_path), optimizer=LinearSDCA(
        'example_id', symmetric_l2_regularization=0.))
    features = {'x': np.ones(2, np.float32), 'example_id': np.array(['a', 'b'])}
    with pytest.raises(EstimatorError, match='symmetric_l2_regularization should be positive'):
        estimator.train(lambda: tf.data.Dataset.from_tensor_slices(
            (features, np.ones(2, np.float32))).batch(2), steps=1)
