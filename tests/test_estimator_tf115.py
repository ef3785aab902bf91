"""Specification of `tf.estimator.Estimator` where TF 1.15's own estimator_test pins its
behaviour: what `input_fn` may return, the argument checks (their exception types and phrases),
warm starting before any checkpoint, the metrics `evaluate` writes, and the exports."""
import glob
import logging
import os

import numpy as np
import pytest

from towers.compat import tf
from towers.legacy.estimator import Estimator, EstimatorSpec, ModeKeys, RunConfig
from towers.legacy.estimator import export
from towers.legacy.estimator.estimator import EstimatorV2


def model_fn_of(initial):
    """A model_fn of one variable 'x' (`initial`), its loss constant, a metric of x + 1."""
    def model_fn(features, labels, mode):
        del features, labels
        x = tf.get_variable('x', initializer=initial)
        return EstimatorSpec(mode, loss=tf.constant(1.), predictions={'y': tf.reshape(x, [1])},
                             train_op=tf.assign_add(tf.train.get_global_step(), 1),
                             eval_metric_ops={'x_plus_1': tf.metrics.mean(x + 1.)})
    return model_fn


counting_model_fn = model_fn_of(42.)


def tensor_input_fn():
    return {'x': tf.constant([[1.], [2.]])}, tf.constant([[1.], [2.]])


def dataset_input_fn():
    return tf.data.Dataset.from_tensors(({'x': [[1.]]}, [[1.]]))


def trained(tmp_path, model_fn=counting_model_fn, steps=1, **kwargs):
    estimator = Estimator(model_fn, model_dir=str(tmp_path / 'model'), **kwargs)
    return estimator.train(tensor_input_fn, steps=steps)


def test_numpy_and_python_features_and_labels_reach_the_model_fn_as_given(tmp_path):
    given_features = {'plain': [[1], [1]], 'array': np.ones([2, 1], np.float32)}
    given_labels = {'labels': [[1], [1]]}
    seen = {}

    def model_fn(features, labels, mode):
        seen.update(features=features, labels=labels)
        return counting_model_fn(features, labels, mode)

    Estimator(model_fn, model_dir=str(tmp_path)).train(
        lambda: (given_features, given_labels), steps=1)
    assert seen['features'] is given_features and seen['labels'] is given_labels


def test_an_empty_features_dict_without_labels_trains(tmp_path):
    estimator = Estimator(counting_model_fn, model_dir=str(tmp_path))
    estimator.train(lambda: ({}, None), steps=2)
    assert estimator.get_variable_value('global_step') == 2


def test_features_dicts_may_mix_int_and_str_keys(tmp_path):
    estimator = Estimator(counting_model_fn, model_dir=str(tmp_path))
    estimator.train(lambda: ({0: tf.constant([[1.]]), 'x': tf.constant([[1.]])}, None), steps=1)
    assert estimator.latest_checkpoint()


def test_an_input_fn_tuple_must_have_two_elements(tmp_path):
    estimator = Estimator(counting_model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match='len 2 tuple'):
        estimator.train(lambda: (4, 5, 6), steps=1)


def test_labels_for_a_model_fn_without_labels_are_refused(tmp_path):
    estimator = Estimator(lambda features: None, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match='model_fn does not take labels'):
        estimator.train(lambda: ({'x': 4}, [4]), steps=1)


def test_the_constructor_refuses_a_missing_model_fn_and_a_config_of_another_type(tmp_path):
    with pytest.raises(ValueError, match='an instance of `RunConfig`'):
        Estimator(counting_model_fn, config='NotARunConfig')
    with pytest.raises(ValueError, match='model_fn must be provided'):
        Estimator(None, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match='does not include params'):
        Estimator(lambda features, labels: None, model_dir=str(tmp_path), params={'a': 1})


def test_a_subclass_may_extend_but_not_override_the_estimator(tmp_path):
    class Overriding(Estimator):
        def predict(self, input_fn, predict_keys=None, hooks=None):
            pass

    class Extending(Estimator):
        def predict_proba(self, input_fn):
            pass

    with pytest.raises(ValueError, match='cannot override members of Estimator.*predict'):
        Overriding(counting_model_fn, model_dir=str(tmp_path))
    Extending(counting_model_fn, model_dir=str(tmp_path))


