"""The canned estimators of TF 1.15's `tf.estimator` (v1 classes) and their heads: they train,
evaluate with TF 1.15's metric keys (the metrics equal scikit-learn's on the same predictions),
predict TF 1.15's keys, export TF 1.15's signatures and name their variables as TF 1.15's
checkpoints do."""
import numpy as np
import pytest
from sklearn import metrics as sk_metrics

from towers.compat import tf
from towers.legacy.estimator import canned
from towers.legacy.estimator.canned import head as head_lib
from towers.legacy.estimator.canned.optimizers import get_optimizer_instance
from towers.legacy.estimator.inputs import numpy_input_fn
from towers.legacy.estimator.spec import EstimatorError, ModeKeys

ROWS = 240
BINARY_KEYS = {'accuracy', 'accuracy_baseline', 'auc', 'auc_precision_recall', 'average_loss',
               'global_step', 'label/mean', 'loss', 'precision', 'prediction/mean', 'recall'}
REGRESSION_KEYS = {'average_loss', 'global_step', 'label/mean', 'loss', 'prediction/mean'}
COLUMNS = [tf.feature_column.numeric_column('x', shape=(2,))]
OCCUPATION = tf.feature_column.categorical_column_with_vocabulary_list(
    'occupation', ['doctor', 'engineer', 'teacher'])


@pytest.fixture(scope='module')
def data():
    """Features 'x' [ROWS, 2] and 'occupation' [ROWS] (strings); noisy binary labels (so that
    AUC < 1), labels of a linear regression of x."""
    rng = np.random.RandomState(0)
    x = rng.randn(ROWS, 2).astype(np.float32)
    return {'x': x, 'features': {'x': x, 'occupation': rng.choice(OCCUPATION.vocabulary_list,
                                                                   ROWS)},
            'binary': (x[:, 0] + .5 * x[:, 1] + rng.randn(ROWS) > 0).astype(np.int64),
            'regression': (2. * x[:, 0] + x[:, 1] + .1 * rng.randn(ROWS)).astype(np.float32)}


def _train_input(features, labels):
    return numpy_input_fn(features, labels, batch_size=60, num_epochs=None, shuffle=True)


def _eval_input(features, labels=None):
    return numpy_input_fn(features, labels, batch_size=64, shuffle=False)


def _losses_before_and_after(estimator, features, labels, steps):
    """evaluate() after one step and after `steps` more: (first metrics, last metrics)."""
    estimator.train(_train_input(features, labels), steps=1)
    first = estimator.evaluate(_eval_input(features, labels))
    estimator.train(_train_input(features, labels), steps=steps)
    return first, estimator.evaluate(_eval_input(features, labels))


@pytest.fixture(scope='module')
def binary_dnn(data, tmp_path_factory):
    """A DNNClassifier of x and an embedding of occupation, trained 20 steps: (estimator,
    evaluate()'s dict, predict()'s dicts)."""
    estimator = canned.DNNClassifier(
        [8], COLUMNS + [tf.feature_column.embedding_column(OCCUPATION, 2)],
        model_dir=str(tmp_path_factory.mktemp('dnn')))
    estimator.train(_train_input(data['features'], data['binary']), steps=20)
    results = estimator.evaluate(_eval_input(data['features'], data['binary']))
    return estimator, results, list(estimator.predict(_eval_input(data['features'])))


def _column(predictions, key):
    return np.array([prediction[key][0] for prediction in predictions])


