"""`tf.estimator.EstimatorSpec` and the logit_fn helpers as TF 1.15 gave them: its field checks
(exception types and the phrases TF 1.15's messages held), the default 'serving_default' export
of a PREDICT spec, `_replace`, `call_logit_fn`, the logit_fn builders of the canned DNN and
linear estimators with TF 1.15's variable names, and the canned estimators of a given head."""
import numpy as np
import pytest

from towers.compat import keras, tf
from towers.legacy.estimator import canned
from towers.legacy.estimator.canned import head as head_lib
from towers.legacy.estimator.canned.dnn import dnn_logit_fn_builder
from towers.legacy.estimator.canned.linear import linear_logit_fn_builder
from towers.legacy.estimator.export import PredictOutput, RegressionOutput
from towers.legacy.estimator.inputs import numpy_input_fn
from towers.legacy.estimator.namespace import Namespace
from towers.legacy.estimator.spec import (EstimatorSpec, ModeKeys, call_logit_fn,
                                          metrics_with_loss)
from towers.legacy.modules import Usage


@pytest.fixture
def graph():
    with tf.Graph().as_default() as default:
        yield default


def _train_spec(**fields):
    return EstimatorSpec(ModeKeys.TRAIN, loss=tf.constant(1.), train_op=tf.no_op(), **fields)


@pytest.mark.parametrize('mode, fields, phrase', [
    (ModeKeys.TRAIN, {'loss': 1.}, 'Missing train_op'),
    (ModeKeys.EVAL, {}, 'Missing loss'),
    (ModeKeys.PREDICT, {}, 'Missing predictions'),
])
def test_a_missing_required_field_is_a_value_error_saying_missing(graph, mode, fields, phrase):
    fields = {key: tf.constant(value) for key, value in fields.items()}
    with pytest.raises(ValueError, match=phrase):
        EstimatorSpec(mode, **fields)


@pytest.mark.parametrize('loss', [1., tf.SparseTensor([[0]], [0.], [1])])
def test_a_loss_that_is_not_a_dense_tensor_is_a_type_error(graph, loss):
    with pytest.raises(TypeError, match='loss must be Tensor'):
        EstimatorSpec(ModeKeys.EVAL, loss=loss)


def test_a_loss_of_two_values_is_refused_and_one_of_shape_1_made_a_scalar(graph):
    with pytest.raises(ValueError, match='Loss must be scalar'):
        EstimatorSpec(ModeKeys.EVAL, loss=tf.constant([1., 2.]))
    assert EstimatorSpec(ModeKeys.EVAL, loss=tf.constant([1.])).loss.shape == []


def test_prediction_values_that_are_not_dense_tensors_are_a_type_error(graph):
    with pytest.raises(TypeError, match=r'predictions\[number\] must be Tensor'):
        EstimatorSpec(ModeKeys.PREDICT, predictions={'number': 1.})


def test_a_train_op_that_is_neither_op_nor_tensor_is_a_type_error(graph):
    with pytest.raises(TypeError, match='train_op must be Operation or Tensor'):
        EstimatorSpec(ModeKeys.TRAIN, loss=tf.constant(1.), train_op='step')


def test_tensors_of_another_graph_are_refused():
    with tf.Graph().as_default():
        stale = tf.constant(1.)
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match='must be from the default graph'):
            EstimatorSpec(ModeKeys.EVAL, loss=stale)
        with pytest.raises(ValueError, match='must be from the default graph'):
            EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.),
                          eval_metric_ops={'m': (stale, tf.no_op())})


def test_hooks_and_scaffold_of_the_wrong_type_are_type_errors(graph):
    with pytest.raises(TypeError, match='All hooks must be SessionRunHook instances'):
        _train_spec(training_hooks=[object()])
    with pytest.raises(TypeError, match=r'scaffold must be tf\.train\.Scaffold'):
        _train_spec(scaffold=object())


def test_eval_metric_ops_must_be_a_dict_of_pairs(graph):
    loss = tf.constant(1.)
    with pytest.raises(TypeError, match='eval_metric_ops must be a dict'):
        EstimatorSpec(ModeKeys.EVAL, loss=loss, eval_metric_ops=loss)
    with pytest.raises(TypeError, match=r'must be \(metric_value, update_op\) tuples'):
        EstimatorSpec(ModeKeys.EVAL, loss=loss, eval_metric_ops={'m': loss})


def test_a_metric_value_may_be_a_nest_of_tensors(graph):
    loss = tf.constant(1.)
    spec = EstimatorSpec(ModeKeys.EVAL, loss=loss,
                         eval_metric_ops={'m': ((loss, (loss, tf.constant(2))), tf.no_op())})
    assert set(spec.eval_metric_ops) == {'m'}


def test_a_keras_metric_never_updated_is_refused(graph):
    with pytest.raises(ValueError, match=r'Please call update_state\(...\)'):
        EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.),
                      eval_metric_ops={'mean': keras.metrics.Mean()})


def test_predict_spec_exports_its_predictions_as_serving_default(graph):
    predictions = {'score': tf.constant([1.]), 'id': tf.constant([3])}
    spec = EstimatorSpec(ModeKeys.PREDICT, predictions=predictions)
    assert list(spec.export_outputs) == ['serving_default']
    output = spec.export_outputs['serving_default']
    assert isinstance(output, PredictOutput) and output.outputs == predictions


def test_a_lone_export_output_is_also_serving_default(graph):
    regression = RegressionOutput(value=tf.constant([1.]))
    spec = EstimatorSpec(ModeKeys.PREDICT, predictions=tf.constant([1.]),
                         export_outputs={'head-1': regression})
    assert spec.export_outputs == {'head-1': regression, 'serving_default': regression}