def test_the_default_session_config_places_softly_with_one_optimizer_pass(tmp_path):
    estimator = Estimator(counting_model_fn, model_dir=str(tmp_path))
    assert estimator._session_config.allow_soft_placement
    assert estimator.config.session_config.graph_options.rewrite_options \
        .meta_optimizer_iterations == 1


@pytest.mark.parametrize('call', ['train', 'evaluate', 'predict'])
def test_hooks_that_are_not_session_run_hooks_are_a_type_error(tmp_path, call):
    estimator = Estimator(counting_model_fn, model_dir=str(tmp_path))
    run = {'train': lambda: estimator.train(tensor_input_fn, steps=1, hooks=['x']),
           'evaluate': lambda: estimator.evaluate(tensor_input_fn, steps=1, hooks=['x']),
           'predict': lambda: next(estimator.predict(dataset_input_fn, hooks=['x']))}[call]
    with pytest.raises(TypeError, match='must be a SessionRunHook'):
        run()


def test_saving_listeners_must_be_listeners_and_need_checkpoints(tmp_path):
    estimator = Estimator(counting_model_fn, model_dir=str(tmp_path / 'a'))
    with pytest.raises(TypeError, match='must be a list of CheckpointSaverListener'):
        estimator.train(tensor_input_fn, steps=1, saving_listeners=['x'])
    never_saving = Estimator(counting_model_fn, model_dir=str(tmp_path / 'b'), config=RunConfig(
        save_checkpoints_steps=None, save_checkpoints_secs=None))
    with pytest.raises(ValueError, match='CheckpointSaverHook to use saving_listeners'):
        never_saving.train(tensor_input_fn, steps=1,
                           saving_listeners=[tf.train.CheckpointSaverListener()])


def test_an_evaluator_task_does_not_train(tmp_path):
    class EvaluatorConfig(RunConfig):
        @property
        def task_type(self):
            return 'evaluator'

    estimator = Estimator(counting_model_fn, model_dir=str(tmp_path), config=EvaluatorConfig())
    with pytest.raises(ValueError, match='train_and_evaluate'):
        estimator.train(tensor_input_fn, steps=1)


def test_variables_before_training_are_not_found(tmp_path):
    estimator = Estimator(counting_model_fn, model_dir=str(tmp_path))
    with pytest.raises(ValueError, match='Could not find trained model'):
        estimator.get_variable_names()


def test_evaluate_and_predict_without_a_checkpoint_run_the_warm_started_values(tmp_path):
    first = trained(tmp_path)
    warm = Estimator(model_fn_of(52.), model_dir=str(tmp_path / 'warm'),
                     warm_start_from=first.model_dir)
    assert warm.evaluate(tensor_input_fn, steps=1)['x_plus_1'] == 43.
    assert next(warm.predict(dataset_input_fn))['y'] == 42.


def test_evaluate_returns_nested_metrics_and_refuses_a_global_step_metric(tmp_path):
    def nested(features, labels, mode):
        spec = counting_model_fn(features, labels, mode)
        return spec._replace(eval_metric_ops={'nested': (
            ((tf.constant(2.), tf.constant(1)), tf.constant(3., tf.float64)), tf.no_op())})

    estimator = trained(tmp_path, nested)
    ((two, one), three) = estimator.evaluate(tensor_input_fn, steps=1)['nested']
    assert (two, one, three) == (2., 1, 3.)

    def global_step_metric(features, labels, mode):
        spec = counting_model_fn(features, labels, mode)
        return spec._replace(eval_metric_ops={'global_step': tf.metrics.mean(1.)})

    with pytest.raises(ValueError, match='Metric with name `global_step` is not allowed'):
        Estimator(global_step_metric, model_dir=estimator.model_dir).evaluate(
            tensor_input_fn, steps=1)


def _eval_events(estimator):
    tf.summary.FileWriterCache.clear()
    path, = glob.glob(os.path.join(estimator.eval_dir(), 'events*'))
    return [event.summary for event in tf.train.summary_iterator(path)
            if event.HasField('summary')]


