"""TF 2.15's canned estimators (the V2 classes) and heads: their evaluation gives TF 1's keys with
'loss' the mean per example (loss_reduction SUM_OVER_BATCH_SIZE), they train with Keras' legacy
optimizers by name or by object, and name their variables and the optimizers' slots as a TF
2.15 checkpoint does (the lists below were read with `tf.train.list_variables` from the
model_dirs of TensorFlow 2.15.1 + tensorflow-estimator 2.15.0)."""
import numpy as np
import pytest

from towers.compat import keras, tf
from towers.legacy.estimator.canned import v2
from towers.legacy.estimator.canned.optimizers import get_optimizer_instance_v2
from towers.legacy.estimator.inputs import numpy_input_fn
from towers.legacy.estimator.spec import EstimatorError, ModeKeys

ROWS = 32
X = tf.feature_column.numeric_column('x', shape=(2,))
LETTER = tf.feature_column.categorical_column_with_vocabulary_list('c', ['a', 'b', 'c'])
BINARY_KEYS = {'accuracy', 'accuracy_baseline', 'auc', 'auc_precision_recall', 'average_loss',
               'global_step', 'label/mean', 'loss', 'precision', 'prediction/mean', 'recall'}
REGRESSION_KEYS = {'average_loss', 'global_step', 'label/mean', 'loss', 'prediction/mean'}
# TF 2.15: DNNClassifier([3], [x, embedding_column(c, 2)]) trained by its default 'Adagrad'.
TF215_DNN_CLASSIFIER = [
    'dnn/hiddenlayer_0/bias', 'dnn/hiddenlayer_0/kernel',
    'dnn/input_from_feature_columns/input_layer/c_embedding/embedding_weights',
    'dnn/logits/bias', 'dnn/logits/kernel', 'global_step', 'training/Adagrad/decay',
    'training/Adagrad/dnn/hiddenlayer_0/bias/accumulator',
    'training/Adagrad/dnn/hiddenlayer_0/kernel/accumulator',
    'training/Adagrad/dnn/input_from_feature_columns/input_layer/c_embedding/embedding_weights/'
    'accumulator',
    'training/Adagrad/dnn/logits/bias/accumulator',
    'training/Adagrad/dnn/logits/kernel/accumulator', 'training/Adagrad/learning_rate']
# TF 2.15: DNNClassifier([3], [x], n_classes=3, optimizer='Adam').
TF215_DNN_ADAM = [
    'dnn/hiddenlayer_0/bias', 'dnn/hiddenlayer_0/kernel', 'dnn/logits/bias', 'dnn/logits/kernel',
    'global_step', 'training/Adam/beta_1', 'training/Adam/beta_2', 'training/Adam/decay',
    'training/Adam/dnn/hiddenlayer_0/bias/m', 'training/Adam/dnn/hiddenlayer_0/bias/v',
    'training/Adam/dnn/hiddenlayer_0/kernel/m', 'training/Adam/dnn/hiddenlayer_0/kernel/v',
    'training/Adam/dnn/logits/bias/m', 'training/Adam/dnn/logits/bias/v',
    'training/Adam/dnn/logits/kernel/m', 'training/Adam/dnn/logits/kernel/v',
    'training/Adam/learning_rate']
_FTRL = ['training/Ftrl/beta', 'training/Ftrl/decay', 'training/Ftrl/l1_regularization_strength',
         'training/Ftrl/l2_regularization_strength', 'training/Ftrl/learning_rate',
         'training/Ftrl/learning_rate_power']
# TF 2.15: LinearClassifier([x, c]) trained by its default 'Ftrl'.
TF215_LINEAR_CLASSIFIER = [
    'global_step', 'linear/linear_model/bias_weights', 'linear/linear_model/c/weights',
    'linear/linear_model/x/weights'] + _FTRL + [
    'training/Ftrl/linear/linear_model/%s/%s' % (variable, slot)
    for variable in ('bias_weights', 'c/weights', 'x/weights')
    for slot in ('accumulator', 'linear')]
# TF 2.15: DNNLinearCombinedClassifier(linear_feature_columns=[c], dnn_feature_columns=[x],
# dnn_hidden_units=[3]): the linear part's Ftrl has its own 'iter'.
TF215_DNN_LINEAR_COMBINED = sorted(
    ['dnn/hiddenlayer_0/bias', 'dnn/hiddenlayer_0/kernel', 'dnn/logits/bias',
     'dnn/logits/kernel', 'global_step', 'linear/linear_model/bias_weights',
     'linear/linear_model/c/weights', 'training/Adagrad/decay',
     'training/Adagrad/dnn/hiddenlayer_0/bias/accumulator',
     'training/Adagrad/dnn/hiddenlayer_0/kernel/accumulator',
     'training/Adagrad/dnn/logits/bias/accumulator',
     'training/Adagrad/dnn/logits/kernel/accumulator', 'training/Adagrad/learning_rate',
     'training/Ftrl/iter'] + _FTRL + [
        'training/Ftrl/linear/linear_model/%s/%s' % (variable, slot)
        for variable in ('bias_weights', 'c/weights') for slot in ('accumulator', 'linear')])
