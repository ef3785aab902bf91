"""Specification of `tf.estimator` as the legacy runner gives it back (towers/legacy/estimator):
an Estimator trains through the project's own loop, equals `towers.fit` on the same network and
batches, and evaluates, predicts and exports as TF 1.x's did."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import towers
from towers.compat import tf, tf_layers
from towers.legacy.estimator import running
from towers.legacy.estimator import (Estimator, EstimatorSpec, EvalSpec, ModeKeys, RunConfig,
                                     TrainSpec, train_and_evaluate)
from towers.legacy.estimator.export import TensorServingInputReceiver
from towers.legacy.estimator.exporter import BestExporter, FinalExporter, LatestExporter
from towers.training import hooks as hooks_lib

from tests import small_net

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIENT = os.path.join(REPO, 'tests', 'eager_client.py')
STEPS = 20
BATCH = 8
RECORDED = {}


def dataset(repeat=True):
    images, labels = small_net.batch(BATCH * STEPS)
    data = tf.data.Dataset.from_tensor_slices((images, labels)).batch(BATCH)
    return data.repeat() if repeat else data


class LossRecorder(hooks_lib.StepHook):
    """Records `loss` after every step."""

    def __init__(self, steps_done, loss, losses):
        super().__init__(steps_done, loss=loss)
        self._losses = losses

    def after_run(self, run_context, run_values):
        self._losses.append(float(run_values.results['loss']))


def cross_entropy():
    return tf.get_collection(tf.GraphKeys.LOSSES)[0]


def model_fn(features, labels, mode, params):
    """The small net of tests/small_net.py, trained as `SmallRecipe` trains it; each step's
    cross entropy goes to the list `RECORDED[params['run']]` (params are copied)."""
    logits = small_net.tower_fn((features, labels if labels is not None else
                                 tf.zeros(tf.shape(features)[:1], tf.int32)))['logits']
    predictions = {'logits': logits, 'probabilities': tf.nn.softmax(logits)}
    if mode == ModeKeys.PREDICT:
        return EstimatorSpec(mode, predictions=predictions)
    loss = tf.losses.get_total_loss()
    train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(
        loss, global_step=tf.train.get_global_step())
    steps_done = tf.identity(tf.train.get_global_step())
    return EstimatorSpec(
        mode, loss=loss, train_op=train_op, predictions=predictions,
        eval_metric_ops={'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))},
        training_hooks=[LossRecorder(steps_done, cross_entropy(),
                                    RECORDED.setdefault(params['run'], []))])


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    """The small net trained 20 steps through the Estimator, and through `towers.fit`."""
    folder = tmp_path_factory.mktemp('estimator')
    fit_losses = []
    estimator = Estimator(model_fn, str(folder / 'estimator'),
                          RunConfig(save_checkpoints_steps=10, log_step_count_steps=None),
                          params={'run': 'trained'})
    estimator.train(lambda: dataset(), steps=STEPS)
    estimator_losses = RECORDED.pop('trained')

    def iterator_batch():
        return tf.data.make_one_shot_iterator(dataset()).get_next()

    towers.fit(small_net.SmallRecipe(), iterator_batch, towers.configure_devices(1), None,
               str(folder / 'fit'), STEPS, BATCH, log_every_n_steps=None,
               step_hooks=[lambda steps_done: LossRecorder(steps_done, cross_entropy(),
                                                           fit_losses)])
    return estimator, estimator_losses, fit_losses, folder


def test_an_estimator_trains_as_towers_fit_on_the_same_network_and_batches(trained):
    estimator, estimator_losses, fit_losses, folder = trained
    assert len(estimator_losses) == len(fit_losses) == STEPS
    np.testing.assert_allclose(estimator_losses, fit_losses, rtol=1e-6, atol=1e-6)
    assert estimator_losses[-1] < estimator_losses[0]
    fit_checkpoint = tf.train.latest_checkpoint(str(folder / 'fit'))
    names = [name for name, _ in tf.train.list_variables(fit_checkpoint)
             if not name.startswith('global_step')]
    assert 'conv/weights' in names and set(names) <= set(estimator.get_variable_names())
    for name in names:
        np.testing.assert_allclose(estimator.get_variable_value(name),
                                   tf.train.load_variable(fit_checkpoint, name),
                                   rtol=1e-6, atol=1e-6, err_msg=name)


def test_its_model_dir_holds_what_tf1_wrote(trained):
    estimator = trained[0]
    files = os.listdir(estimator.model_dir)
    for step in (0, 10, 20):
        assert 'model.ckpt-%d.index' % step in files
    assert 'graph.pbtxt' in files and any(name.startswith('events.out.tfevents') for name in files)
    assert estimator.latest_checkpoint().endswith('model.ckpt-20')


def test_its_checkpoint_restores_with_a_plain_saver(trained):
    estimator = trained[0]
    with tf.Graph().as_default():
        images, labels = small_net.batch(2)
        small_net.tower_fn((tf.constant(images), tf.constant(labels)))
        saver = tf.train.Saver()
        with tf.Session() as session:
            saver.restore(session, estimator.latest_checkpoint())
            kernel = session.run(tf.global_variables('conv/weights')[0])
    np.testing.assert_array_equal(kernel, estimator.get_variable_value('conv/weights'))


def test_evaluate_reports_its_metrics_loss_and_step_and_writes_them(trained):
    estimator = trained[0]
    results = estimator.evaluate(lambda: dataset(repeat=False), steps=5)
    assert sorted(results) == ['accuracy', 'global_step', 'loss']
    assert results['global_step'] == STEPS and 0 <= results['accuracy'] <= 1
    events = os.listdir(estimator.eval_dir())
    assert any(name.startswith('events.out.tfevents') for name in events)


def test_predict_yields_one_dict_per_example(trained):
    estimator = trained[0]
    images, _ = small_net.batch(6, seed=3)
    predictions = list(estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices(images).batch(4)))
    assert len(predictions) == 6
    assert sorted(predictions[0]) == ['logits', 'probabilities']
    assert predictions[0]['probabilities'].shape == (small_net.CLASSES,)
    only = list(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(images).batch(4),
                                  predict_keys=['logits'], yield_single_examples=False))
    assert [sorted(batch) for batch in only] == [['logits'], ['logits']]


def test_an_exported_saved_model_gives_predicts_outputs_in_plain_tf2(trained, tmp_path):
    estimator = trained[0]

    def receiver():
        images = tf.placeholder(tf.float32, [None, 8, 8, 3], name='images')
        return TensorServingInputReceiver(images, {"images": images})

    warmup = tmp_path / 'warmup_requests'
    warmup.write_bytes(b'requests')
    export_dir = estimator.export_saved_model(
        str(tmp_path / 'export'), receiver,
        assets_extra={'tf_serving_warmup_requests': str(warmup)}).decode()
    assert (os.path.basename(export_dir).isdigit()
            and os.path.dirname(export_dir) == str(tmp_path / 'export'))
    assert open(os.path.join(export_dir, 'assets.extra', 'tf_serving_warmup_requests'),
                'rb').read() == b'requests'
    images, _ = small_net.batch(5, seed=4)
    expected = list(estimator.predict(lambda: tf.data.Dataset.from_tensor_slices(images)
                                      .batch(5), yield_single_examples=False))[0]
    np.savez(tmp_path / 'images.npz', images=images)
    jobs = tmp_path / 'jobs.json'
    jobs.write_text(json.dumps([{'saved_model': export_dir, 'images': str(tmp_path / 'images.npz'),
                                 'out': str(tmp_path / 'out.npz')}]))
    client = subprocess.run([sys.executable, CLIENT, str(jobs)], capture_output=True, text=True,
                            timeout=300, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL='2'))
    assert client.returncode == 0, client.stderr
    served = np.load(tmp_path / 'out.npz')
    for name in ('logits', 'probabilities'):
        np.testing.assert_allclose(served[name], expected[name], rtol=1e-5, atol=1e-5)


def test_train_and_evaluate_evaluates_each_new_checkpoint_and_at_the_end(tmp_path):
    estimator = Estimator(model_fn, str(tmp_path / 'model'),
                          RunConfig(save_checkpoints_steps=5, log_step_count_steps=None),
                          params={'run': 'train_and_evaluate'})
    metrics, exports = train_and_evaluate(
        estimator, TrainSpec(lambda: dataset(), max_steps=12),
        EvalSpec(lambda: dataset(repeat=False), steps=2, throttle_secs=0))
    assert metrics['global_step'] == 12 and exports == []
    evaluated = set()
    for name in os.listdir(estimator.eval_dir()):
        for event in tf.train.summary_iterator(os.path.join(estimator.eval_dir(), name)):
            if any(value.tag == 'accuracy' for value in event.summary.value):
                evaluated.add(event.step)
    assert evaluated == {5, 10, 12}


def test_train_with_max_steps_reached_does_nothing(trained):
    estimator = trained[0]
    before = estimator.latest_checkpoint()
    estimator.train(lambda: dataset(), max_steps=STEPS)
    assert estimator.latest_checkpoint() == before


def test_train_without_steps_runs_until_its_input_ends(tmp_path):
    estimator = Estimator(model_fn, str(tmp_path / 'model'),
                          RunConfig(save_summary_steps=7, log_step_count_steps=None),
                          params={'run': 'to_the_end'})
    estimator.train(lambda: dataset(repeat=False).take(9))
    assert len(RECORDED.pop('to_the_end')) == 9
    assert estimator.latest_checkpoint().endswith('model.ckpt-9')


def bn_model_fn(features, labels, mode):
    """Batch norm straight on the images; the metric 'moving_mean' is what evaluation
    normalises channel 0 with."""
    normalized = tf_layers.normalization.batch_normalization(
        features, training=mode == ModeKeys.TRAIN, momentum=0.99, name='bn')
    logits = tf.matmul(tf.reduce_mean(normalized, [1, 2]), tf.get_variable('logits', [3, 2]))
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
        train_op = tf.train.GradientDescentOptimizer(0.01).minimize(
            loss, global_step=tf.train.get_global_step())
    mean = tf.global_variables('bn/moving_mean')[0]
    return EstimatorSpec(mode, loss=loss, train_op=train_op,
                         eval_metric_ops={'moving_mean': tf.metrics.mean(mean[0])})


def test_evaluate_with_precise_bn_normalises_with_the_training_inputs_statistics(tmp_path):
    rng = np.random.RandomState(0)
    images = (rng.standard_normal([64, 4, 4, 3]) * 2 + 5).astype(np.float32)
    labels = (images[:, 0, 0, 0] > 5).astype(np.int32)

    def input_fn():
        return tf.data.Dataset.from_tensor_slices((images, labels)).batch(16)

    estimator = Estimator(bn_model_fn, str(tmp_path / 'model'),
                          RunConfig(log_step_count_steps=None))
    estimator.train(input_fn, steps=3)
    moving = estimator.evaluate(input_fn)['moving_mean']
    running.use_precise_bn(2)
    try:
        precise = estimator.evaluate(input_fn)['moving_mean']
    finally:
        running.use_precise_bn(None)
    # Three steps at momentum 0.99 leave the moving mean near 0; precise statistics are those
    # of the two first training batches, and the checkpoint keeps its own.
    assert abs(moving) < 0.5
    np.testing.assert_allclose(precise, images[:32, ..., 0].mean(), rtol=1e-5)
    assert estimator.get_variable_value('bn/moving_mean')[0] == pytest.approx(moving)


def test_run_config_has_tf1s_defaults_and_reads_tf_config(monkeypatch):
    config = RunConfig()
    assert (config.save_checkpoints_secs, config.save_checkpoints_steps) == (600, None)
    assert (config.keep_checkpoint_max, config.save_summary_steps,
            config.log_step_count_steps) == (5, 100, 100)
    assert (config.is_chief, config.num_worker_replicas, config.master) == (True, 1, '')
    assert RunConfig(save_checkpoints_steps=50).save_checkpoints_secs is None
    monkeypatch.setenv('TF_CONFIG', json.dumps({
        'cluster': {'chief': ['a:1'], 'worker': ['b:1', 'c:1'], 'ps': ['d:1']},
        'task': {'type': 'worker', 'index': 1}}))
    worker = RunConfig()
    assert (worker.task_type, worker.task_id, worker.is_chief, worker.master) == (
        'worker', 1, False, 'grpc://c:1')
    assert (worker.num_ps_replicas, worker.num_worker_replicas) == (1, 3)


def test_warm_start_from_a_model_dir_starts_a_new_model_from_its_variables(trained, tmp_path):
    estimator = trained[0]
    warm = Estimator(model_fn, str(tmp_path / 'warm'), RunConfig(log_step_count_steps=None),
                     params={'run': 'warm'}, warm_start_from=estimator.model_dir)
    warm.train(lambda: dataset(), steps=1)
    RECORDED.pop('warm')
    started = tf.train.load_variable(str(tmp_path / 'warm' / 'model.ckpt-0'), 'conv/weights')
    np.testing.assert_array_equal(started, estimator.get_variable_value('conv/weights'))


def test_exporters_export_the_final_the_latest_and_the_best_evaluations(tmp_path):
    def receiver():
        images = tf.placeholder(tf.float32, [None, 8, 8, 3], name='images')
        return TensorServingInputReceiver(images, {'images': images})

    def later_step(best_eval_result, current_eval_result):
        return current_eval_result['global_step'] > best_eval_result['global_step']

    estimator = Estimator(model_fn, str(tmp_path / 'model'),
                          RunConfig(save_checkpoints_steps=4, log_step_count_steps=None),
                          params={'run': 'exporters'})
    exporters = [FinalExporter('final', receiver),
                 LatestExporter('latest', receiver, exports_to_keep=1),
                 BestExporter('best', receiver, compare_fn=later_step)]
    metrics, exports = train_and_evaluate(
        estimator, TrainSpec(lambda: dataset(), max_steps=8),
        EvalSpec(lambda: dataset(repeat=False), steps=1, throttle_secs=0, exporters=exporters))
    RECORDED.pop('exporters')
    folders = {name: os.listdir(os.path.join(estimator.model_dir, 'export', name))
               for name in ('final', 'latest', 'best')}
    # Evaluations at 4 and 8: the final export once, the latest kept alone, the best at 8
    # only: as TF 1.15's, it first reads the best from the evaluations' events, which hold
    # the one at 4 already.
    assert {name: len(found) for name, found in folders.items()} == {
        'final': 1, 'latest': 1, 'best': 1}
    assert metrics['global_step'] == 8 and None not in exports