def test_evaluate_writes_summary_metrics_by_value_and_the_checkpoint_in_its_own_event(
        tmp_path):
    def image_metric(features, labels, mode):
        spec = counting_model_fn(features, labels, mode)
        image = tf.summary.image('image', tf.zeros([3, 2, 2, 1]), max_outputs=3)
        return spec._replace(eval_metric_ops={'foo': (image, tf.no_op()),
                                              'vector': tf.metrics.mean_tensor([1., 2.])})

    estimator = trained(tmp_path, image_metric)
    estimator.evaluate(tensor_input_fn, steps=1)
    metrics, checkpoint = _eval_events(estimator)
    tags = {value.tag: value for value in metrics.value}
    assert {'foo/0', 'foo/1', 'foo/2', 'loss', 'vector'} <= set(tags)
    assert tags['foo/0'].HasField('image') and tags['vector'].HasField('tensor')
    assert [value.tag for value in checkpoint.value] == ['checkpoint_path']
    assert tf.make_ndarray(checkpoint.value[0].tensor) == estimator.latest_checkpoint().encode()


def test_evaluate_restores_through_the_scaffolds_saver(tmp_path):
    restored = []

    class Saver(tf.train.Saver):
        def restore(self, sess, save_path):
            restored.append(save_path)
            return super().restore(sess, save_path)

    def with_saver(features, labels, mode):
        spec = counting_model_fn(features, labels, mode)
        return spec._replace(scaffold=tf.train.Scaffold(saver=Saver()))

    estimator = trained(tmp_path, with_saver)
    estimator.evaluate(tensor_input_fn, steps=1)
    assert restored == [estimator.latest_checkpoint()]


def test_predict_keys_select_among_dict_predictions_only(tmp_path):
    estimator = trained(tmp_path)
    assert set(next(estimator.predict(dataset_input_fn, predict_keys=['y', 'z']))) == {'y'}
    with pytest.raises(ValueError, match='Expected to run at least one output from'):
        next(estimator.predict(dataset_input_fn, predict_keys=['z']))

    def one_tensor(features, labels, mode):
        return counting_model_fn(features, labels, mode)._replace(predictions=tf.constant([1.]))

    with pytest.raises(ValueError, match='not valid in case of non-dict predictions'):
        next(Estimator(one_tensor, model_dir=estimator.model_dir).predict(
            dataset_input_fn, predict_keys=['y']))


def test_predict_warns_of_an_input_that_never_ends(tmp_path, caplog):
    estimator = trained(tmp_path)
    # whatever level the process's scripts left TensorFlow's logger at (towers.cli: ERROR)
    caplog.set_level(logging.WARNING, logger='tensorflow')
    next(estimator.predict(tensor_input_fn))
    assert 'Input graph does not use tf.data.Dataset or contain a QueueRunner' in caplog.text


def _parsing_receiver_fn():
    return export.build_parsing_serving_input_receiver_fn(
        {'x': tf.io.VarLenFeature(tf.int64)})


def test_an_export_before_any_checkpoint_takes_the_warm_starts_variables(tmp_path):
    first = trained(tmp_path)
    warm = Estimator(model_fn_of(36.), model_dir=str(tmp_path / 'warm'),
                     warm_start_from=first.model_dir)
    exported = warm.export_saved_model(str(tmp_path / 'export'), _parsing_receiver_fn())
    assert tf.train.load_variable(os.path.join(exported.decode(), 'variables', 'variables'),
                                  'x') == 42.


def test_export_all_saved_models_writes_a_graph_per_mode_under_its_tags(tmp_path):
    estimator = trained(tmp_path)
    receiver_fns = {
        ModeKeys.TRAIN: export.build_raw_supervised_input_receiver_fn(
            {'x': tf.constant([[1.]])}, tf.constant([[1.]])),
        ModeKeys.PREDICT: _parsing_receiver_fn()}
    exported = estimator.experimental_export_all_saved_models(str(tmp_path / 'export'),
                                                              receiver_fns).decode()
    for tags in (['train'], ['serve']):
        with tf.Graph().as_default(), tf.Session() as session:
            meta_graph = tf.saved_model.loader.load(session, tags, exported)
            assert session.run('x:0') == 42.
            operations = {op.name for op in session.graph.get_operations()}
            assert ('input_example_tensor' in operations) == (tags == ['serve'])
    assert meta_graph.signature_def.keys() == {'serving_default'}


def test_estimator_v2_has_no_export_savedmodel(tmp_path):
    estimator = EstimatorV2(counting_model_fn, model_dir=str(tmp_path))
    with pytest.raises(AttributeError, match='Please use `export_saved_model`'):
        estimator.export_savedmodel
    assert callable(Estimator(counting_model_fn, model_dir=str(tmp_path)).export_savedmodel)
