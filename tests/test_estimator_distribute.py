"""Specification of an Estimator on several devices: `RunConfig(train_distribute=...,
eval_distribute=...)` with TF 1.x's strategies, and `tf.contrib.estimator.replicate_model_fn`.
N replicas of per-replica batch b train as one device on batch N*b; the replicas share one set
of variables; evaluation counts every replica's examples; what cannot be replicated stops with
one line."""
import json

import numpy as np
import pytest

from towers.compat import keras, tf
from towers.legacy.contrib.replicate import TowerOptimizer, replicate_model_fn
from towers.legacy.estimator import (Estimator, EstimatorError, EstimatorSpec, EvalSpec, ModeKeys,
                                     RunConfig, TrainSpec, train_and_evaluate)
from towers.legacy.estimator.distribute import MirroredStrategy, OneDeviceStrategy

from tests import small_net

STEPS = 20
BATCH = 16


def data(num_examples=BATCH * STEPS):
    images, labels = small_net.batch(num_examples)
    return images, labels


def input_fn(batch, repeat=True):
    def make():
        images, labels = data()
        dataset = tf.data.Dataset.from_tensor_slices((images, labels)).batch(batch)
        return dataset.repeat() if repeat else dataset
    return make


def slim_model_fn(features, labels, mode, params):
    """The small net of tests/small_net.py (tf.get_variable, a regulariser), its loss from
    `tf.losses.get_total_loss()` and momentum: what a TF1 model_fn of tf.layers' era does."""
    if labels is None:
        labels = tf.zeros(tf.shape(features)[:1], tf.int32)
    logits = small_net.tower_fn((features, labels))['logits']
    tf.summary.scalar('replica_logit_mean', tf.reduce_mean(logits))
    loss = tf.losses.get_total_loss()
    optimizer = tf.train.MomentumOptimizer(0.1, 0.9)
    if params.get('tower_optimizer'):
        optimizer = TowerOptimizer(optimizer)
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return EstimatorSpec(mode, loss=loss, train_op=train_op,
                         predictions={'logits': logits},
                         eval_metric_ops={'accuracy': tf.metrics.accuracy(
                             labels, tf.argmax(logits, 1, output_type=tf.int32))})


def keras_model_fn(features, labels, mode):
    """Keras layers made anew in each call, as a model_fn of 2018 made them; Adam."""
    net = keras.layers.Flatten(name='flat')(features)
    net = keras.layers.Dense(16, activation='relu', name='hidden')(net)
    logits = keras.layers.Dense(small_net.CLASSES, name='logits')(net)
    loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits))
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss, tf.train.get_global_step())
    return EstimatorSpec(mode, loss=loss, train_op=train_op)


def devices(n):
    return ['/cpu:%d' % i for i in range(n)]


def trained_variables(model_fn, folder, batch, strategy=None, params=None, session_config=None):
    estimator = Estimator(model_fn, str(folder), RunConfig(
        train_distribute=strategy, log_step_count_steps=None, session_config=session_config,
        tf_random_seed=3),
        params=params)
    estimator.train(input_fn(batch), steps=STEPS)
    return estimator, {name: estimator.get_variable_value(name)
                       for name in estimator.get_variable_names()}


@pytest.fixture(scope='module')
def one_device(tmp_path_factory):
    return trained_variables(slim_model_fn, tmp_path_factory.mktemp('one'), BATCH)


@pytest.mark.parametrize('replicas', [2, 4])
def test_n_replicas_of_batch_b_train_as_one_device_on_batch_n_times_b(one_device, tmp_path,
                                                                      replicas):
    _, expected = one_device
    estimator, found = trained_variables(slim_model_fn, tmp_path, BATCH // replicas,
                                         MirroredStrategy(devices=devices(replicas)))
    assert sorted(found) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_allclose(found[name], value, rtol=1e-5, atol=1e-5, err_msg=name)
    assert found['global_step'] == STEPS
    assert not any(name.startswith('tower_') for name in found)