def test_several_export_outputs_need_one_named_serving_default(graph):
    value = tf.constant([1.])
    with pytest.raises(ValueError, match='none of them is specified as the default'):
        EstimatorSpec(ModeKeys.PREDICT, predictions=value, export_outputs={
            'a': RegressionOutput(value=value), 'b': PredictOutput({'v': value})})
    with pytest.raises(TypeError, match='export_outputs must be dict'):
        EstimatorSpec(ModeKeys.PREDICT, predictions=value,
                      export_outputs=RegressionOutput(value=value))
    with pytest.raises(TypeError, match='Values in export_outputs must be ExportOutput objects'):
        EstimatorSpec(ModeKeys.PREDICT, predictions=value, export_outputs={'a': value})


def test_the_mode_is_not_checked_so_a_minimal_model_fn_may_leave_it_none(graph):
    spec = EstimatorSpec(None, loss=tf.constant(0.), train_op=tf.no_op())
    assert spec.mode is None and spec.export_outputs is None


def test_predictions_default_to_an_empty_dict_outside_predict(graph):
    assert _train_spec().predictions == {}


def test_replace_checks_the_new_spec_and_keeps_the_mode(graph):
    spec = EstimatorSpec(ModeKeys.EVAL, loss=tf.constant(1.))
    assert spec._replace(predictions={'m': spec.loss}).predictions == {'m': spec.loss}
    with pytest.raises(ValueError, match='Loss must be scalar'):
        spec._replace(loss=tf.constant([1., 2.]))
    with pytest.raises(ValueError, match='mode of EstimatorSpec cannot be changed'):
        spec._replace(mode=ModeKeys.TRAIN)


@pytest.mark.parametrize('name', ['loss', 'global_step'])
def test_evaluate_refuses_a_metric_named_as_its_own(graph, name):
    loss = tf.constant(1.)
    spec = EstimatorSpec(ModeKeys.EVAL, loss=loss,
                         eval_metric_ops={name: tf.metrics.mean(loss)})
    with pytest.raises(ValueError, match='Metric with name `%s` is not allowed' % name):
        metrics_with_loss(spec)


def test_call_logit_fn_passes_only_the_arguments_the_logit_fn_takes(graph):
    features = {'f1': tf.constant([[2.]]), 'f2': tf.constant([[4.]])}

    def logit_fn(features, mode):
        return features['f1'] if mode == ModeKeys.TRAIN else features['f2']
    assert call_logit_fn(logit_fn, features, ModeKeys.EVAL, 'params', 'config') is features['f2']
    with pytest.raises(ValueError, match='logit_fn should return a Tensor or a dictionary'):
        call_logit_fn(lambda features, params: [features['f1']], features, ModeKeys.EVAL, {},
                      None)


def test_dnn_logit_fn_builder_names_variables_as_tf115_in_the_callers_scope(graph):
    with tf.variable_scope('dnn'):
        logit_fn = dnn_logit_fn_builder(
            units=3, hidden_units=[4], feature_columns=[tf.feature_column.numeric_column('x')],
            activation_fn=tf.nn.relu, dropout=None, input_layer_partitioner=None,
            batch_norm=False)
        logits = logit_fn(features={'x': tf.constant([[1.], [2.]])}, mode=ModeKeys.PREDICT)
    assert logits.shape.as_list() == [2, 3]
    assert sorted(v.op.name for v in tf.global_variables()) == [
        'dnn/hiddenlayer_0/bias', 'dnn/hiddenlayer_0/kernel', 'dnn/logits/bias',
        'dnn/logits/kernel']
    with pytest.raises(ValueError, match='units must be an int'):
        dnn_logit_fn_builder(2., [4], [], tf.nn.relu, None, None, False)


def test_linear_logit_fn_builder_is_a_linear_model_named_linear_model(graph):
    logit_fn = linear_logit_fn_builder(units=2,
                                       feature_columns=[tf.feature_column.numeric_column('age')])
    logits = logit_fn(features={'age': tf.constant([[23.], [31.]])})
    bias, = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, 'linear_model/bias_weights')
    age, = tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, 'linear_model/age')
    with tf.Session() as session:
        session.run(tf.global_variables_initializer())
        session.run([bias.assign([10., 5.]), age.assign([[2., 3.]])])
        np.testing.assert_allclose(session.run(logits), [[56., 74.], [72., 98.]])


def test_tf115_private_paths_give_the_model_fn_constants_and_the_estimators_of_a_head():
    estimators = Namespace(Usage())
    model_fn = estimators.resolve('tensorflow_estimator.python.estimator.model_fn')
    assert (model_fn.LOSS_METRIC_KEY, model_fn.AVERAGE_LOSS_METRIC_KEY) == ('loss',
                                                                            'average_loss')
    assert model_fn.call_logit_fn is call_logit_fn
    dnn = estimators.resolve('tensorflow_estimator.python.estimator.canned.dnn')
    assert dnn.dnn_logit_fn_builder is dnn_logit_fn_builder
    assert dnn.DNNEstimator is canned.DNNEstimator


def test_an_estimator_of_a_head_is_its_classifier_or_regressor_with_that_head(tmp_path):
    x = np.arange(8, dtype=np.float32).reshape(8, 1)
    input_fn = numpy_input_fn({'x': x}, 2. * x, batch_size=8, shuffle=False, num_epochs=1)
    columns = [tf.feature_column.numeric_column('x')]
    results = [estimator.evaluate(input_fn) for estimator in (
        canned.LinearEstimator(head_lib.RegressionHead(), columns, str(tmp_path / 'head')),
        canned.LinearRegressor(columns, str(tmp_path / 'regressor')))]
    assert results[0] == results[1]