def test_binary_classifier_accuracy_and_auc_equal_scikit_learns_on_its_predictions(
        data, binary_dnn):
    _, results, predictions = binary_dnn
    labels, logistic = data['binary'], _column(predictions, 'logistic')
    assert results['accuracy'] == pytest.approx(
        sk_metrics.accuracy_score(labels, _column(predictions, 'class_ids')), abs=1e-6)
    # 'auc' is tf.metrics.auc as TF 1.15 computed it: the trapezoid over 200 thresholds evenly
    # spaced on [0, 1]. That is exactly scikit-learn's area of the logistic counted in those
    # thresholds' bins (ties in a bin count half) ...
    thresholds = np.array([-1e-7] + [(i + 1) / 199. for i in range(198)] + [1 + 1e-7])
    bins = (logistic[:, None] > thresholds[None]).sum(axis=1)
    assert results['auc'] == pytest.approx(sk_metrics.roc_auc_score(labels, bins), abs=1e-5)
    # ... so it differs from the exact area by at most half the share of the (positive,
    # negative) pairs that share a bin.
    tied = (bins[labels == 1][:, None] == bins[labels == 0][None]).mean()
    assert abs(results['auc'] - sk_metrics.roc_auc_score(labels, logistic)) <= tied / 2 + 1e-5
    assert 0.5 < results['auc'] < 1.


def test_binary_classifier_precision_recall_and_average_loss_equal_scikit_learns(
        data, binary_dnn):
    _, results, predictions = binary_dnn
    labels, class_ids = data['binary'], _column(predictions, 'class_ids')
    assert results['precision'] == pytest.approx(
        sk_metrics.precision_score(labels, class_ids), abs=1e-6)
    assert results['recall'] == pytest.approx(sk_metrics.recall_score(labels, class_ids),
                                              abs=1e-6)
    assert results['average_loss'] == pytest.approx(
        sk_metrics.log_loss(labels, _column(predictions, 'logistic')), abs=1e-5)
    assert results['label/mean'] == pytest.approx(labels.mean())
    assert results['accuracy_baseline'] == pytest.approx(max(labels.mean(), 1 - labels.mean()))


def test_binary_classifier_evaluates_tf1s_metric_keys_with_the_loss_summed_over_the_batch(
        binary_dnn):
    _, results, _ = binary_dnn
    assert set(results) == BINARY_KEYS
    # v1's loss_reduction SUM: each batch's loss is the sum over its 64 (last: 48) examples;
    # 'loss' is the mean over the 4 batches.
    assert results['loss'] == pytest.approx(results['average_loss'] * ROWS / 4, rel=1e-5)
    assert results['global_step'] == 20


def test_predict_yields_a_dict_per_example_with_tf1s_prediction_keys(binary_dnn):
    _, _, predictions = binary_dnn
    assert len(predictions) == ROWS
    first = predictions[0]
    assert set(first) == {'logits', 'logistic', 'probabilities', 'class_ids', 'classes',
                          'all_class_ids', 'all_classes'}
    assert first['logistic'] == pytest.approx(1 / (1 + np.exp(-first['logits'])))
    assert first['probabilities'] == pytest.approx([1 - first['logistic'][0],
                                                    first['logistic'][0]])
    assert first['class_ids'][0] == np.argmax(first['probabilities'])
    assert first['classes'][0] == str(first['class_ids'][0]).encode()
    assert list(first['all_class_ids']) == [0, 1]
    assert list(first['all_classes']) == [b'0', b'1']


def test_dnn_checkpoints_name_variables_and_slots_as_tf1s(binary_dnn):
    estimator, _, _ = binary_dnn
    names = estimator.get_variable_names()
    assert estimator.get_variable_value('dnn/input_from_feature_columns/input_layer/'
                                        'occupation_embedding/embedding_weights').shape == (3, 2)
    for layer, shape in (('hiddenlayer_0', [2 + 2, 8]), ('logits', [8, 1])):
        assert estimator.get_variable_value('dnn/%s/kernel' % layer).shape == tuple(shape)
        assert estimator.get_variable_value('dnn/%s/bias' % layer).shape == (shape[1],)
        # TF 1.x's partitioned variables (one part without parameter servers) and Adagrad.
        assert 'dnn/%s/kernel/t_0/Adagrad' % layer in names
    assert 'global_step' in names
    assert _variable_types(estimator) == {'global_step': 'RefVariable',
                                          'dnn': 'ResourceVariable'}


