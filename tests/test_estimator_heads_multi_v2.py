"""TF 2.15's `tf.estimator.MultiLabelHead` and `tf.estimator.MultiHead` (`--tf2`): the same
losses, predictions, metrics, export signatures and Estimator evaluations as TF 2.15's.

The figures below were measured on TensorFlow 2.15.1 + tensorflow-estimator 2.15.0 by one
program run on both sides (`/tmp/tf215/bin/python measure.py tf215.json` and
`python -m towers.legacy --tf2 measure.py runner.json`): the heads on the logits, labels and
weights below, built in a graph with `train_op_fn=lambda loss: tf.no_op()`; the Estimators
trained 20 steps of 4 rows (no shuffle) from the initial values below and evaluated on the 16
rows; values rounded to 6 digits.
"""
import numpy as np
import pytest

from towers.compat import tf
from towers.legacy.estimator.canned import v2
from towers.legacy.estimator.canned.head_v2_multi import MultiHead, MultiLabelHead
from towers.legacy.estimator.estimator import EstimatorV2
from towers.legacy.estimator.namespace import Namespace
from towers.legacy.estimator.spec import EstimatorError, ModeKeys
from towers.legacy.modules import Usage

LOGITS = np.array([[-1., 1., .5], [-1.5, 1.5, -.2], [.3, -.7, 2.], [1.2, .1, -.4]], np.float32)
MULTI_HOT = np.array([[1, 0, 1], [1, 1, 0], [0, 0, 1], [1, 0, 0]], np.int64)
WEIGHTS = np.array([[1.], [2.], [.5], [1.5]], np.float32)
CLICK_LOGITS = np.array([[1.], [-.5], [2.], [.2]], np.float32)
CLICKS = np.array([[1], [0], [0], [1]], np.int64)
PROBABILITIES = [[0.268941, 0.731059, 0.622459], [0.182426, 0.817575, 0.450166],
                 [0.574443, 0.331812, 0.880797], [0.768525, 0.524979, 0.401312]]
EXPORTS = ['classification', 'predict', 'serving_default']
# TF 2.15: MultiLabelHead(3, weight_column='w', thresholds=[.4, .7], label_vocabulary=
# ['a', 'b', 'c'], classes_for_class_based_metrics=['a', 'c'], name='tags'), string sparse labels.
TF215_VOCABULARY_METRICS = {
    'accuracy/positive_threshold_0.4/tags': 0.366667,
    'accuracy/positive_threshold_0.7/tags': 0.666667, 'auc/a/tags': 0.333333,
    'auc/c/tags': 1.0, 'auc/tags': 0.607143, 'auc_precision_recall/a/tags': 0.89819,
    'auc_precision_recall/c/tags': 1.0, 'auc_precision_recall/tags': 0.781959,
    'average_loss/tags': 0.738387, 'precision/positive_threshold_0.4/tags': 0.434783,
    'precision/positive_threshold_0.7/tags': 0.8, 'probability_mean/a/tags': 0.41476,
    'probability_mean/c/tags': 0.513032, 'recall/positive_threshold_0.4/tags': 0.625,
    'recall/positive_threshold_0.7/tags': 0.5}
# TF 2.15: MultiLabelHead(3, classes_for_class_based_metrics=[0, 2], loss_reduction=SUM).
TF215_CLASS_ID_METRICS = {
    'auc': 0.638889, 'auc/class0': 0.333333, 'auc/class2': 1.0,
    'auc_precision_recall': 0.780488, 'auc_precision_recall/class0': 0.768951,
    'auc_precision_recall/class2': 1.0, 'average_loss': 0.708894,
    'probability_mean/class0': 0.448584, 'probability_mean/class2': 0.588684}
# TF 2.15: MultiHead([MultiLabelHead(3, weight_column='w', name='tags'),
# BinaryClassHead(name='click')], head_weights=[1., 2.]).
TF215_MULTI_HEAD_METRICS = {
    'accuracy/click': 0.75, 'accuracy_baseline/click': 0.5, 'auc/click': 0.5,
    'auc/tags': 0.607143, 'auc_precision_recall/click': 0.450694,
    'auc_precision_recall/tags': 0.781959, 'average_loss/click': 0.878101,
    'average_loss/tags': 0.738387, 'label/mean/click': 0.5, 'loss/click': 0.878101,
    'loss/tags': 0.922984, 'precision/click': 0.666667, 'prediction/mean/click': 0.634808,
    'recall/click': 1.0}
TF215_MULTI_HEAD_EXPORTS = ['click', 'click/classification', 'click/predict', 'click/regression',
                            'predict', 'serving_default', 'tags', 'tags/classification',
                            'tags/predict']
