"""Numeric feature columns of TF 1.15's boosted trees: the weighted quantile sketch's bucket
boundaries, and the classifiers and regressors over them, against TF 1.15.5 itself (one TF 1.15
process for the whole file)."""
import json
import subprocess

import numpy as np
import pytest

from towers.compat import tf
from towers.legacy.estimator.canned import boosted_trees as bt
from towers.legacy.estimator.canned import boosted_trees_quantiles as quantiles

# Each case: the quantile sketch of batches (values per stream, weights), or an estimator
# trained on tiny data; its results printed as JSON, keyed by case.
PROGRAM = '''
import json
import numpy as np

def sketch_cases():
    rng = np.random.RandomState(1)
    cases = {'one batch': (0.01, [[rng.normal(size=60)]], [[1.]]),
             'few distinct values': (0.01, [[[1., 1., 2.], [3., 3., 3.]]], [[1.]]),
             'two streams, blocks of a buffer': (
                 0.01, [[rng.normal(size=700), np.round(rng.uniform(0, 5, 700))]], [[1.]])}
    cases['weighted batches'] = (0.01, [[rng.exponential(size=300)] for _ in range(3)],
                                 [rng.uniform(0.1, 3, 300) for _ in range(3)])
    cases['weighted ties'] = (0.05, [[np.round(rng.normal(size=400) * 3)] for _ in range(2)],
                              [np.round(rng.uniform(0, 2, 400), 1) for _ in range(2)])
    return cases

def sketch(tf, accumulator_class, bucketize, eps, batches, weights):
    """(boundaries as uint32 bits per stream, the buckets of a probe) of a fresh graph."""
    with tf.Graph().as_default():
        count = len(batches[0])
        accumulator = accumulator_class(epsilon=eps, num_streams=count,
                                        num_quantiles=int(1. / eps), name='QuantileAccumulator')
        values = [tf.placeholder(tf.float32, [None]) for _ in range(count)]
        weight = tf.placeholder(tf.float32, [None])
        add, flush = accumulator.add_summaries(values, weight), accumulator.flush()
        boundaries = accumulator.get_bucket_boundaries()
        buckets = bucketize(values, boundaries)
        with tf.Session() as session:
            session.run(accumulator.initializer)
            for batch, batch_weights in zip(batches, weights):
                feed = dict(zip(values, [np.float32(column) for column in batch]))
                feed[weight] = np.float32(batch_weights)
                session.run(add, feed)
            session.run(flush)
            probe = np.float32([-9., 0., 0.5, 1., 2., 2.5, 3., 9.])
            found = session.run([boundaries, buckets],
                                dict(zip(values, [probe] * count)))
    return [b.view(np.uint32).tolist() for b in found[0]], [b.tolist() for b in found[1]]

def data(rows, regression, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.uniform(-1, 1, size=(rows, 2)).astype(np.float32)
    z = np.round(rng.normal(size=(rows, 1)) * 2).astype(np.float32)
    cat = np.array(['a', 'b', 'c'])[rng.randint(0, 3, size=rows)]
    score = x[:, 0] * x[:, 1] + 0.3 * z[:, 0] + (cat == 'b') * 0.5 + rng.normal(0, .3, rows)
    features = {'x': x, 'z': z, 'xb': x[:, 1:], 'cat': cat[:, None],
                'w': rng.uniform(0.5, 2., size=(rows, 1)).astype(np.float32)}
    if regression:
        return features, score.astype(np.float32)[:, None]
    return features, (score > 0.).astype(np.int64)[:, None]

def columns(tf):
    fc = tf.feature_column
    return [fc.numeric_column('x', shape=(2,)), fc.numeric_column('z'),
            fc.bucketized_column(fc.numeric_column('xb'), [-0.5, 0., 0.5]),
            fc.indicator_column(fc.categorical_column_with_vocabulary_list('cat', ['a', 'b', 'c']))]

ESTIMATORS = {
    'classifier, one batch per layer': ('BoostedTreesClassifier', False, 1, {}),
    'regressor, weighted, three batches per layer': (
        'BoostedTreesRegressor', True, 3, {'weight_column': 'w'}),
    'classifier, two batches per layer': ('BoostedTreesClassifier', False, 2, {}),
    'classifier trained in memory': ('boosted_trees_classifier_train_in_memory', False, 1, {}),
}

def train(tf, estimators, case, model_dir, fit=True):
    """Trains a case's estimator (unless `fit` is false: one trained before in `model_dir`);
    its ensemble, boundaries, metrics and outputs."""
    name, regression, batches, options = ESTIMATORS[case]
    features, labels = data(120, regression)
    settings = dict(n_trees=2, max_depth=2, learning_rate=0.3, model_dir=model_dir, **options)
    if name.endswith('in_memory'):
        model = estimators[name](lambda: tf.data.Dataset.from_tensors((features, labels)),
                                 columns(tf), **settings)
    else:
        model = estimators[name](columns(tf), n_batches_per_layer=batches, **settings)
        if fit:
            model.train(lambda: tf.data.Dataset.from_tensor_slices((features, labels)).batch(
                120 // batches).repeat())
    test = data(40, regression, seed=1)
    once = lambda: tf.data.Dataset.from_tensors(test)
    metrics = model.evaluate(once, steps=1)
    key = 'predictions' if regression else 'probabilities'
    return {'metrics': {key: float(value) for key, value in metrics.items()},
            'outputs': [float(p[key][-1]) for p in model.predict(once)],
            'ensemble': tf.train.load_variable(model_dir, 'boosted_trees:0_serialized').hex(),
            'boundaries': [tf.train.load_variable(
                model_dir, 'boosted_trees/QuantileAccumulator:0_bucket_boundaries_%d' % i)
                .view(np.uint32).tolist() for i in range(3)]}

def titanic_csv(path, rows, seed):
    """A made-up data set in the Titanic CSV's format (tensorflow.org's tutorial)."""
    rng = np.random.RandomState(seed)
    sex = rng.choice(['male', 'female'], rows)
    klass = rng.choice(['First', 'Second', 'Third'], rows)
    age = np.round(rng.uniform(1, 70, rows))
    fare = np.round(rng.exponential(30, rows), 4)
    alone = rng.choice(['y', 'n'], rows)
    score = (sex == 'female') * 1.5 + (klass == 'First') - age / 40 + rng.normal(0, .5, rows)
    with open(path, 'w') as out:
        out.write('survived,sex,age,n_siblings_spouses,parch,fare,class,deck,embark_town,'
                  'alone\\n')
        for i in range(rows):
            out.write('%d,%s,%.1f,%d,%d,%.4f,%s,unknown,Southampton,%s\\n' % (
                score[i] > 0.2, sex[i], age[i], rng.randint(0, 3), rng.randint(0, 3), fare[i],
                klass[i], alone[i]))

def titanic(tf, classifier, folder):
    """tensorflow.org's "Boosted trees using Estimators": accuracy and AUC."""
    import csv
    def frame(name, rows, seed):
        titanic_csv(folder + '/' + name, rows, seed)
        with open(folder + '/' + name) as source:
            records = list(csv.DictReader(source))
        labels = np.array([int(r.pop('survived')) for r in records])
        columns = {key: np.array([r[key] for r in records]) for key in records[0]}
        for key in ('age', 'fare'):
            columns[key] = columns[key].astype(np.float32)
        return columns, labels
    train, y_train = frame('train.csv', 150, 0)
    evaluate, y_eval = frame('eval.csv', 60, 1)
    fc = tf.feature_column
    feature_columns = [fc.indicator_column(fc.categorical_column_with_vocabulary_list(
        name, sorted(set(train[name])))) for name in
        ('sex', 'n_siblings_spouses', 'parch', 'class', 'deck', 'embark_town', 'alone')]
    feature_columns += [fc.numeric_column(name, dtype=tf.float32) for name in ('age', 'fare')]
    def input_fn(x, y, epochs):
        return lambda: tf.data.Dataset.from_tensor_slices((dict(x), y)).repeat(epochs).batch(
            len(y))
    model = classifier(feature_columns, n_batches_per_layer=1, model_dir=folder + '/model')
    model.train(input_fn(train, y_train, None), max_steps=20)
    result = model.evaluate(input_fn(evaluate, y_eval, 1))
    return {'accuracy': float(result['accuracy']), 'auc': float(result['auc'])}
'''