def test_keras_layers_made_in_each_replica_share_one_set_of_variables(tmp_path):
    _, one = trained_variables(keras_model_fn, tmp_path / 'one', BATCH)
    _, two = trained_variables(keras_model_fn, tmp_path / 'two', BATCH // 2,
                               MirroredStrategy(devices=devices(2)))
    assert sorted(two) == sorted(one)
    assert 'hidden/kernel' in two and 'hidden_1/kernel' not in two
    for name, value in one.items():
        np.testing.assert_allclose(two[name], value, rtol=1e-5, atol=1e-5, err_msg=name)


def test_the_replicas_run_on_their_devices_and_only_replica_0_writes_summaries(tmp_path):
    seen = {}

    def model_fn(features, labels, mode, params):
        spec = slim_model_fn(features, labels, mode, params)
        seen.setdefault('graph', tf.get_default_graph())
        return spec

    estimator = Estimator(model_fn, str(tmp_path), RunConfig(
        train_distribute=MirroredStrategy(devices=devices(2)), log_step_count_steps=None))
    estimator.train(input_fn(BATCH // 2), steps=1)
    graph = seen['graph']
    convolutions = [op for op in graph.get_operations() if op.type == 'Conv2D']
    assert sorted(op.device for op in convolutions) == ['/device:CPU:0', '/device:CPU:1']
    assert graph.get_tensor_by_name('conv/weights:0').device == '/cpu:0'
    summaries = [summary.op.name for summary in graph.get_collection(tf.GraphKeys.SUMMARIES)]
    assert 'replica_logit_mean' in summaries
    assert not any(name.startswith('tower_1/') for name in summaries)


def test_evaluation_on_replicas_counts_every_replicas_examples(one_device):
    estimator, _ = one_device
    plain = estimator.evaluate(input_fn(BATCH, repeat=False), steps=4)
    replicated = Estimator(slim_model_fn, estimator.model_dir, RunConfig(
        eval_distribute=MirroredStrategy(devices=devices(2)))).evaluate(
            input_fn(BATCH // 2, repeat=False), steps=4)
    assert replicated['global_step'] == plain['global_step'] == STEPS
    np.testing.assert_allclose(replicated['accuracy'], plain['accuracy'], rtol=1e-6)
    np.testing.assert_allclose(replicated['loss'], plain['loss'], rtol=1e-5)


def test_tensorflows_own_strategies_choose_the_devices_too(one_device, tmp_path):
    _, expected = one_device
    _, found = trained_variables(slim_model_fn, tmp_path / 'one', BATCH,
                                 OneDeviceStrategy('/cpu:0'))
    np.testing.assert_allclose(found['conv/weights'], expected['conv/weights'], rtol=1e-6)
    _, found = trained_variables(slim_model_fn, tmp_path / 'tf', BATCH // 2,
                                 tf.distribute.MirroredStrategy(devices=devices(2)))
    np.testing.assert_allclose(found['conv/weights'], expected['conv/weights'], rtol=1e-5,
                               atol=1e-5)


def test_mirrored_strategy_takes_tf1_arguments():
    assert MirroredStrategy(num_gpus=2).devices == ('/device:GPU:0', '/device:GPU:1')
    assert MirroredStrategy(num_gpus_per_worker=1).num_replicas_in_sync == 1
    assert MirroredStrategy(num_gpus=0).devices == ('/device:CPU:0',)
    assert OneDeviceStrategy('device:CPU:0').devices == ('/device:CPU:0',)
    with pytest.raises(EstimatorError, match='devices or num_gpus, not both'):
        MirroredStrategy(devices=['/gpu:0'], num_gpus=1)


@pytest.mark.parametrize('fault, expected', [
    ('tensors', 'with a distribution strategy it must return a tf.data.Dataset'),
    ('no optimizer', "applied no gradients: its train op must update the variables through an "
                     "optimizer's apply_gradients"),
    ('strategy', 'RunConfig train_distribute is str: expected a distribution strategy'),
])
def test_what_cannot_be_replicated_stops_with_one_line(tmp_path, fault, expected):
    def tensors_input_fn():
        images, labels = data(BATCH)
        return tf.constant(images), tf.constant(labels)

    def assigning_model_fn(features, labels, mode):
        weight = tf.get_variable('w', [], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(features) * weight
        return EstimatorSpec(mode, loss=loss, train_op=tf.group(
            tf.assign_add(weight, 1.0), tf.assign_add(tf.train.get_global_step(), 1)))

    strategy = 'mirrored' if fault == 'strategy' else MirroredStrategy(devices=devices(2))
    with pytest.raises(EstimatorError, match=expected):
        estimator = Estimator(assigning_model_fn if fault == 'no optimizer' else slim_model_fn,
                              str(tmp_path), RunConfig(train_distribute=strategy),
                              params=None if fault == 'no optimizer' else {})
        estimator.train(tensors_input_fn if fault == 'tensors' else input_fn(BATCH // 2),
                        steps=1)


def test_replicate_model_fn_splits_the_global_batch_and_trains_as_one_device(one_device,
                                                                             tmp_path):
    _, expected = one_device
    two_cpus = tf.ConfigProto(device_count={'CPU': 2})
    estimator, found = trained_variables(
        replicate_model_fn(slim_model_fn, devices=devices(2)), tmp_path, BATCH,
        params={'tower_optimizer': True}, session_config=two_cpus)
    for name, value in expected.items():
        np.testing.assert_allclose(found[name], value, rtol=1e-5, atol=1e-5, err_msg=name)
    images, _ = data(6)
    predictions = list(estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices(images).batch(6)))
    assert len(predictions) == 6 and predictions[0]['logits'].shape == (small_net.CLASSES,)


def test_replicate_model_fn_sums_the_towers_gradients_under_reduction_sum(one_device,
                                                                          tmp_path):
    summed = replicate_model_fn(slim_model_fn, tf.losses.Reduction.SUM, devices=devices(2))
    estimator = Estimator(summed, str(tmp_path), RunConfig(
        log_step_count_steps=None, session_config=tf.ConfigProto(device_count={'CPU': 2})),
        params={'tower_optimizer': True})
    one = Estimator(slim_model_fn, str(tmp_path / 'one'), RunConfig(log_step_count_steps=None),
                    params={})
    for each in (estimator, one):
        each.train(input_fn(BATCH), steps=1)
    start = small_net._initial([3, 3, small_net.CHANNELS, small_net.FILTERS], 1)
    step_summed = estimator.get_variable_value('conv/weights') - start
    step_mean = one.get_variable_value('conv/weights') - start
    np.testing.assert_allclose(step_summed, 2 * step_mean, rtol=1e-4, atol=1e-6)


def test_replicate_model_fn_wants_tower_optimizers(tmp_path):
    estimator = Estimator(replicate_model_fn(slim_model_fn, devices=devices(2)), str(tmp_path),
                          RunConfig(session_config=tf.ConfigProto(device_count={'CPU': 2})),
                          params={})
    with pytest.raises(EstimatorError, match='wrap its optimizers with '
                                             'tf.contrib.estimator.TowerOptimizer'):
        estimator.train(input_fn(BATCH), steps=1)
    with pytest.raises(EstimatorError, match='Reduction.NONE'):
        replicate_model_fn(slim_model_fn, tf.losses.Reduction.NONE)


def test_a_strategy_a_cluster_cannot_run_stops_with_one_line_before_any_server(
        tmp_path, monkeypatch):
    strategy = MirroredStrategy(num_gpus=2)
    monkeypatch.setenv('TF_CONFIG', json.dumps({
        'cluster': {'chief': ['localhost:1'], 'ps': ['localhost:2']},
        'task': {'type': 'chief', 'index': 0}}))
    estimator = Estimator(slim_model_fn, str(tmp_path), RunConfig(train_distribute=strategy),
                          params={})
    with pytest.raises(EstimatorError, match='train_distribute=%s in a TF_CONFIG cluster is '
                                             'not provided' % type(strategy).__name__):
        train_and_evaluate(estimator, TrainSpec(input_fn(BATCH), max_steps=1),
                           EvalSpec(input_fn(BATCH)))