# TF 2.15: Estimator whose model_fn is logits = x @ k (k below), MultiLabelHead(3,
# weight_column='w', thresholds=[.5], classes_for_class_based_metrics=[1]), SGD at 0.5.
TF215_MODEL_FN_EVALUATION = {
    'accuracy/positive_threshold_0.5': 0.88172, 'auc': 0.972528, 'auc/class1': 1.0,
    'auc_precision_recall': 0.988587, 'auc_precision_recall/class1': 1.0,
    'average_loss': 0.297776, 'global_step': 20.0, 'loss': 0.576941,
    'precision/positive_threshold_0.5': 0.897059, 'probability_mean/class1': 0.514383,
    'recall/positive_threshold_0.5': 0.938462}
# TF 2.15: DNNEstimator(MultiLabelHead(3, weight_column='w'), [4], [x], optimizer='SGD').
TF215_DNN_MULTI_LABEL_EVALUATION = {'auc': 0.812363, 'auc_precision_recall': 0.852895,
                                    'average_loss': 0.600008, 'global_step': 20.0,
                                    'loss': 1.162516}
# TF 2.15: DNNEstimator(MultiHead([MultiLabelHead(3, name='tags'), BinaryClassHead(
# name='click')], head_weights=[1., .5]), [4], [x], optimizer='SGD').
TF215_DNN_MULTI_HEAD_EVALUATION = {
    'accuracy/click': 0.5, 'accuracy_baseline/click': 0.5625, 'auc/click': 0.380952,
    'auc/tags': 0.611345, 'auc_precision_recall/click': 0.353158,
    'auc_precision_recall/tags': 0.841279, 'average_loss/click': 0.736648,
    'average_loss/tags': 0.671087, 'global_step': 20.0, 'label/mean/click': 0.4375,
    'loss': 1.039412, 'loss/click': 0.736648, 'loss/tags': 0.671087, 'precision/click': 0.0,
    'prediction/mean/click': 0.405623, 'recall/click': 0.0}


def _string_labels():
    return tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1], [2, 0], [3, 0]],
                           ['a', 'c', 'a', 'b', 'c', 'a'], [4, 2])


def _head_figures(head, labels_fn, logits, features):
    """loss, predictions, metrics (by `update_metrics` and by the EVAL spec) and the export
    signatures of `head` in a graph."""
    with tf.Graph().as_default():
        labels = labels_fn()
        loss = head.loss(labels, logits, features)
        predictions = head.predictions(logits)
        metrics = head.update_metrics(head.metrics(), features, logits, labels)
        spec = head.create_estimator_spec(features, ModeKeys.EVAL, logits, labels)
        export = head.create_estimator_spec(features, ModeKeys.PREDICT, logits).export_outputs
        train = head.create_estimator_spec(features, ModeKeys.TRAIN, logits, labels,
                                           train_op_fn=lambda _: tf.no_op())
        spec_metrics = spec.eval_metric_ops  # (value, update op) by key
        with tf.Session() as session:
            session.run([tf.tables_initializer(), tf.local_variables_initializer(),
                         tf.variables_initializer([variable for metric in metrics.values()
                                                   for variable in metric.variables])])
            session.run([[metric.updates for metric in metrics.values()],
                         [update for _, update in spec_metrics.values()]])
            return session.run({
                'loss': loss, 'train_loss': train.loss, 'predictions': predictions,
                'metrics': {key: metric.result() for key, metric in metrics.items()},
                'spec': {key: value for key, (value, _) in spec_metrics.items()},
            }), export


def _assert_figures(values, expected):
    assert sorted(values) == sorted(expected)
    for key, value in expected.items():
        assert values[key] == pytest.approx(value, abs=2e-6), key


def test_multi_label_head_with_vocabulary_weights_thresholds_and_class_metrics_is_tf215s():
    head = MultiLabelHead(3, weight_column='w', thresholds=[.4, .7],
                          label_vocabulary=['a', 'b', 'c'],
                          classes_for_class_based_metrics=['a', 'c'], name='tags')
    values, export = _head_figures(head, _string_labels, LOGITS, {'w': WEIGHTS})
    assert values['loss'] == values['train_loss'] == pytest.approx(0.922984, abs=2e-6)
    _assert_figures(values['metrics'], TF215_VOCABULARY_METRICS)
    _assert_figures(values['spec'], TF215_VOCABULARY_METRICS)
    np.testing.assert_allclose(values['predictions']['probabilities'], PROBABILITIES, atol=2e-6)
    assert values['predictions']['classes'].tolist() == [[b'a', b'b', b'c']] * 4
    assert sorted(export) == EXPORTS
    assert sorted(export['predict'].outputs) == ['classes', 'logits', 'probabilities']