@pytest.mark.parametrize('make, variable', [
    (lambda model_dir: canned.DNNRegressor([8], COLUMNS, model_dir=model_dir),
     'dnn/logits/kernel'),
    (lambda model_dir: canned.LinearRegressor(COLUMNS, model_dir=model_dir),
     'linear/linear_model/x/weights'),
], ids=['DNNRegressor', 'LinearRegressor'])
def test_regressor_trains_with_falling_loss_and_evaluates_tf1s_metric_keys(
        data, tmp_path, make, variable):
    estimator = make(str(tmp_path))
    first, last = _losses_before_and_after(estimator, {'x': data['x']}, data['regression'], 30)
    assert set(last) == REGRESSION_KEYS
    assert last['loss'] < .5 * first['loss']
    assert last['label/mean'] == pytest.approx(data['regression'].mean(), abs=1e-5)
    assert variable in estimator.get_variable_names()
    prediction = next(estimator.predict(_eval_input({'x': data['x'][:1]})))
    assert set(prediction) == {'predictions'} and prediction['predictions'].shape == (1,)


def test_baseline_classifier_learns_the_class_prior(data, tmp_path):
    labels = (np.arange(ROWS) % 4 != 0).astype(np.int64)  # 3/4 positive
    estimator = canned.BaselineClassifier(model_dir=str(tmp_path))
    first, last = _losses_before_and_after(estimator, {'x': data['x']}, labels, 40)
    assert set(last) == BINARY_KEYS
    assert last['loss'] < first['loss']
    assert last['prediction/mean'] == pytest.approx(.75, abs=.05)
    assert estimator.get_variable_value('baseline/bias').shape == (1,)


def test_wide_and_deep_classifier_trains_both_parts_and_steps_once_a_step(data, tmp_path):
    estimator = canned.DNNLinearCombinedClassifier(
        model_dir=str(tmp_path), linear_feature_columns=COLUMNS, dnn_feature_columns=COLUMNS,
        dnn_hidden_units=[4])
    first, last = _losses_before_and_after(estimator, {'x': data['x']}, data['binary'], 30)
    assert set(last) == BINARY_KEYS
    assert last['loss'] < first['loss']
    assert last['global_step'] == 31
    names = estimator.get_variable_names()
    # Each part has its own optimizer: Adagrad for 'dnn', FTRL for 'linear'.
    assert {'dnn/hiddenlayer_0/kernel', 'dnn/logits/kernel/Adagrad',
            'linear/linear_model/x/weights', 'linear/linear_model/bias_weights/Ftrl'} <= set(names)
    assert _variable_types(estimator) == {'global_step': 'RefVariable', 'dnn': 'ResourceVariable',
                                          'linear': 'ResourceVariable'}


def _variable_types(estimator):
    """The type of the variables under each top scope of the estimator's training graph (as
    TF 1.15's canned estimators made them: resource variables, as their Keras layers, and its
    global step not), and raises if one scope mixes types."""
    with tf.Graph().as_default():
        tf.train.import_meta_graph(estimator.latest_checkpoint() + '.meta')
        found = {}
        for variable in tf.global_variables():
            kind = type(variable).__name__
            assert found.setdefault(variable.op.name.split('/')[0], kind) == kind, variable
    return found


def test_multi_class_linear_classifier_predicts_the_names_of_its_label_vocabulary(data, tmp_path):
    vocabulary = ['low', 'mid', 'high']
    labels = np.array(vocabulary)[np.digitize(data['regression'], [-1., 1.])]
    estimator = canned.LinearClassifier(COLUMNS + [OCCUPATION], n_classes=3,
                                        label_vocabulary=vocabulary, model_dir=str(tmp_path))
    first, last = _losses_before_and_after(estimator, data['features'], labels, 30)
    assert set(last) == {'accuracy', 'average_loss', 'global_step', 'loss'}
    assert last['loss'] < first['loss'] and last['accuracy'] > .6
    assert estimator.get_variable_value('linear/linear_model/x/weights').shape == (2, 3)
    assert estimator.get_variable_value('linear/linear_model/occupation/weights').shape == (3, 3)
    assert estimator.get_variable_value('linear/linear_model/bias_weights').shape == (3,)
    features = {key: value[:1] for key, value in data['features'].items()}
    prediction = next(estimator.predict(_eval_input(features)))
    assert set(prediction) == {'logits', 'probabilities', 'class_ids', 'classes',
                               'all_class_ids', 'all_classes'}
    assert prediction['classes'][0] == vocabulary[prediction['class_ids'][0]].encode()
    assert list(prediction['all_classes']) == [name.encode() for name in vocabulary]