# TF 2.15: BaselineRegressor(optimizer='Adagrad').
TF215_BASELINE_ADAGRAD = ['baseline/bias', 'global_step', 'training/Adagrad/baseline/bias/'
                          'accumulator', 'training/Adagrad/decay', 'training/Adagrad/learning_rate']


@pytest.fixture(scope='module')
def data():
    rng = np.random.RandomState(0)
    x = rng.randn(ROWS, 2).astype(np.float32)
    return {'features': {'x': x, 'c': np.array(['a', 'b', 'c', 'a'] * (ROWS // 4))},
            'binary': (x[:, 0] > 0).astype(np.int64),
            'classes': (np.arange(ROWS) % 3).astype(np.int64),
            'regression': (2. * x[:, 0]).astype(np.float32)}


def _trained(estimator, features, labels, steps=4):
    estimator.train(numpy_input_fn(features, labels, batch_size=8, num_epochs=None,
                                   shuffle=False), steps=steps)
    return estimator


def _evaluation(estimator, features, labels):
    return estimator.evaluate(numpy_input_fn(features, labels, batch_size=8, shuffle=False))


def _variable_names(estimator):
    return [name for name, _ in tf.train.list_variables(estimator.model_dir)]


@pytest.mark.parametrize('make, labels, keys', [
    (lambda d: v2.DNNClassifierV2([3], [X], model_dir=d), 'binary', BINARY_KEYS),
    (lambda d: v2.LinearClassifierV2([X, LETTER], model_dir=d), 'binary', BINARY_KEYS),
    (lambda d: v2.BaselineClassifierV2(model_dir=d, n_classes=3), 'classes',
     {'accuracy', 'average_loss', 'global_step', 'loss'}),
    (lambda d: v2.DNNRegressorV2([3], [X], model_dir=d), 'regression', REGRESSION_KEYS),
    (lambda d: v2.LinearRegressorV2([X], model_dir=d), 'regression', REGRESSION_KEYS),
    (lambda d: v2.BaselineRegressorV2(model_dir=d), 'regression', REGRESSION_KEYS),
], ids=['dnn_classifier', 'linear_classifier', 'baseline_classifier', 'dnn_regressor',
        'linear_regressor', 'baseline_regressor'])
def test_v2_evaluation_loss_is_the_mean_per_example_under_tf1_keys(make, labels, keys, data,
                                                                   tmp_path):
    estimator = _trained(make(str(tmp_path)), data['features'], data[labels])
    evaluation = _evaluation(estimator, data['features'], data[labels])
    assert set(evaluation) == keys
    assert evaluation['loss'] == pytest.approx(evaluation['average_loss'], rel=1e-5)


def test_v2_weighted_loss_is_the_weighted_sum_over_the_batch_size(data, tmp_path):
    features = dict(data['features'], w=np.linspace(.5, 2., ROWS).astype(np.float32))
    estimator = _trained(v2.LinearRegressorV2([X], model_dir=str(tmp_path), weight_column='w'),
                         features, data['regression'])
    evaluation = _evaluation(estimator, features, data['regression'])
    weighted_mean_to_mean = np.mean(features['w'])  # sum(w l) / N over sum(w l) / sum(w)
    assert evaluation['loss'] == pytest.approx(
        evaluation['average_loss'] * weighted_mean_to_mean, rel=1e-4)


@pytest.mark.parametrize('make, expected', [
    (lambda d: v2.DNNClassifierV2([3], [X, tf.feature_column.embedding_column(LETTER, 2)],
                                  model_dir=d), TF215_DNN_CLASSIFIER),
    (lambda d: v2.DNNClassifierV2([3], [X], model_dir=d, n_classes=3, optimizer='Adam'),
     TF215_DNN_ADAM),
    (lambda d: v2.LinearClassifierV2([X, LETTER], model_dir=d), TF215_LINEAR_CLASSIFIER),
    (lambda d: v2.DNNLinearCombinedClassifierV2(
        model_dir=d, linear_feature_columns=[LETTER], dnn_feature_columns=[X],
        dnn_hidden_units=[3]), TF215_DNN_LINEAR_COMBINED),
    (lambda d: v2.BaselineRegressorV2(model_dir=d, optimizer='Adagrad'), TF215_BASELINE_ADAGRAD),
], ids=['dnn_adagrad', 'dnn_adam', 'linear_ftrl', 'dnn_linear_combined', 'baseline_adagrad'])
def test_v2_checkpoint_names_variables_and_slots_as_tf215(make, expected, data, tmp_path):
    labels = data['classes'] if 'Adam' in ''.join(expected) else data['binary']
    estimator = _trained(make(str(tmp_path)), data['features'], labels, steps=2)
    assert _variable_names(estimator) == sorted(expected)
    assert estimator.get_variable_value('global_step') == 2


@pytest.mark.parametrize('optimizer, slot', [
    ('SGD', None), ('RMSProp', 'rms'),
    (lambda: keras.optimizers.legacy.SGD(0.1, momentum=.9), 'momentum'),
    (keras.optimizers.legacy.Adagrad(0.1), 'accumulator')],
    ids=['sgd_name', 'rmsprop_name', 'sgd_callable', 'adagrad_object'])
def test_v2_trains_with_keras_optimizers_by_name_and_object(optimizer, slot, data, tmp_path):
    estimator = _trained(v2.DNNRegressorV2([3], [X], model_dir=str(tmp_path),
                                           optimizer=optimizer),
                         data['features'], data['regression'])
    slots = [name for name in _variable_names(estimator) if name.endswith('kernel/%s' % slot)]
    assert len(slots) == (2 if slot else 0)
    assert estimator.get_variable_value('global_step') == 4


def test_v2_optimizer_names_take_keras_default_learning_rates():
    assert get_optimizer_instance_v2('SGD').get_config()['learning_rate'] == pytest.approx(.01)
    assert get_optimizer_instance_v2('Adagrad', .3).get_config()['learning_rate'] == (
        pytest.approx(.3))
    with pytest.raises(EstimatorError, match='Unsupported optimizer name: Sgd'):
        get_optimizer_instance_v2('Sgd')
    with pytest.raises(EstimatorError, match='tf.keras.optimizers.legacy.Adam'):
        get_optimizer_instance_v2(keras.optimizers.Adam())


def test_v2_head_api_gives_loss_predictions_and_keras_metrics():
    head = v2.BinaryClassHead(thresholds=[.3], name='clicks')
    with tf.Graph().as_default():
        logits = tf.constant([[1.], [-2.], [0.5], [3.]])
        labels = tf.constant([[1], [0], [0], [1]])
        loss = head.loss(labels, logits)
        predictions = head.predictions(logits, keys=['logistic'])
        metrics = head.update_metrics(head.metrics(), {}, logits, labels)
        spec = head.create_estimator_spec({}, ModeKeys.EVAL, logits, labels)
        with tf.Session() as session:
            session.run(tf.variables_initializer(
                [variable for metric in metrics.values() for variable in metric.variables]))
            session.run([metric.updates for metric in metrics.values()])
            values = session.run({'loss': loss, 'logistic': predictions['logistic'],
                                  'accuracy': metrics['accuracy/clicks'].result()})
    per_example = np.log1p(np.exp(-np.array([1., -2., .5, 3.]) * np.array([1, -1, -1, 1])))
    assert values['loss'] == pytest.approx(per_example.mean(), rel=1e-5)
    assert list(predictions) == ['logistic']
    assert values['accuracy'] == pytest.approx(.75)
    assert set(spec.eval_metric_ops) == {key + '/clicks' for key in BINARY_KEYS - {
        'global_step', 'loss'}} | {'%s/positive_threshold_0.3/clicks' % key
                                   for key in ('accuracy', 'precision', 'recall')}
    assert head.loss_reduction == 'sum_over_batch_size'


def test_v2_poisson_head_predicts_the_rate_exp_logits(data, tmp_path):
    estimator = _trained(v2.LinearEstimatorV2(v2.PoissonRegressionHead(), [X],
                                              model_dir=str(tmp_path)),
                         data['features'], np.abs(data['regression']))
    prediction = next(estimator.predict(numpy_input_fn(data['features'], shuffle=False)))
    assert set(prediction) == {'logits', 'predictions'}
    assert prediction['predictions'] == pytest.approx(np.exp(prediction['logits']))


def test_v2_head_refuses_a_tf1_optimizer():
    head = v2.RegressionHead()
    with tf.Graph().as_default():
        with pytest.raises(EstimatorError, match='not a tf.keras.optimizers.Optimizer'):
            head.create_estimator_spec({}, ModeKeys.TRAIN, tf.zeros([2, 1]), tf.zeros([2, 1]),
                                       optimizer=tf.train.AdagradOptimizer(.1),
                                       trainable_variables=[])
