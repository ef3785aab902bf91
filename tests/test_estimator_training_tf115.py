"""`tf.estimator.TrainSpec`, `EvalSpec`, `train_and_evaluate` and the hooks of
`tf.estimator.experimental` as TF 1.15 gave them: the argument checks (exception types and the
phrases TF 1.15's messages held), `InMemoryEvaluatorHook`'s evaluations of the training's
variables in memory, and `make_stop_at_checkpoint_step_hook`."""
import json
import os
import time

import pytest

from towers.compat import tf
from towers.legacy.estimator import (Estimator, EstimatorSpec, EvalSpec, ModeKeys, RunConfig,
                                     TrainSpec, train_and_evaluate)
from towers.legacy.estimator import hooks
from towers.legacy.estimator.exporter import Exporter


@pytest.fixture(autouse=True)
def no_tf_config(monkeypatch):
    monkeypatch.delenv('TF_CONFIG', raising=False)


class _NamedExporter(Exporter):
    def __init__(self, name):
        self._name = name

    @property
    def name(self):
        return self._name

    def export(self, estimator, export_path, checkpoint_path, eval_result, is_the_final_export):
        return None


def _input_fn():
    return tf.data.Dataset.range(5)


def test_train_spec_checks_its_arguments_with_tf115s_exception_types():
    with pytest.raises(TypeError, match='`input_fn` must be callable'):
        TrainSpec('not a function')
    with pytest.raises(ValueError, match='Must specify max_steps > 0'):
        TrainSpec(_input_fn, max_steps=0)
    with pytest.raises(TypeError, match='All hooks must be `SessionRunHook` instances'):
        TrainSpec(_input_fn, hooks=[object()])


@pytest.mark.parametrize('arguments, error, phrase', [
    ({'input_fn': 'not a function'}, TypeError, '`input_fn` must be callable'),
    ({'steps': 0}, ValueError, 'Must specify steps > 0'),
    ({'name': 123}, TypeError, '`name` must be string'),
    ({'hooks': [object()]}, TypeError, 'All hooks must be `SessionRunHook` instances'),
    ({'start_delay_secs': -1}, ValueError, 'Must specify start_delay_secs >= 0'),
    ({'throttle_secs': -1}, ValueError, 'Must specify throttle_secs >= 0'),
])
def test_eval_spec_checks_its_arguments_with_tf115s_exception_types(arguments, error, phrase):
    with pytest.raises(error, match=phrase):
        EvalSpec(**dict({'input_fn': _input_fn}, **arguments))


@pytest.mark.parametrize('exporters', [tf.train.SessionRunHook(),
                                       [_NamedExporter('a'), tf.train.SessionRunHook()]])
def test_exporters_other_than_exporters_are_a_type_error(exporters):
    with pytest.raises(TypeError, match='`exporters` must be an Exporter'):
        EvalSpec(_input_fn, exporters=exporters)


@pytest.mark.parametrize('names, phrase', [
    ([None], 'An Exporter cannot have a name that is `None` or empty'),
    (['a', ''], 'An Exporter cannot have a name that is `None` or empty'),
    ([123], 'An Exporter must have a string name'),
    (['a', 'a'], '`exporters` must have unique names'),
])
def test_exporter_names_must_be_distinct_nonempty_strings(names, phrase):
    with pytest.raises(ValueError, match=phrase):
        EvalSpec(_input_fn, exporters=[_NamedExporter(name) for name in names])


def test_eval_spec_takes_one_exporter_or_several_as_a_tuple():
    one, two = _NamedExporter('a'), _NamedExporter('b')
    assert EvalSpec(_input_fn, exporters=one).exporters == (one,)
    assert EvalSpec(_input_fn, exporters=[one, two]).exporters == (one, two)


def _counting_model_fn(features, labels, mode):
    """w holds the global step of the last training step; EVAL reports mean(w) as 'w'."""
    step = tf.train.get_global_step()
    w = tf.get_variable('w', [], tf.int64, tf.zeros_initializer())
    if mode == ModeKeys.TRAIN:
        with tf.control_dependencies([features]):
            increment = tf.assign_add(step, 1)
        with tf.control_dependencies([increment]):
            train_op = tf.assign(w, step)
        return EstimatorSpec(mode, loss=tf.constant(1.), train_op=train_op)
    with tf.control_dependencies([features]):
        loss = tf.constant(2.)
    return EstimatorSpec(mode, loss=loss,
                         eval_metric_ops={'w': tf.metrics.mean(tf.cast(w, tf.float32))})