def _spec(head, mode, logits, labels=None, features=None):
    return head.create_estimator_spec(
        features=features or {}, mode=mode, logits=tf.constant(logits), labels=labels,
        train_op_fn=lambda loss: tf.assign_add(tf.train.get_or_create_global_step(), 1))


def test_head_training_loss_is_the_weighted_sum_with_tf1s_loss_summaries():
    head = head_lib.classification_head(2, weight_column='w')
    features = {'w': tf.constant([[1.], [3.]])}
    spec = _spec(head, ModeKeys.TRAIN, [[0.], [2.]], tf.constant([[1], [0]]), features)
    per_example = np.log(1 + np.exp([-0., 2.]))  # sigmoid cross-entropy of labels 1, 0
    summaries = {summary.op.name for summary in tf.get_collection(tf.GraphKeys.SUMMARIES)}
    with tf.Session() as session:
        session.run(tf.tables_initializer())
        assert session.run(spec.loss) == pytest.approx(per_example @ [1., 3.])
    assert {'loss', 'average_loss'} <= summaries


@pytest.mark.parametrize('head, logits, signatures', [
    (head_lib.classification_head(2), [[1.]],
     {'serving_default', 'classification', 'regression', 'predict'}),
    (head_lib.classification_head(3), [[1., 2., 3.]],
     {'serving_default', 'classification', 'predict'}),
    (head_lib.RegressionHead(), [[1.]], {'serving_default', 'regression', 'predict'}),
], ids=['binary', 'multi_class', 'regression'])
def test_head_exports_tf1s_signatures(head, logits, signatures):
    spec = _spec(head, ModeKeys.PREDICT, logits)
    assert set(spec.export_outputs) == signatures


def test_binary_head_thresholds_add_accuracy_precision_recall_at_each():
    head = head_lib.classification_head(2)
    head_with_thresholds = head_lib.BinaryClassHead(thresholds=[.3, .7])
    labels = tf.constant([[1], [0]])
    plain = set(_spec(head, ModeKeys.EVAL, [[1.], [-1.]], labels).eval_metric_ops)
    added = set(_spec(head_with_thresholds, ModeKeys.EVAL, [[1.], [-1.]],
                      labels).eval_metric_ops) - plain
    assert added == {'%s/positive_threshold_%g' % (name, threshold)
                     for name in ('accuracy', 'precision', 'recall') for threshold in (.3, .7)}
    assert plain == BINARY_KEYS - {'loss', 'global_step'}  # the Estimator adds those two


def test_optimizer_names_make_tf1s_optimizers_and_unknown_ones_are_refused():
    assert isinstance(get_optimizer_instance('Adagrad', .05), tf.train.AdagradOptimizer)
    assert isinstance(get_optimizer_instance('Ftrl', .2), tf.train.FtrlOptimizer)
    assert isinstance(get_optimizer_instance(lambda: tf.train.AdamOptimizer(.1), .05),
                      tf.train.AdamOptimizer)
    with pytest.raises(EstimatorError, match='Unsupported optimizer name: Adadelta'):
        get_optimizer_instance('Adadelta', .05)


def test_classifier_parse_example_spec_adds_the_label_and_weight():
    spec = canned.classifier_parse_example_spec(COLUMNS, label_key='y', weight_column='w')
    assert spec == {'x': tf.FixedLenFeature((2,), tf.float32),
                    'y': tf.FixedLenFeature((1,), tf.int64),
                    'w': tf.FixedLenFeature((1,), tf.float32)}
    with pytest.raises(EstimatorError, match='label should not be used as feature'):
        canned.classifier_parse_example_spec(COLUMNS, label_key='x')
