"""Specification of the MirroredStrategy step that the benchmark compares towers with."""
import numpy as np
import pytest

import towers
from models.cifar10 import model as cifar10
from towers.compat import tf
from towers.replication.mirrored import mirrored_train_op

NUM_REPLICAS = 2
PER_REPLICA = 2
LEARNING_RATE = 0.1


def batch_of(seed):
    rs = np.random.RandomState(seed)
    images = rs.standard_normal([NUM_REPLICAS * PER_REPLICA, 24, 24, 3]).astype(np.float32)
    labels = rs.randint(0, cifar10.NUM_CLASSES, NUM_REPLICAS * PER_REPLICA).astype(np.int32)
    return tf.constant(images), tf.constant(labels)


def one_towers_step(config):
    """Initial values, values after one step, and tower losses of `build_towers`."""
    with tf.Graph().as_default():
        replicated = towers.build_towers(
            cifar10.tower_fn, batch_of(0), ['/cpu:0', '/cpu:1'],
            tf.train.GradientDescentOptimizer(LEARNING_RATE))
        train_op = replicated.train_op()
        with tf.Session(config=config) as session:
            session.run(tf.global_variables_initializer())
            initial = {v.op.name: session.run(v) for v in tf.trainable_variables()}
            losses, _ = session.run([replicated.tower_losses, train_op])
            return initial, {v.op.name: session.run(v) for v in tf.trainable_variables()}, losses


def one_mirrored_step(config, initial):
    """Every replica's copy of each variable after one step from `initial`, and the losses."""
    with tf.Graph().as_default():
        strategy = tf.distribute.MirroredStrategy(['/cpu:0', '/cpu:1'])
        with strategy.scope():
            train_op, losses = mirrored_train_op(
                cifar10.tower_fn, batch_of(0), tf.train.GradientDescentOptimizer(LEARNING_RATE))
            variables = tf.trainable_variables()
            start = tf.group([v.assign(initial[v.op.name]) for v in variables])
        with tf.Session(config=config) as session:
            session.run(tf.global_variables_initializer())
            session.run(start)
            loss_values, _ = session.run([losses, train_op])
            return ({v.op.name: session.run(strategy.experimental_local_results(v))
                     for v in variables}, loss_values)


def test_mirrored_step_applies_the_towers_averaged_gradient():
    config = towers.configure_devices(NUM_REPLICAS).config
    initial, towers_after, towers_losses = one_towers_step(config)
    mirrored_after, mirrored_losses = one_mirrored_step(config, initial)
    np.testing.assert_allclose(mirrored_losses, towers_losses, rtol=1e-5)
    assert set(mirrored_after) == set(towers_after)
    for name, copies in mirrored_after.items():
        assert not np.allclose(towers_after[name], initial[name]), name
        for copy in copies:
            np.testing.assert_allclose(copy, towers_after[name], rtol=1e-4, atol=1e-6,
                                       err_msg=name)


def test_mirrored_step_refuses_regularisation_losses():
    def regularised_tower(batch):
        images, _ = batch
        weights = tf.get_variable('w', [24 * 24 * 3, 1],
                                  regularizer=lambda w: tf.reduce_sum(tf.square(w)))
        tf.add_to_collection(tf.GraphKeys.LOSSES,
                             tf.reduce_mean(tf.matmul(tf.reshape(images, [-1, 24 * 24 * 3]),
                                                      weights)))

    with pytest.raises(towers.TowersError, match='regularisation'):
        mirrored_train_op(regularised_tower, batch_of(0),
                          tf.train.GradientDescentOptimizer(LEARNING_RATE))


def two_part_tower(batch):
    """A tower of two linear parts, 'first' and 'second', each with its own loss."""
    images, _ = batch
    flat = tf.reshape(images, [-1, 24 * 24 * 3])
    outputs = {}
    for part in ('first', 'second'):
        with tf.variable_scope(part):
            weights = tf.get_variable('w', [24 * 24 * 3, 1])
        outputs[part + '_loss'] = tf.reduce_mean(tf.square(tf.matmul(flat, weights)))
        tf.add_to_collection(tf.GraphKeys.LOSSES, outputs[part + '_loss'])
    return outputs


def test_mirrored_step_of_an_objective_trains_only_its_scope_on_its_loss():
    config = towers.configure_devices(NUM_REPLICAS).config
    strategy = tf.distribute.MirroredStrategy(['/cpu:0', '/cpu:1'])
    with strategy.scope():
        train_op, _ = mirrored_train_op(
            two_part_tower, batch_of(0), tf.train.GradientDescentOptimizer(LEARNING_RATE),
            objective=towers.Objective(loss='first_loss', scope='first'))
    first, = tf.trainable_variables('first/')
    second, = tf.trainable_variables('second/')
    with tf.Session(config=config) as session:
        session.run(tf.global_variables_initializer())
        before = session.run([first, second])
        session.run(train_op)
        after = session.run([first, second])
    assert not np.allclose(before[0], after[0])
    np.testing.assert_array_equal(before[1], after[1])


def test_mirrored_step_names_a_loss_the_tower_function_did_not_return():
    strategy = tf.distribute.MirroredStrategy(['/cpu:0'])
    with strategy.scope(), pytest.raises(towers.TowersError, match="'third_loss'.*first_loss"):
        mirrored_train_op(two_part_tower, batch_of(0),
                          tf.train.GradientDescentOptimizer(LEARNING_RATE),
                          objective=towers.Objective(loss='third_loss'))