def test_train_and_evaluate_checks_eval_spec_then_estimator_then_train_spec(tmp_path):
    estimator = Estimator(_counting_model_fn, str(tmp_path))
    with pytest.raises(TypeError, match='`eval_spec` must have type `tf.estimator.EvalSpec`'):
        train_and_evaluate(object(), object(), object())
    with pytest.raises(TypeError, match='`estimator` must have type `tf.estimator.Estimator`'):
        train_and_evaluate(object(), object(), EvalSpec(_input_fn))
    with pytest.raises(TypeError, match='`train_spec` must have type `tf.estimator.TrainSpec`'):
        train_and_evaluate(estimator, object(), EvalSpec(_input_fn))


def test_train_and_evaluate_refuses_an_evaluator_other_than_task_0(monkeypatch, tmp_path):
    monkeypatch.setenv('TF_CONFIG', json.dumps({'cluster': {'chief': ['host0:0']},
                                                'task': {'type': 'evaluator', 'index': 1}}))
    estimator = Estimator(_counting_model_fn, str(tmp_path))
    with pytest.raises(ValueError, match='there can only be one `evaluator` task .*task id 0'):
        train_and_evaluate(estimator, TrainSpec(_input_fn), EvalSpec(_input_fn))


def test_an_evaluator_task_evaluates_the_newest_checkpoint_until_max_steps(monkeypatch,
                                                                            tmp_path):
    Estimator(_counting_model_fn, str(tmp_path)).train(_input_fn, max_steps=3)
    monkeypatch.setenv('TF_CONFIG', json.dumps({'cluster': {'chief': ['host0:0']},
                                                'task': {'type': 'evaluator', 'index': 0}}))
    evaluator = Estimator(_counting_model_fn, str(tmp_path))
    metrics, _ = train_and_evaluate(evaluator, TrainSpec(_input_fn, max_steps=3),
                                    EvalSpec(_input_fn, start_delay_secs=0))
    assert (metrics['global_step'], metrics['w']) == (3, 3.)


def _evaluated_steps(directory):
    """{global step: {tag: value}} of the scalar summaries in `directory`'s events."""
    found = {}
    for path in tf.gfile.Glob(os.path.join(directory, 'events*')):
        for event in tf.train.summary_iterator(path):
            for value in event.summary.value:
                found.setdefault(event.step, {})[value.tag] = value.simple_value
    return found


def test_in_memory_evaluator_evaluates_the_training_values_at_start_every_n_and_end(tmp_path):
    estimator = Estimator(_counting_model_fn, str(tmp_path))
    evaluator = hooks.InMemoryEvaluatorHook(estimator, _input_fn, every_n_iter=2, name='mem')
    estimator.train(_input_fn, hooks=[evaluator])
    evaluated = _evaluated_steps(estimator.eval_dir('mem'))
    assert sorted(evaluated) == [0, 2, 4, 5]
    assert {step: values['w'] for step, values in evaluated.items()} == {
        0: 0., 2: 2., 4: 4., 5: 5.}
    assert evaluated[5]['loss'] == 2.
    assert 'checkpoint_path' not in evaluated[5]


def test_in_memory_evaluator_evaluates_steps_batches_when_given(tmp_path):
    batches = []

    class CountBatches(tf.train.SessionRunHook):
        def after_run(self, run_context, run_values):
            batches.append(1)

    estimator = Estimator(_counting_model_fn, str(tmp_path))
    evaluator = hooks.InMemoryEvaluatorHook(estimator, _input_fn, steps=2,
                                            hooks=[CountBatches()], every_n_iter=100)
    estimator.train(_input_fn, hooks=[evaluator])
    assert len(batches) == 4


@pytest.mark.parametrize('every_n_iter', [None, 0])
def test_in_memory_evaluator_needs_a_positive_every_n_iter(tmp_path, every_n_iter):
    estimator = Estimator(_counting_model_fn, str(tmp_path))
    with pytest.raises(ValueError, match='invalid every_n_iter'):
        hooks.InMemoryEvaluatorHook(estimator, _input_fn, every_n_iter=every_n_iter)