TF1_MAIN = '''
import sys
import tensorflow as tf
from tensorflow.python.ops import boosted_trees_ops as ops
folder = sys.argv[1]
estimators = {'BoostedTreesClassifier': tf.estimator.BoostedTreesClassifier,
              'BoostedTreesRegressor': tf.estimator.BoostedTreesRegressor,
              'boosted_trees_classifier_train_in_memory':
                  tf.contrib.estimator.boosted_trees_classifier_train_in_memory}
print(json.dumps({
    'sketch': {case: sketch(tf, ops.QuantileAccumulator, ops.boosted_trees_bucketize, *args)
               for case, args in sketch_cases().items()},
    'estimators': {case: train(tf, estimators, case, '%s/%d' % (folder, i))
                   for i, case in enumerate(ESTIMATORS)},
    'titanic': titanic(tf, tf.estimator.BoostedTreesClassifier, folder)}))
'''
RUNNER_ESTIMATORS = {'BoostedTreesClassifier': bt.BoostedTreesClassifier,
                     'BoostedTreesRegressor': bt.BoostedTreesRegressor,
                     'boosted_trees_classifier_train_in_memory':
                         bt.boosted_trees_classifier_train_in_memory}


@pytest.fixture(scope='module')
def tf1_15(tf1_python, tmp_path_factory):
    """The JSON of PROGRAM's cases run by TF 1.15.5, PROGRAM's scope, and the folder of
    TF 1.15.5's model directories (one per case of ESTIMATORS, in order)."""
    from towers.legacy.compare import tf1
    folder = tmp_path_factory.mktemp('tf1_15')
    result = subprocess.run([tf1_python, '-c', PROGRAM + TF1_MAIN, str(folder)],
                            env=tf1.environment(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    scope = {}
    exec(PROGRAM, scope)
    return json.loads(result.stdout.strip().splitlines()[-1]), scope, folder


def test_bucket_boundaries_and_buckets_are_tf1_15s_to_the_bit(tf1_15):
    expected, scope, _ = tf1_15
    for case, args in scope['sketch_cases']().items():
        found = scope['sketch'](tf, quantiles.QuantileAccumulator,
                                quantiles.boosted_trees_bucketize, *args)
        assert list(found) == expected['sketch'][case], case


@pytest.mark.parametrize('case', [
    'classifier, one batch per layer', 'regressor, weighted, three batches per layer',
    'classifier, two batches per layer', 'classifier trained in memory'])
def test_trees_over_numeric_columns_are_tf1_15s_to_the_bit(tf1_15, tmp_path, case):
    expected, scope, _ = tf1_15
    found = scope['train'](tf, RUNNER_ESTIMATORS, case, str(tmp_path))
    expected = expected['estimators'][case]
    assert found['boundaries'] == expected['boundaries']
    assert found['ensemble'] == expected['ensemble']
    # Probabilities (TF 2.21's sigmoid) and the AUC of them may differ in the last bits.
    assert np.abs(np.subtract(found['outputs'], expected['outputs'])).max() < 1e-6
    for key, value in expected['metrics'].items():
        assert found['metrics'][key] == pytest.approx(value, rel=1e-6, abs=1e-6), key


def test_a_tf1_15_checkpoint_predicts_on_the_runner_with_its_boundaries(tf1_15):
    expected, scope, folder = tf1_15
    case = 'classifier, one batch per layer'
    found = scope['train'](tf, RUNNER_ESTIMATORS, case, str(folder / '0'), fit=False)
    assert np.abs(np.subtract(found['outputs'],
                              expected['estimators'][case]['outputs'])).max() < 1e-6


def test_tensorflow_org_titanic_tutorial_scores_as_on_tf1_15(tf1_15, tmp_path):
    expected, scope, _ = tf1_15
    found = scope['titanic'](tf, bt.BoostedTreesClassifier, str(tmp_path))
    assert found['accuracy'] == expected['titanic']['accuracy']
    assert found['auc'] == pytest.approx(expected['titanic']['auc'], abs=1e-6)


def test_the_boundaries_are_saved_under_tf1_15s_checkpoint_names():
    with tf.Graph().as_default():
        with tf.name_scope('boosted_trees'):
            quantiles.QuantileAccumulator(0.01, 2, 100, name='QuantileAccumulator')
        names = [spec.name for saveable in tf.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS)
                 for spec in saveable.specs]
    assert names == ['boosted_trees/QuantileAccumulator:0_bucket_boundaries_0',
                     'boosted_trees/QuantileAccumulator:0_bucket_boundaries_1']
