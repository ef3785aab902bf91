"""Specification of `tf.contrib.estimator`'s wrappers under the legacy runner: `add_metrics`,
`forward_features`, `clip_gradients_by_norm` and the early-stopping hooks, on the runner's
`tf.estimator.Estimator`."""
import numpy as np
import pytest

from towers.compat import slim, tf
from towers.legacy.contrib import extenders
from towers.legacy.estimator import Estimator, EstimatorError, EstimatorSpec, ModeKeys


def input_fn():
    features = {'x': tf.constant(np.eye(4, 2, dtype=np.float32)),
                'id': tf.constant([10, 11, 12, 13])}
    return features, tf.constant([0, 1, 0, 1])


def model_fn(features, labels, mode):
    logits = slim.fully_connected(features['x'], 2, activation_fn=None)
    predictions = {'class': tf.argmax(logits, 1)}
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions=predictions)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss,
                                                               tf.train.get_global_step())
    return EstimatorSpec(mode, predictions=predictions, loss=loss, train_op=train_op)


def predict_input_fn():
    return tf.data.Dataset.from_tensor_slices(input_fn()[0]).batch(4)


@pytest.fixture
def trained(tmp_path):
    estimator = Estimator(model_fn, model_dir=str(tmp_path))
    return estimator.train(input_fn, steps=2)


def test_add_metrics_adds_the_metric_fns_metrics_to_evaluation(trained):
    def metric_fn(labels, predictions):
        return {'mean_class': tf.metrics.mean(predictions['class'])}
    result = extenders.add_metrics(trained, metric_fn).evaluate(input_fn, steps=1)
    assert set(result) == {'loss', 'global_step', 'mean_class'} and result['global_step'] == 2


def test_add_metrics_refuses_a_metric_fn_of_other_arguments(trained):
    with pytest.raises(EstimatorError, match='takes weights; it may take only features'):
        extenders.add_metrics(trained, lambda labels, weights: {})


def test_forward_features_puts_the_feature_into_each_prediction(trained):
    predictions = list(extenders.forward_features(trained, 'id').predict(predict_input_fn))
    assert [p['id'] for p in predictions] == [10, 11, 12, 13]
    assert set(predictions[0]) == {'class', 'id'}


def test_forward_features_of_a_key_the_features_lack_names_the_features(trained):
    forwarding = extenders.forward_features(trained, ['nope'])
    with pytest.raises(EstimatorError, match="'nope' is not a feature .*id, x"):
        next(forwarding.predict(predict_input_fn))


def test_clip_gradients_by_norm_applies_gradients_clipped_to_the_global_norm():
    variable = tf.get_variable('v', initializer=[0.0, 0.0])
    optimizer = extenders.clip_gradients_by_norm(tf.train.GradientDescentOptimizer(1.0), 1.0)
    step = optimizer.minimize(-tf.reduce_sum(variable * [3.0, 4.0]))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        np.testing.assert_allclose(sess.run(variable), [0.6, 0.8], rtol=1e-6)


def write_eval(eval_dir, step_losses):
    writer = tf.summary.FileWriter(eval_dir)
    for step, loss in step_losses:
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag='loss', simple_value=loss)]),
                           step)
    writer.close()


def test_read_eval_metrics_gives_each_steps_scalars(tmp_path):
    write_eval(str(tmp_path), [(20, 0.5), (10, 0.7)])
    assert list(extenders.read_eval_metrics(str(tmp_path)).items()) == [
        (10, {'loss': pytest.approx(0.7)}), (20, {'loss': pytest.approx(0.5)})]


def test_stop_if_no_decrease_hook_stops_training_when_the_loss_stalled(tmp_path):
    estimator = Estimator(model_fn, model_dir=str(tmp_path))
    write_eval(estimator.eval_dir(), [(10, 0.5), (20, 0.6), (40, 0.6)])
    hook = extenders.stop_if_no_decrease_hook(estimator, 'loss', 30, run_every_secs=None,
                                              run_every_steps=1)
    estimator.train(input_fn, steps=5, hooks=[hook])
    assert estimator.get_variable_value('global_step') == 1


def test_stop_if_no_decrease_hook_lets_training_go_on_while_the_loss_improves(tmp_path):
    estimator = Estimator(model_fn, model_dir=str(tmp_path))
    write_eval(estimator.eval_dir(), [(10, 0.7), (20, 0.6), (40, 0.5)])
    hook = extenders.stop_if_no_decrease_hook(estimator, 'loss', 30, run_every_secs=None,
                                              run_every_steps=1)
    estimator.train(input_fn, steps=3, hooks=[hook])
    assert estimator.get_variable_value('global_step') == 3
