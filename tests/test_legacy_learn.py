"""Specification of `tf.contrib.learn` under the legacy runner: contrib.learn's `RunConfig`,
`Experiment` and `learn_runner` on `tf.estimator.Estimator` and on the interfaces `Evaluable`
and `Trainable`, and `datasets.base`, built here without installing the shim."""
import json
import logging
import os

import numpy as np
import pytest

from towers.compat import slim, tf
from towers.legacy.contrib import learn
from towers.legacy.contrib.tree import Contrib
from towers.legacy.contrib.hparam import HParams
from towers.legacy.contrib.learn import datasets, learn_runner
from towers.legacy.contrib.learn.export import ExportStrategy
from towers.legacy.estimator import Estimator, EstimatorError, EstimatorSpec
from towers.legacy.estimator import run_config as core_run_config
from towers.legacy.modules import LegacyError, Usage

CLUSTER = {'master': ['host0:2222'], 'worker': ['host1:2222', 'host2:2222'],
           'ps': ['host3:2222']}


def set_tf_config(monkeypatch, task_type, index, environment=None):
    config = {'cluster': CLUSTER, 'task': {'type': task_type, 'index': index}}
    if environment:
        config['environment'] = environment
    monkeypatch.setenv('TF_CONFIG', json.dumps(config))


def input_fn():
    x = np.arange(16, dtype=np.float32).reshape(8, 2) / 16
    return {'x': tf.constant(x)}, tf.constant(np.arange(8) % 2)