def test_multi_label_head_of_multi_hot_labels_summed_gives_class_id_metrics_as_tf215():
    head = MultiLabelHead(3, classes_for_class_based_metrics=[0, 2],
                          loss_reduction=tf.losses.Reduction.SUM)
    values, _ = _head_figures(head, lambda: MULTI_HOT, LOGITS, {})
    assert values['loss'] == pytest.approx(2.835577, abs=2e-6)
    _assert_figures(values['metrics'], TF215_CLASS_ID_METRICS)
    assert values['predictions']['classes'].tolist() == [[b'0', b'1', b'2']] * 4


def test_multi_label_head_takes_sparse_class_ids_as_tf215():
    values, _ = _head_figures(MultiLabelHead(3), lambda: tf.SparseTensor(
        [[0, 0], [1, 0], [1, 1], [3, 0]], np.array([2, 0, 1, 1], np.int64), [4, 2]), LOGITS, {})
    assert values['loss'] == pytest.approx(0.883894, abs=2e-6)
    _assert_figures(values['metrics'], {'auc': 0.5, 'auc_precision_recall': 0.331182,
                                        'average_loss': 0.883894})


@pytest.mark.parametrize('logits', [np.concatenate([LOGITS, CLICK_LOGITS], 1),
                                    {'tags': LOGITS, 'click': CLICK_LOGITS}])
def test_multi_head_sums_weighted_losses_and_keeps_every_heads_metrics_as_tf215(logits):
    head = MultiHead([MultiLabelHead(3, weight_column='w', name='tags'),
                      v2.BinaryClassHead(name='click')], head_weights=[1., 2.])
    values, export = _head_figures(head, lambda: {'tags': MULTI_HOT, 'click': CLICKS}, logits,
                                   {'w': WEIGHTS})
    assert values['loss'] == values['train_loss'] == pytest.approx(2.679187, abs=2e-6)
    _assert_figures(values['metrics'], TF215_MULTI_HEAD_METRICS)
    _assert_figures(values['spec'], TF215_MULTI_HEAD_METRICS)
    np.testing.assert_allclose(values['predictions'][('tags', 'probabilities')], PROBABILITIES,
                               atol=2e-6)
    assert values['predictions'][('click', 'classes')].tolist() == [[b'1'], [b'0'], [b'1'],
                                                                    [b'1']]
    assert sorted(export) == TF215_MULTI_HEAD_EXPORTS
    assert sorted(export['predict'].outputs) == [
        'click/' + key for key in ('all_class_ids', 'all_classes', 'class_ids', 'classes',
                                   'logistic', 'logits', 'probabilities')] + [
        'tags/' + key for key in ('classes', 'logits', 'probabilities')]
    assert head.name == 'tags_click' and head.logits_dimension == 4


def test_loss_fn_of_features_and_regularization_losses_add_up_as_tf215():
    def loss_fn(labels, logits, features):
        return tf.reduce_sum(tf.square(tf.cast(labels, tf.float32) - tf.sigmoid(logits)), -1,
                             keepdims=True) * features['s']
    tags = MultiLabelHead(3, loss_fn=loss_fn, name='t')
    head = MultiHead([tags, v2.RegressionHead(name='r')])
    features = {'s': np.array([[1.], [2.], [3.], [4.]], np.float32)}
    labels = {'t': MULTI_HOT, 'r': np.array([[.5], [1.], [0.], [2.]], np.float32)}
    logits = np.concatenate([LOGITS, [[.1], [.2], [.3], [.4]]], 1).astype(np.float32)
    with tf.Graph().as_default():
        regularization = [tf.constant(.25), tf.constant(.5)]
        losses = [tags.loss(MULTI_HOT, LOGITS, features, regularization_losses=regularization),
                  head.loss(labels, logits, features, regularization_losses=regularization)]
        metrics = head.update_metrics(head.metrics(regularization), features, logits, labels,
                                      regularization)
        with tf.Session() as session:
            session.run(tf.variables_initializer(
                [variable for metric in metrics.values() for variable in metric.variables]))
            session.run([metric.updates for metric in metrics.values()])
            values = session.run({key: metric.result() for key, metric in metrics.items()})
            np.testing.assert_allclose(session.run(losses), [2.335991, 3.198491], atol=2e-6)
    _assert_figures(values, {'auc/t': 0.638889, 'auc_precision_recall/t': 0.780488,
                             'average_loss/r': 0.8625, 'average_loss/t': 1.585991,
                             'label/mean/r': 0.875, 'loss/r': 0.8625, 'loss/t': 1.585991,
                             'prediction/mean/r': 0.25, 'regularization_loss/t_r': 0.75})