def test_in_memory_evaluator_refuses_a_cluster(monkeypatch, tmp_path):
    monkeypatch.setenv('TF_CONFIG', json.dumps({
        'cluster': {'chief': ['host0:0'], 'ps': ['host1:1']},
        'task': {'type': 'chief', 'index': 0}}))
    estimator = Estimator(_counting_model_fn, str(tmp_path), config=RunConfig())
    with pytest.raises(ValueError, match='supports only single machine'):
        hooks.InMemoryEvaluatorHook(estimator, _input_fn)


@pytest.mark.parametrize('scaffold, phrase', [
    (lambda: tf.train.Scaffold(saver=tf.train.Saver()), 'does not support custom saver'),
    (lambda: tf.train.Scaffold(init_fn=lambda scaffold, session: None),
     'does not support custom init_fn'),
])
def test_in_memory_evaluator_refuses_an_eval_scaffold_it_cannot_copy_into(tmp_path, scaffold,
                                                                        phrase):
    def model_fn(features, labels, mode):
        tf.get_variable('w', [1])
        return EstimatorSpec(mode, loss=tf.constant(1.), train_op=tf.no_op(),
                             scaffold=scaffold())

    evaluator = hooks.InMemoryEvaluatorHook(Estimator(model_fn, str(tmp_path)), _input_fn)
    with pytest.raises(ValueError, match=phrase):
        evaluator.begin()


def test_in_memory_evaluator_refuses_saveables_other_than_variables(tmp_path):
    def model_fn(features, labels, mode):
        saveable = tf.Variable([0.], trainable=False,
                               collections=[tf.GraphKeys.SAVEABLE_OBJECTS])
        step = tf.train.get_global_step()
        init_op = tf.group(saveable.initializer, step.initializer)
        return EstimatorSpec(mode, loss=tf.constant(1.), train_op=tf.assign_add(step, 1),
                             scaffold=tf.train.Scaffold(init_op=init_op))

    estimator = Estimator(model_fn, str(tmp_path))
    evaluator = hooks.InMemoryEvaluatorHook(estimator, _input_fn)
    with pytest.raises(ValueError, match='does not support saveables'):
        estimator.train(_input_fn, hooks=[evaluator])


def test_stop_at_checkpoint_step_hook_is_stop_at_step_for_the_chief(tmp_path):
    hook = hooks.make_stop_at_checkpoint_step_hook(
        Estimator(_counting_model_fn, str(tmp_path)), 300)
    assert isinstance(hook, tf.train.StopAtStepHook)
    assert hook._last_step == 300


def test_stop_at_checkpoint_step_hook_of_a_worker_waits_for_the_checkpoint(tmp_path):
    class WorkerConfig(RunConfig):
        @property
        def is_chief(self):
            return False

    estimator = Estimator(_counting_model_fn, str(tmp_path), config=WorkerConfig())
    hook = hooks.make_stop_at_checkpoint_step_hook(estimator, 300)
    assert isinstance(hook, hooks._StopAtCheckpointStepHook)
    assert (hook._last_step, hook._model_dir) == (300, estimator.model_dir)


@pytest.mark.parametrize('saved_step, stops', [(None, False), (9, False), (10, True)])
def test_stop_at_checkpoint_step_stops_only_once_a_checkpoint_of_the_last_step_exists(
        tmp_path, monkeypatch, saved_step, stops):
    waits = []
    monkeypatch.setattr(time, 'sleep', waits.append)
    with tf.Graph().as_default():
        step = tf.train.create_global_step()
        assign_ten, no_op = tf.assign(step, 10), tf.no_op()
        if saved_step is not None:
            with tf.Session() as session:
                session.run(tf.assign(step, saved_step))
                tf.train.Saver().save(session, str(tmp_path / 'model.ckpt'))
        hook = hooks._StopAtCheckpointStepHook(str(tmp_path), last_step=10,
                                               wait_after_file_check_secs=7)
        with tf.train.SingularMonitoredSession(hooks=[hook]) as session:
            session.raw_session().run(assign_ten)
            session.run(no_op)
            assert session.should_stop() == stops
    assert waits == ([] if stops else [7])


def test_stop_at_checkpoint_step_hook_needs_last_step_and_model_dir(tmp_path):
    with pytest.raises(ValueError, match='last_step must be specified'):
        hooks._StopAtCheckpointStepHook(str(tmp_path), None)
    with pytest.raises(ValueError, match='model_dir must be specified'):
        hooks._StopAtCheckpointStepHook(None, 10)
