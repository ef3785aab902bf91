"""Specification of `tf.contrib.tpu`'s TPUEstimator with `use_tpu=False`
(towers/legacy/contrib/tpu.py): BERT-era programs run it on CPUs and GPUs as TF 1.15 did, with
the mode's batch size in `params`, `TPUEstimatorSpec`'s `eval_metrics`, `host_call` and
`scaffold_fn` off a TPU, and one line for what needs a TPU."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from towers.compat import tf
from towers.errors import TowersError
from towers.legacy.contrib import Contrib, tpu
from towers.legacy.contrib.tpu_spec import TPUEstimatorSpec
from towers.legacy.estimator import EstimatorError, EstimatorSpec, ModeKeys
from towers.legacy.modules import LegacyError, Usage

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(REPO, 'tests', 'data', 'legacy', 'tpu_estimator_program.py')
COMMAND = [sys.executable, '-m', 'towers.legacy']
SIZES = {'train_batch_size': 4, 'eval_batch_size': 3, 'predict_batch_size': 2}


def error_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith('error:')]


def examples(count=12):
    rng = np.random.RandomState(0)
    x = rng.randn(count, 3).astype(np.float32)
    return x, (x[:, 0] > 0).astype(np.int64)


def input_fn(params):
    x, y = examples()
    return tf.data.Dataset.from_tensor_slices(({'x': x}, y)).batch(params['batch_size'])


def network(features, labels):
    with tf.variable_scope('logits'):
        kernel = tf.get_variable('kernel', [3, 2])
        logits = tf.matmul(features['x'], kernel) + tf.get_variable('bias', [2])
    if labels is None:
        return logits, None
    return logits, tf.losses.sparse_softmax_cross_entropy(labels, logits)


def estimator(model_fn, tmp_path, **kwargs):
    config = tpu.RunConfig(model_dir=str(tmp_path / 'model'), tf_random_seed=1,
                           tpu_config=tpu.TPUConfig(iterations_per_loop=2))
    return tpu.TPUEstimator(model_fn, config=config, use_tpu=False,
                            **dict(SIZES, **kwargs))


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    """A TPUEstimator trained 3 steps with a host_call, evaluated and predicted, recording
    the params its input_fn and model_fn got and each host_call."""
    record = {'input_fn': [], 'model_fn': [], 'host_call': []}

    def recording_input_fn(mode, params):
        record['input_fn'].append((mode, dict(params)))
        return input_fn(params)

    def model_fn(features, labels, mode, params):
        record['model_fn'].append((mode, dict(params)))
        logits, loss = network(features, labels)
        if mode == ModeKeys.PREDICT:
            return tpu.TPUEstimatorSpec(mode, predictions={'logits': logits})
        if mode == ModeKeys.EVAL:
            return tpu.TPUEstimatorSpec(mode, loss=loss)
        global_step = tf.train.get_global_step()
        train_op = tpu.CrossShardOptimizer(tf.train.GradientDescentOptimizer(0.1)).minimize(
            loss, global_step)

        def host_fn(step):
            return tf.py_func(lambda value: record['host_call'].append(int(value[0])) or 0,
                              [step], tf.int64, stateful=True)

        return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op,
                                    host_call=(host_fn, [tf.reshape(global_step, [1])]))

    model = estimator(model_fn, tmp_path_factory.mktemp('trained'))
    model.train(recording_input_fn, steps=3)
    metrics = model.evaluate(recording_input_fn)
    predictions = list(model.predict(recording_input_fn))
    return record, model, metrics, predictions


def test_params_batch_size_is_the_batch_size_of_each_mode_for_input_fn_and_model_fn(trained):
    record = trained[0]
    for what in ('input_fn', 'model_fn'):
        sizes = [(mode, params['batch_size']) for mode, params in record[what]]
        assert sizes == [(ModeKeys.TRAIN, 4), (ModeKeys.EVAL, 3), (ModeKeys.PREDICT, 2)]


def test_the_model_fn_gets_use_tpu_false_and_neither_gets_a_context(trained):
    record = trained[0]
    assert all(params['use_tpu'] is False for _, params in record['model_fn'])
    assert all('use_tpu' not in params for _, params in record['input_fn'])
    assert all('context' not in params for what in ('input_fn', 'model_fn')
               for _, params in record[what])


def test_the_host_call_runs_with_every_training_step(trained):
    record, model = trained[:2]
    # The host call reads the global step in the run that increments it: which value it sees
    # is the runtime's choice, so the calls are counted, and each step's value is in order.
    steps = record['host_call']
    assert len(steps) == 3 and steps == sorted(steps) and set(steps) <= {0, 1, 2, 3}
    assert model.get_variable_value('global_step') == 3


def test_evaluate_and_predict_run_on_the_trained_checkpoint(trained):
    _, _, metrics, predictions = trained
    assert metrics['global_step'] == 3 and np.isfinite(metrics['loss'])
    assert len(predictions) == 12 and predictions[0]['logits'].shape == (2,)


def test_the_estimators_params_keep_no_batch_size(trained):
    assert trained[1].params == {}


def metric_model_fn(eval_metrics):
    def model_fn(features, labels, mode, params):
        logits, loss = network(features, labels)
        classes = tf.argmax(logits, 1)
        return tpu.TPUEstimatorSpec(mode, loss=loss, eval_metrics=eval_metrics(labels, classes))
    return model_fn


def test_eval_metrics_tensors_as_a_list_are_passed_to_metric_fn_in_order(tmp_path):
    def metric_fn(predictions, labels):
        return {'accuracy': tf.metrics.accuracy(labels, predictions),
                'first': tf.metrics.mean(tf.cast(predictions, tf.float32))}

    metrics = estimator(metric_model_fn(lambda labels, classes: (
        metric_fn, [classes, labels])), tmp_path).evaluate(input_fn)
    assert 0 <= metrics['accuracy'] <= 1 and 0 <= metrics['first'] <= 1


def test_eval_metrics_tensors_as_a_dict_are_passed_to_metric_fn_by_name(tmp_path):
    seen = {}

    def metric_fn(labels, predictions):
        seen.update(labels=labels.dtype, predictions=predictions.dtype)
        return {'accuracy': tf.metrics.accuracy(labels, predictions)}

    metrics = estimator(metric_model_fn(lambda labels, classes: (
        metric_fn, {'predictions': tf.cast(classes, tf.int32), 'labels': labels})),
        tmp_path).evaluate(input_fn)
    assert seen == {'labels': tf.int64, 'predictions': tf.int32}
    assert 0 <= metrics['accuracy'] <= 1


def test_eval_metrics_tensors_that_do_not_match_metric_fn_are_one_error(tmp_path):
    def metric_fn(labels):
        return {'accuracy': tf.metrics.accuracy(labels, labels)}

    with pytest.raises(EstimatorError, match=r'2 tensors given, but metric_fn\(\) takes 1'):
        tpu.TPUEstimatorSpec(ModeKeys.EVAL, loss=tf.constant(0.0), eval_metrics=(
            metric_fn, [tf.constant([1]), tf.constant([2])]))


def test_scaffold_fn_restores_an_init_checkpoint_with_init_from_checkpoint(tmp_path):
    with tf.Graph().as_default():
        kernel = tf.get_variable('pretrained/kernel', initializer=np.full([3, 2], 7.0,
                                                                          np.float32))
        with tf.Session() as session:
            session.run(kernel.initializer)
            checkpoint = tf.train.Saver([kernel]).save(session, str(tmp_path / 'init' / 'ckpt'))

    def model_fn(features, labels, mode, params):
        logits, loss = network(features, labels)
        train_op = tf.train.GradientDescentOptimizer(0.0).minimize(
            loss, tf.train.get_global_step())

        def scaffold_fn():
            tf.train.init_from_checkpoint(checkpoint, {'pretrained/kernel': 'logits/kernel'})
            return tf.train.Scaffold()

        return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, scaffold_fn=scaffold_fn)

    model = estimator(model_fn, tmp_path)
    model.train(input_fn, steps=1)
    np.testing.assert_array_equal(model.get_variable_value('logits/kernel'),
                                  np.full([3, 2], 7.0))


def test_a_plain_estimator_spec_is_taken_too(tmp_path):
    def model_fn(features, labels, mode, params):
        logits, loss = network(features, labels)
        return EstimatorSpec(mode, loss=loss, train_op=tf.train.GradientDescentOptimizer(
            0.1).minimize(loss, tf.train.get_global_step()))

    model = estimator(model_fn, tmp_path)
    model.train(input_fn, steps=2)
    assert model.get_variable_value('global_step') == 2


def test_a_param_named_batch_size_is_refused_in_one_line(tmp_path):
    with pytest.raises(EstimatorError, match=r"params may not hold batch_size or context"):
        estimator(lambda features, labels, mode, params: None, tmp_path,
                  params={'batch_size': 32})


def test_an_input_fn_without_params_is_refused_in_one_line(tmp_path):
    model = estimator(metric_model_fn(lambda labels, classes: None), tmp_path)
    with pytest.raises(EstimatorError, match=r"input_fn no_params\(\) takes no params"):
        def no_params():
            return input_fn({'batch_size': 2})
        model.evaluate(no_params)


def test_use_tpu_true_is_one_line_saying_no_tpu_is_here(tmp_path):
    with pytest.raises(EstimatorError, match='no TPU is provided here.*pass use_tpu=False'):
        tpu.TPUEstimator(lambda features, labels, mode, params: None,
                         config=tpu.RunConfig(), use_tpu=True, train_batch_size=8)
    assert issubclass(EstimatorError, TowersError)


def test_a_tpu_cluster_resolver_stops_with_one_line():
    with pytest.raises(LegacyError, match=r"TPUClusterResolver\('my-tpu'\): no TPU"):
        tpu.TPUClusterResolver('my-tpu', zone='us-central1-b')


def test_tpu_config_has_tf_1_15s_defaults_and_run_config_keeps_it_through_replace():
    config = tpu.TPUConfig()
    assert config.iterations_per_loop == 2 and config.num_shards is None
    assert config.per_host_input_for_training == tpu.InputPipelineConfig.PER_HOST_V1
    assert tpu.TPUConfig(per_host_input_for_training=False).per_host_input_for_training == (
        tpu.InputPipelineConfig.PER_SHARD_V1)
    run_config = tpu.RunConfig(master='', model_dir='/tmp/m', tpu_config=tpu.TPUConfig(
        iterations_per_loop=100, num_shards=8)).replace(save_checkpoints_steps=5)
    assert run_config.tpu_config.num_shards == 8 and run_config.save_checkpoints_steps == 5
    assert run_config.master == '' and run_config.evaluation_master == ''
    with pytest.raises(EstimatorError, match='iterations_per_loop'):
        tpu.TPUConfig(iterations_per_loop=0)


def test_cross_shard_optimizer_off_a_tpu_applies_the_wrapped_optimizers_update():
    with tf.Graph().as_default():
        weight = tf.get_variable('w', initializer=2.0)
        step = tpu.CrossShardOptimizer(tf.train.GradientDescentOptimizer(0.5)).minimize(
            tf.square(weight))
        with tf.Session() as session:
            session.run(weight.initializer)
            session.run(step)
            assert session.run(weight) == pytest.approx(2.0 - 0.5 * 4.0)


def test_tf1_import_paths_of_the_tpu_estimator_resolve_to_it():
    found = Contrib(Usage())
    assert found.resolve('tensorflow.contrib.tpu').TPUEstimator is tpu.TPUEstimator
    assert found.resolve('tensorflow.contrib.tpu.python.tpu.tpu_estimator').TPUEstimator is (
        tpu.TPUEstimator)
    assert found.resolve('tensorflow.contrib.tpu.python.tpu.tpu_config').RunConfig is (
        tpu.RunConfig)
    resolver = found.resolve('tensorflow.contrib.cluster_resolver')
    assert resolver.TPUClusterResolver is tpu.TPUClusterResolver
    assert resolver.SimpleClusterResolver is tf.distribute.cluster_resolver.SimpleClusterResolver


def test_the_bert_style_program_trains_evaluates_and_predicts_under_the_runner(tmp_path):
    report = tmp_path / 'report.json'
    result = subprocess.run(COMMAND + [PROGRAM, '--output_dir', str(tmp_path / 'out'),
                                       '--num_train_steps', '30', '--report', str(report)],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert 'examples/sec: ' in result.stderr and 'global_step/sec: ' in result.stderr
    found = json.loads(report.read_text())
    assert len(found['host_call_steps']) == 30
    assert found['eval']['global_step'] == 30 and found['eval']['eval_accuracy'] > 0.8
    assert len(found['probabilities']) == 8
    assert 'eval: eval_accuracy' in result.stdout and 'predict: 8 examples' in result.stdout


def test_use_tpu_under_the_runner_is_one_error_line(tmp_path):
    result = subprocess.run(COMMAND + [PROGRAM, '--output_dir', str(tmp_path), '--use_tpu'],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    errors = error_lines(result.stderr)
    assert len(errors) == 1 and 'Traceback' not in result.stderr, result.stderr
    assert errors[0].startswith('error: %s:' % PROGRAM)
    assert 'TPUEstimator(use_tpu=True): no TPU is provided here' in errors[0]


def test_a_host_call_writing_contrib_summaries_writes_them_each_step(tmp_path):
    """The TPU programs' pattern (BERT's, ResNet's): the host_call makes a
    `tf.contrib.summary` file writer and records scalars; TF 1.15 wrote host_loss at steps 0-3."""
    from towers.legacy.contrib import summary
    logdir = str(tmp_path / 'host')

    def model_fn(features, labels, mode, params):
        _, loss = network(features, labels)
        global_step = tf.train.get_global_step()
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step)

        def host_fn(step, host_loss):
            with summary.create_file_writer(logdir).as_default():
                with summary.always_record_summaries():
                    summary.scalar('host_loss', host_loss[0], step=step[0])
                    return summary.all_summary_ops()

        return tpu.TPUEstimatorSpec(mode, loss=loss, train_op=train_op, host_call=(
            host_fn, [tf.reshape(global_step, [1]), tf.reshape(loss, [1])]))

    estimator(model_fn, tmp_path).train(input_fn, steps=3)
    steps = [event.step for path in tf.gfile.Glob(os.path.join(logdir, 'events.*'))
             for event in tf.train.summary_iterator(path)
             for value in event.summary.value if value.tag == 'host_loss']
    assert len(steps) == 3 and set(steps) <= {0, 1, 2, 3}


def test_tpu_estimator_spec_refuses_a_hook_that_is_not_one_with_a_type_error():
    with pytest.raises(TypeError, match='All hooks must be SessionRunHook instances'):
        TPUEstimatorSpec(ModeKeys.TRAIN, loss=tf.constant(1.), train_op=tf.no_op(),
                         training_hooks=['not a hook'])


def test_tpu_run_config_keeps_its_session_config_in_a_cluster(monkeypatch):
    monkeypatch.setenv('TF_CONFIG', json.dumps({
        'cluster': {'chief': ['host0:2222'], 'worker': ['host1:2222']},
        'task': {'type': 'worker', 'index': 0}}))
    assert tpu.RunConfig().session_config is None