def model_fn(features, labels, mode, params):
    logits = slim.fully_connected(features['x'], 2, activation_fn=None)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(params.learning_rate).minimize(
        loss, tf.train.get_global_step())
    return EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={
        'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))})


def experiment_fn(run_config, hparams):
    estimator = Estimator(model_fn, config=run_config, params=hparams)
    return learn.Experiment(estimator, input_fn, input_fn, train_steps=3, eval_steps=2)


def test_run_config_without_tf_config_is_one_local_chief_counting_no_workers(monkeypatch):
    monkeypatch.delenv('TF_CONFIG', raising=False)
    config = learn.RunConfig(model_dir='/tmp/m', gpu_memory_fraction=0.5, num_cores=2)
    assert isinstance(config, core_run_config.RunConfig)
    assert (config.task_type, config.task_id, config.is_chief, config.master) == (
        None, 0, True, '')
    assert (config.num_worker_replicas, config.num_ps_replicas, config.environment) == (
        0, 0, 'local')
    assert (config.save_checkpoints_secs, config.save_checkpoints_steps) == (600, None)
    assert config.tf_config.gpu_options.per_process_gpu_memory_fraction == 0.5
    assert config.tf_config.intra_op_parallelism_threads == 2


def test_run_config_reads_tf_config_as_contrib_learn_did(monkeypatch):
    set_tf_config(monkeypatch, 'worker', 1)
    worker = learn.RunConfig()
    assert (worker.master, worker.is_chief, worker.num_worker_replicas,
            worker.num_ps_replicas) == ('grpc://host2:2222', False, 3, 1)
    set_tf_config(monkeypatch, 'worker', 0)
    assert learn.RunConfig().is_chief
    set_tf_config(monkeypatch, 'master', 0, environment='cloud')
    assert learn.RunConfig().is_chief and not learn.RunConfig(master='').master


def test_uid_ignores_the_settings_a_user_may_change_and_survives_replace(monkeypatch):
    monkeypatch.delenv('TF_CONFIG', raising=False)
    config = learn.RunConfig(model_dir='/tmp/a', save_checkpoints_steps=10)
    assert config.replace(model_dir='/tmp/a').uid() == config.uid()
    assert learn.RunConfig(model_dir='/tmp/a', tf_random_seed=3).uid() == config.uid()
    assert learn.RunConfig(model_dir='/tmp/b').uid() != config.uid()


def test_default_schedule_follows_the_task_type(monkeypatch):
    monkeypatch.delenv('TF_CONFIG', raising=False)
    assert learn_runner.default_schedule(learn.RunConfig()) == 'train_and_evaluate'
    for task_type, schedule in (('master', 'train_and_evaluate'), ('worker', 'train'),
                                ('ps', 'run_std_server')):
        set_tf_config(monkeypatch, task_type, 0)
        assert learn_runner.default_schedule(learn.RunConfig()) == schedule


def test_learn_runner_trains_then_evaluates_and_validates_new_checkpoints(tmp_path, caplog):
    # TensorFlow's own logger: a script run in this process before may have quietened it.
    caplog.set_level(logging.INFO, logger='tensorflow')
    config = learn.RunConfig(model_dir=str(tmp_path), save_checkpoints_steps=2)
    eval_result, exports = learn_runner.run(experiment_fn, run_config=config,
                                            hparams=HParams(learning_rate=0.5))
    assert eval_result['global_step'] == 3 and 0 <= eval_result['accuracy'] <= 1
    assert exports == []
    assert 'Validation (step 1): ' in caplog.text
    assert os.listdir(tmp_path / 'eval')


def test_learn_runner_stops_when_the_estimator_did_not_get_the_run_config(tmp_path):
    def other_config(run_config, hparams):
        estimator = Estimator(model_fn, config=learn.RunConfig(model_dir=str(tmp_path / 'x')),
                              params=hparams)
        return learn.Experiment(estimator, input_fn, input_fn)
    with pytest.raises(RuntimeError, match='has another RunConfig than the experiment_fn '
                                           'was given'):
        learn_runner.run(other_config, run_config=learn.RunConfig(model_dir=str(tmp_path)))


def test_an_unknown_schedule_names_the_schedules_there_are(tmp_path):
    with pytest.raises(EstimatorError, match=r"Schedule references non-existent task 'fit'; "
                                             r"the Experiment has .*continuous_eval.*"):
        learn_runner.run(experiment_fn, schedule='fit', hparams=HParams(learning_rate=0.1),
                         run_config=learn.RunConfig(model_dir=str(tmp_path)))


def test_continuous_train_and_eval_alternates_until_train_steps(tmp_path):
    experiment = experiment_fn(learn.RunConfig(model_dir=str(tmp_path)),
                               HParams(learning_rate=0.1))
    experiment._train_steps_per_iteration = 2
    results = []
    eval_result, _ = experiment.continuous_train_and_eval(
        lambda result: results.append(result) or True)
    assert eval_result['global_step'] == 4 and len(results) == 3


def test_experiment_takes_metrics_from_the_estimator_spec_only(tmp_path):
    estimator = Estimator(model_fn, model_dir=str(tmp_path), params=HParams(learning_rate=1.))
    with pytest.raises(EstimatorError, match='eval_metric_ops'):
        learn.Experiment(estimator, input_fn, input_fn, eval_metrics={'a': None})


class RecordingEstimator(learn.Evaluable, learn.Trainable):
    """A contrib.learn estimator that records how it is trained and evaluated."""

    def __init__(self, config=None):
        self.config = config
        self.calls = []

    model_dir = property(lambda self: '/nonexistent')

    def fit(self, x=None, y=None, input_fn=None, steps=None, batch_size=None, monitors=None,
            max_steps=None):
        self.calls.append(('fit', input_fn, steps, max_steps, monitors))
        return self

    def evaluate(self, x=None, y=None, input_fn=None, feed_fn=None, batch_size=None,
                 steps=None, metrics=None, name=None, checkpoint_path=None, hooks=None):
        self.calls.append(('evaluate', input_fn, steps, metrics, name, checkpoint_path))
        return {'global_step': 1}


def train_input():
    return {}, None


def eval_input():
    return {}, None


def test_an_evaluable_and_trainable_estimator_must_define_fit_model_dir_and_evaluate():
    class NoFit(learn.Evaluable, learn.Trainable):
        model_dir = None

        def evaluate(self, **kwargs):
            return {}
    with pytest.raises(TypeError, match='abstract'):
        NoFit()


def test_the_interfaces_are_importable_from_their_tf1_module_paths():
    found = Contrib(Usage())
    for module, name in (('evaluable', 'Evaluable'), ('trainable', 'Trainable')):
        path = 'tensorflow.contrib.learn.python.learn.' + module
        assert getattr(found.resolve(path), name) is getattr(learn, name)


def test_experiment_fits_and_evaluates_a_contrib_estimator_with_its_eval_metrics(tmp_path):
    estimator = RecordingEstimator(learn.RunConfig(model_dir=str(tmp_path)))
    metrics = {'accuracy': object()}
    experiment = learn.Experiment(estimator, train_input, eval_input, eval_metrics=metrics,
                                  train_steps=7, eval_steps=3, min_eval_frequency=0)
    assert experiment.eval_metrics is metrics
    assert experiment.train_and_evaluate() == ({'global_step': 1}, [])
    assert estimator.calls == [('fit', train_input, None, 7, []),
                               ('evaluate', eval_input, 3, metrics, None, None)]
    estimator.calls = []
    experiment.test()
    assert estimator.calls == [('fit', train_input, 1, None, []),
                               ('evaluate', eval_input, 1, metrics, 'one_pass', None)]


def test_checkpoint_and_export_gives_a_contrib_estimator_a_saver_with_the_listener(tmp_path):
    estimator = RecordingEstimator(learn.RunConfig(model_dir=str(tmp_path),
                                                   save_checkpoints_steps=2))
    learn.Experiment(estimator, train_input, eval_input, checkpoint_and_export=True,
                     min_eval_frequency=0).train_and_evaluate()
    monitors = estimator.calls[0][-1]
    assert [type(hook) for hook in monitors] == [tf.train.CheckpointSaverHook]


def test_experiment_refuses_saving_listeners_with_a_contrib_estimator():
    with pytest.raises(EstimatorError, match='`saving_listeners` must be `None`'):
        learn.Experiment(RecordingEstimator(), train_input, eval_input, saving_listeners=[])


def test_experiment_refuses_an_estimator_of_neither_kind():
    with pytest.raises(EstimatorError, match=r'must implement `tf\.contrib\.learn\.Evaluable`'):
        learn.Experiment(object(), train_input, eval_input)


def contrib_experiment(output_dir, config=None):
    return learn.Experiment(RecordingEstimator(config), train_input, eval_input)


def test_learn_runner_with_output_dir_needs_a_nonempty_one():
    with pytest.raises(EstimatorError, match='Must specify an output directory'):
        learn_runner.run(contrib_experiment, output_dir='', schedule='test')


def test_learn_runner_raises_type_errors_for_a_bad_experiment_builder(tmp_path):
    with pytest.raises(TypeError, match="Experiment builder 'nothing' is not callable"):
        learn_runner.run('nothing', output_dir=str(tmp_path))
    with pytest.raises(TypeError, match='Experiment builder did not return an Experiment'):
        learn_runner.run(lambda output_dir: None, output_dir=str(tmp_path))


def test_a_schedule_naming_no_method_is_a_type_error(tmp_path):
    with pytest.raises(TypeError, match="Schedule references non-callable member 'estimator'"):
        learn_runner.run(contrib_experiment, output_dir=str(tmp_path), schedule='estimator')


def test_without_a_config_the_default_schedule_is_train_and_evaluate(tmp_path):
    assert learn_runner.default_schedule(None) == 'train_and_evaluate'
    assert learn_runner.run(contrib_experiment, output_dir=str(tmp_path)) == (
        {'global_step': 1}, [])


def test_a_cluster_task_needs_a_type_with_a_default_schedule(monkeypatch):
    monkeypatch.setenv('TF_CONFIG', json.dumps({'cluster': CLUSTER}))
    with pytest.raises(EstimatorError, match='Must specify a schedule'):
        learn_runner.default_schedule(learn.RunConfig())
    monkeypatch.setenv('TF_CONFIG', json.dumps({
        'cluster': dict(CLUSTER, evaluator=['host4:2222']), 'task': {'type': 'evaluator'}}))
    with pytest.raises(EstimatorError, match="No default schedule for task type 'evaluator'"):
        learn_runner.default_schedule(learn.RunConfig())


def test_an_export_strategy_gets_the_arguments_its_export_fn_takes():
    calls = []
    strategy = ExportStrategy('Servo', lambda estimator, path, checkpoint_path=None:
                              calls.append((estimator, path, checkpoint_path)) or path)
    assert strategy.export('e', 'out', checkpoint_path='ckpt', eval_result={}) == 'out'
    assert calls == [('e', 'out', 'ckpt')]


def test_maybe_download_finds_the_file_and_never_downloads(tmp_path):
    (tmp_path / 'data.tar.gz').write_bytes(b'x')
    assert datasets.maybe_download('data.tar.gz', str(tmp_path), 'https://host/data.tar.gz') == \
        str(tmp_path / 'data.tar.gz')
    with pytest.raises(LegacyError, match=r'^other\.tar\.gz is not in .*never downloads; fetch '
                                          r'it from https://host/other\.tar\.gz'):
        datasets.maybe_download('other.tar.gz', str(tmp_path), 'https://host/other.tar.gz')


def test_load_csv_with_header_gives_data_and_target(tmp_path):
    path = tmp_path / 'iris.csv'
    path.write_text('2,3,setosa,versicolor\n5.1,3.5,1.4,0\n4.9,3.0,1.3,1\n')
    loaded = datasets.load_csv_with_header(str(path), np.int64, np.float32)
    assert loaded.data.shape == (2, 3) and loaded.target.tolist() == [0, 1]
