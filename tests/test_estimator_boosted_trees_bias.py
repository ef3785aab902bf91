"""TF 1.15's boosted trees with `center_bias`, post- and pre-pruning, and
`experimental_predict_with_explanations` (each example's bias and directional feature
contributions), on this project's stand-ins for the BoostedTrees kernels, against TF 1.15.5
itself (one TF 1.15 process for the whole file)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from towers.compat import tf
from towers.legacy.estimator.canned import boosted_trees_explain as protos
from towers.legacy.estimator.canned.boosted_trees import (BoostedTreesClassifier,
                                                         BoostedTreesRegressor)
from towers.legacy.estimator.run_config import RunConfig
from towers.legacy.estimator.spec import EstimatorError

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Each case an estimator over bucketized and indicator columns trained on 200 rows, in memory
# or by two batches per layer; its ensemble, outputs and explanations printed as JSON.
PROGRAM = '''
import numpy as np

def data(regression):
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, size=(200, 2)).astype(np.float32)
    cat = np.array(['a', 'b', 'c', 'd'])[rng.randint(0, 4, size=200)]
    score = x[:, 0] * x[:, 1] + (cat == 'b') * 0.5 + rng.normal(0, 0.3, 200) + 0.4
    features = {'x1': x[:, :1], 'x2': x[:, 1:], 'cat': cat[:, None]}
    if not regression:
        return features, (score > 0.).astype(np.int64)[:, None]
    features['w'] = rng.uniform(0.5, 2., size=(200, 1)).astype(np.float32)
    return features, score.astype(np.float32)[:, None]

# name: (regression, in memory, the estimator's options)
CASES = {
    'classifier, bias, in memory': (False, True, {'center_bias': True}),
    'classifier, bias, 2 batches a layer': (False, False, {'center_bias': True}),
    'regressor, bias, in memory': (True, True, {'center_bias': True}),
    'regressor, bias, 2 batches a layer, weighted': (
        True, False, {'center_bias': True, 'weight_column': 'w'}),
    'classifier, post-pruned, bias, in memory': (
        False, True, {'pruning_mode': 'post', 'tree_complexity': 0.003, 'center_bias': True}),
    'regressor, post-pruned, bias, 2 batches a layer': (
        True, False, {'pruning_mode': 'post', 'tree_complexity': 0.02, 'center_bias': True}),
    'classifier, pre-pruned, 2 batches a layer': (
        False, False, {'pruning_mode': 'pre', 'tree_complexity': 0.003}),
}

def run(tf, classifier, regressor, name, model_dir, run_config):
    regression, in_memory, options = CASES[name]
    fc = tf.feature_column
    columns = [fc.bucketized_column(fc.numeric_column('x1'), [-0.6, -0.2, 0.2, 0.6]),
               fc.bucketized_column(fc.numeric_column('x2'), [-0.5, 0., 0.5]),
               fc.indicator_column(fc.categorical_column_with_vocabulary_list(
                   'cat', ['a', 'b', 'c', 'd']))]
    model = (regressor if regression else classifier)(
        columns, n_batches_per_layer=1 if in_memory else 2, n_trees=3, max_depth=3,
        learning_rate=0.3, model_dir=model_dir, train_in_memory=in_memory,
        config=run_config(session_config=one_thread(tf)), **options)
    features, labels = data(regression)
    if in_memory:
        model.train(lambda: tf.data.Dataset.from_tensors((features, labels)).repeat())
    else:
        model.train(lambda: tf.data.Dataset.from_tensor_slices((features, labels)).batch(100)
                    .repeat())
    once = lambda: tf.data.Dataset.from_tensors((features, labels))
    output = 'predictions' if regression else 'logits'
    found = {'outputs': [float(p[output][0]) for p in model.predict(once)],
             'ensemble': tf.train.load_variable(model_dir, 'boosted_trees:0_serialized').hex()}
    if options.get('center_bias'):
        output = 'predictions' if regression else 'probabilities'
        found['explanations'] = [
            [float(p['bias']), [[column, float(value)] for column, value in p['dfc'].items()],
             float(p[output][-1])]
            for p in model.experimental_predict_with_explanations(once)]
    return found

def one_thread(tf):
    # TF 1.15's own kernels are not repeatable on several threads of a loaded machine (a DFC
    # one ulp off in about one run of three): one thread a pool on both sides.
    return tf.ConfigProto(intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)

def run_all(tf, classifier, regressor, root, run_config):
    return {name: run(tf, classifier, regressor, name, '%s/%d' % (root, index), run_config)
            for index, name in enumerate(CASES)}
'''
CASES = {}
exec(PROGRAM, CASES)
CASES = CASES['CASES']
EXPLAINED = [name for name in CASES if CASES[name][2].get('center_bias')]


@pytest.fixture(scope='module')
def tf1_15(tf1_python, tmp_path_factory):
    """{case: its results} of TF 1.15.5."""
    from towers.legacy.compare import tf1
    root = tmp_path_factory.mktemp('tf1')
    program = PROGRAM + (
        'import json\nimport tensorflow as tf\n'
        'print(json.dumps(run_all(tf, tf.estimator.BoostedTreesClassifier, '
        'tf.estimator.BoostedTreesRegressor, %r, tf.estimator.RunConfig)))' % str(root))
    result = subprocess.run([tf1_python, '-c', program], env=tf1.environment(),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope='module')
def runner(tmp_path_factory):
    """{case: its results} of the runner, in this process."""
    scope = {}
    exec(PROGRAM, scope)
    found = scope['run_all'](tf, BoostedTreesClassifier, BoostedTreesRegressor,
                             str(tmp_path_factory.mktemp('runner')), RunConfig)
    return json.loads(json.dumps(found))


def _ensemble(results):
    return protos.parse('TreeEnsemble', bytes.fromhex(results['ensemble']))


@pytest.mark.parametrize('case', [name for name in CASES if 'bias' in name
                                  and 'pruned' not in name])
def test_a_centred_bias_grows_tf1_15s_trees_to_the_bit(case, tf1_15, runner):
    root = _ensemble(runner[case]).trees[0].nodes[0]
    assert root.metadata.original_leaf.scalar != 0  # the bias, split under
    assert runner[case]['ensemble'] == tf1_15[case]['ensemble']
    assert runner[case]['outputs'] == tf1_15[case]['outputs']


@pytest.mark.parametrize('case', [name for name in CASES if 'post-pruned' in name])
def test_post_pruning_removes_tf1_15s_nodes_and_keeps_its_cache_corrections(case, tf1_15,
                                                                             runner):
    ensemble = _ensemble(runner[case])
    grown = 2 ** 4 - 1
    assert any(len(tree.nodes) < grown for tree in ensemble.trees[:-1])
    assert all(len(metadata.post_pruned_nodes_meta) == grown
               for metadata in ensemble.tree_metadata[:-1])
    assert runner[case]['ensemble'] == tf1_15[case]['ensemble']
    assert runner[case]['outputs'] == tf1_15[case]['outputs']


def test_pre_pruning_grows_tf1_15s_trees_to_the_bit(tf1_15, runner):
    case = 'classifier, pre-pruned, 2 batches a layer'
    assert runner[case]['ensemble'] == tf1_15[case]['ensemble']
    assert runner[case]['outputs'] == tf1_15[case]['outputs']


@pytest.mark.parametrize('case', EXPLAINED)
def test_explanations_give_tf1_15s_bias_and_contributions(case, tf1_15, runner):
    assert len(runner[case]['explanations']) == 200
    for found, expected in zip(runner[case]['explanations'], tf1_15[case]['explanations']):
        assert found[0] == expected[0]
        assert [column for column, _ in found[1]] == [column for column, _ in expected[1]]
        assert [value for _, value in found[1]] == pytest.approx(
            [value for _, value in expected[1]], abs=1e-15)


@pytest.mark.parametrize('case', EXPLAINED)
def test_contributions_and_bias_sum_to_the_prediction(case, runner):
    explanations = runner[case]['explanations']
    biases = {bias for bias, _, _ in explanations}
    assert len(biases) == 1
    sums = [bias + sum(value for _, value in dfc) for bias, dfc, _ in explanations]
    np.testing.assert_almost_equal(sums, [output for _, _, output in explanations])


def test_explanations_need_center_bias(tmp_path):
    model = BoostedTreesClassifier([tf.feature_column.bucketized_column(
        tf.feature_column.numeric_column('x'), [0.])], n_batches_per_layer=1,
        model_dir=str(tmp_path))
    with pytest.raises(EstimatorError, match='center_bias must be enabled'):
        next(model.experimental_predict_with_explanations(lambda: None))


# TF 2's tutorial "Gradient Boosted Trees: Model understanding", over bucketized and indicator
# columns of a tiny pandas frame.
TUTORIAL = '''
import numpy as np
import pandas as pd
import tensorflow as tf

rng = np.random.RandomState(0)
frame = pd.DataFrame({'age': rng.uniform(1, 80, 120).astype(np.float32),
                      'sex': rng.choice(['male', 'female'], 120)})
y = ((frame.sex == 'female') ^ (rng.uniform(size=120) < 0.2)).astype(np.int64)
fc = tf.feature_column
columns = [fc.bucketized_column(fc.numeric_column('age'), [10., 30., 50.]),
           fc.indicator_column(fc.categorical_column_with_vocabulary_list(
               'sex', ['male', 'female']))]

def input_fn(shuffle, epochs=None):
    def made():
        data = tf.data.Dataset.from_tensor_slices((dict(frame), y))
        return (data.shuffle(120) if shuffle else data).repeat(epochs).batch(120)
    return made

def in_memory_input_fn():
    return dict(frame), np.expand_dims(y, axis=1)

params = {'n_trees': 5, 'max_depth': 3, 'n_batches_per_layer': 1, 'center_bias': True}
for name in ('batches', 'in memory'):
    if name == 'batches':
        est = tf.estimator.BoostedTreesClassifier(columns, **params)
        est.train(input_fn(True), max_steps=100)
    else:
        est = tf.estimator.BoostedTreesClassifier(columns, train_in_memory=True, **params)
        est.train(in_memory_input_fn)
    pred_dicts = list(est.experimental_predict_with_explanations(input_fn(False, 1)))
    probs = pd.Series([pred['probabilities'][1] for pred in pred_dicts])
    df_dfc = pd.DataFrame([pred['dfc'] for pred in pred_dicts])
    bias = pred_dicts[0]['bias']
    np.testing.assert_almost_equal((df_dfc.sum(axis=1) + bias).values, probs.values)
    print(name, 'rows', len(df_dfc), 'columns', sorted(df_dfc.columns))
'''


def test_tf2s_model_understanding_tutorial_sums_contributions_to_probabilities(tmp_path):
    script = tmp_path / 'boosted_trees_model_understanding.py'
    script.write_text(TUTORIAL)
    # Without a model_dir, the Estimator makes a temporary one under TMPDIR.
    env = dict(os.environ, HOME=str(tmp_path), TMPDIR=str(tmp_path))
    result = subprocess.run([sys.executable, '-m', 'towers.legacy', '--tf2', str(script)],
                            capture_output=True, text=True, timeout=300, cwd=REPO, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    for name in ('batches', 'in memory'):
        assert "%s rows 120 columns ['age_bucketized', 'sex']" % name in result.stdout