@pytest.mark.parametrize('make, message', [
    (lambda: MultiLabelHead(1), 'n_classes must be > 1'),
    (lambda: MultiLabelHead(2, thresholds=[1.]), r'thresholds must be in \(0, 1\)'),
    (lambda: MultiLabelHead(2, label_vocabulary=['a']), 'Length of label_vocabulary must be'),
    (lambda: MultiLabelHead(2, classes_for_class_based_metrics=['a']),
     'label_vocabulary must be provided'),
    (lambda: MultiLabelHead(2, classes_for_class_based_metrics=[2]),
     r'must be in range \[0, 1\]. Given: 2'),
    (lambda: MultiHead([]), 'Must specify heads'),
    (lambda: MultiHead([MultiLabelHead(2)]), 'All given heads must have name specified'),
    (lambda: MultiHead([MultiLabelHead(2, name='a')], [1., 2.]),
     'heads and head_weights must have the same size'),
])
def test_heads_refuse_bad_arguments_with_tf215s_messages(make, message):
    with pytest.raises(EstimatorError, match=message):
        make()


def test_multi_head_refuses_logits_of_another_width_and_labels_not_by_head():
    head = MultiHead([MultiLabelHead(2, name='a'), MultiLabelHead(3, name='b')])
    with tf.Graph().as_default():
        with pytest.raises(EstimatorError, match=r'Could not split logits of shape \[2, 4\] '
                                                 r'among the heads'):
            head.predictions(tf.zeros([2, 4]))
        with pytest.raises(EstimatorError, match='labels must be a dict'):
            head.loss(tf.zeros([2, 5]), tf.zeros([2, 5]))


def _input_fn(multi_head=False):
    rng = np.random.RandomState(0)
    x = rng.randn(16, 2).astype(np.float32)
    tags = np.stack([x[:, 0] > 0, x[:, 1] > 0, x.sum(1) > .5], 1).astype(np.int64)
    labels = ({'tags': tags, 'click': (x[:, 0] * x[:, 1] > 0).astype(np.int64)[:, None]}
              if multi_head else tags)
    weights = (1. + np.arange(16) % 3).astype(np.float32)[:, None]
    return tf.data.Dataset.from_tensor_slices(({'x': x, 'w': weights}, labels)).batch(4)


def _evaluation(estimator, multi_head=False):
    estimator.train(lambda: _input_fn(multi_head).repeat(), steps=20)
    return estimator.evaluate(lambda: _input_fn(multi_head))


def _model_fn(features, labels, mode):
    kernel = tf.get_variable('k', initializer=np.array([[.1, -.2, .3], [.4, .5, -.6]],
                                                       np.float32))
    head = MultiLabelHead(3, weight_column='w', thresholds=[.5],
                          classes_for_class_based_metrics=[1])
    return head.create_estimator_spec(
        features, mode, tf.matmul(features['x'], kernel), labels,
        train_op_fn=lambda loss: tf.train.GradientDescentOptimizer(.5).minimize(
            loss, global_step=tf.train.get_global_step()))


def test_estimator_of_a_multi_label_head_trains_and_evaluates_as_tf215(tmp_path):
    _assert_figures(_evaluation(EstimatorV2(_model_fn, model_dir=str(tmp_path))),
                    TF215_MODEL_FN_EVALUATION)


def _initial_checkpoint(path, logits_dimension):
    """The DNN's initial values, the same on both sides: 0.5 N(0, 1) of RandomState(1)."""
    rng = np.random.RandomState(1)
    with tf.Graph().as_default():
        for name, shape in [('dnn/hiddenlayer_0/kernel', (2, 4)), ('dnn/hiddenlayer_0/bias', (4,)),
                            ('dnn/logits/kernel', (4, logits_dimension)),
                            ('dnn/logits/bias', (logits_dimension,))]:
            tf.get_variable(name, initializer=rng.randn(*shape).astype(np.float32) * .5)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            return tf.train.Saver().save(session, str(path / 'model.ckpt'))


@pytest.mark.parametrize('make_head, multi_head, expected', [
    (lambda: MultiLabelHead(3, weight_column='w'), False, TF215_DNN_MULTI_LABEL_EVALUATION),
    (lambda: MultiHead([MultiLabelHead(3, name='tags'), v2.BinaryClassHead(name='click')],
                       head_weights=[1., .5]), True, TF215_DNN_MULTI_HEAD_EVALUATION),
])
def test_dnn_estimator_of_multi_label_and_multi_heads_evaluates_as_tf215(make_head, multi_head,
                                                                        expected, tmp_path):
    head = make_head()
    (tmp_path / 'start').mkdir()
    estimator = v2.DNNEstimatorV2(
        head, [4], [tf.feature_column.numeric_column('x', shape=(2,))],
        model_dir=str(tmp_path / 'model'), optimizer='SGD',
        warm_start_from=_initial_checkpoint(tmp_path / 'start', head.logits_dimension))
    _assert_figures(_evaluation(estimator, multi_head), expected)


def test_tf2_face_gives_the_multi_heads_as_tf_estimator_names():
    root = Namespace(Usage(), tf2=True).root
    assert (root.MultiLabelHead, root.MultiHead) == (MultiLabelHead, MultiHead)
