"""Specification of the tower builder: shards, shared variables, objectives, batch norm."""
import re

import numpy as np
import pytest

import towers
from towers.compat import slim, tf

CONFIG = tf.ConfigProto(device_count={'CPU': 4})


def dense_tower(shard):
    images, targets = shard
    with tf.variable_scope('a'):
        hidden = slim.fully_connected(images, 3, scope='fc')
    with tf.variable_scope('b'):
        output = slim.fully_connected(hidden, 1, activation_fn=None, scope='fc')
    loss_a = tf.reduce_mean(tf.square(hidden))
    loss_b = tf.losses.mean_squared_error(targets, output)
    return {'loss_a': loss_a, 'loss_b': loss_b, 'output': output}


def constant_batch(rows=8, features=5):
    rs = np.random.RandomState(0)
    return (tf.constant(rs.standard_normal([rows, features]).astype(np.float32)),
            tf.constant(rs.standard_normal([rows, 1]).astype(np.float32)))


def cpus(n):
    return ['/cpu:%d' % i for i in range(n)]


def test_each_tower_gets_its_rows_of_the_global_batch():
    global_batch = {'x': tf.constant(np.arange(12).reshape(6, 2))}
    shards = towers.split_batch(global_batch, 3)
    with tf.Session() as sess:
        values = sess.run(shards)
    np.testing.assert_array_equal(values[1]['x'], [[4, 5], [6, 7]])


def test_batch_that_does_not_divide_is_an_error_naming_the_tensor():
    images = tf.zeros([10, 3], name='images')
    with pytest.raises(towers.TowersError, match=r'images.*10 rows.*4 towers'):
        towers.split_batch(images, 4)


def test_batch_of_unknown_size_that_does_not_divide_fails_when_run():
    images = tf.placeholder(tf.float32, [None, 3], name='images')
    shards = towers.split_batch(images, 4)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match='does not divide into 4'):
            sess.run(shards, {images: np.zeros([10, 3])})


def test_towers_share_one_set_of_variables_in_named_tower_scopes():
    replicated = towers.build_towers(dense_tower, constant_batch(), cpus(4),
                                     tf.train.GradientDescentOptimizer(0.1))
    assert sorted(v.op.name for v in tf.global_variables()) == [
        'a/fc/biases', 'a/fc/weights', 'b/fc/biases', 'b/fc/weights']
    assert [t.name_scope for t in replicated.towers] == [
        'tower_0/', 'tower_1/', 'tower_2/', 'tower_3/']
    assert all(t.outputs['output'].op.name.startswith(t.name_scope)
               for t in replicated.towers)


def test_tower_total_loss_sums_only_its_own_losses_collection():
    replicated = towers.build_towers(dense_tower, constant_batch(), cpus(2),
                                     tf.train.GradientDescentOptimizer(0.1))
    for tower in replicated.towers:
        assert [l.op.name for l in tower.losses] == [
            tower.name_scope + 'mean_squared_error/value']
    with tf.Session(config=CONFIG) as sess:
        sess.run(tf.global_variables_initializer())
        totals, loss_b = sess.run([replicated.tower_losses,
                                   [t.outputs['loss_b'] for t in replicated.towers]])
    np.testing.assert_allclose(totals, loss_b)


def test_regularization_losses_count_fully_in_every_tower():
    def regularized_tower(shard):
        slim.fully_connected(shard[0], 1, weights_regularizer=slim.l2_regularizer(1.0),
                             scope='fc')
        tf.losses.add_loss(tf.constant(0.0))
        return {}

    replicated = towers.build_towers(regularized_tower, constant_batch(), cpus(2),
                                     tf.train.GradientDescentOptimizer(0.1))
    with tf.Session(config=CONFIG) as sess:
        sess.run(tf.global_variables_initializer())
        weights = sess.run(tf.global_variables('fc/weights')[0])
        totals = sess.run(replicated.tower_losses)
    np.testing.assert_allclose(totals, [0.5 * np.sum(weights ** 2)] * 2, rtol=1e-5)


def test_several_objectives_from_one_set_of_towers_touch_only_their_scopes():
    objectives = {'total': towers.Objective(),
                  'a': towers.Objective(loss='loss_a', scope='a'),
                  'b': towers.Objective(loss='loss_b', scope='b')}
    replicated = towers.build_towers(dense_tower, constant_batch(), cpus(2),
                                     tf.train.GradientDescentOptimizer(0.1), objectives)
    names = {k: sorted(v.op.name for _, v in g) for k, g in replicated.grads.items()}
    assert names == {'total': ['a/fc/biases', 'a/fc/weights', 'b/fc/biases', 'b/fc/weights'],
                     'a': ['a/fc/biases', 'a/fc/weights'],
                     'b': ['b/fc/biases', 'b/fc/weights']}
    train_a = replicated.train_op('a')
    with tf.Session(config=CONFIG) as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run({v.op.name: v for v in tf.global_variables()})
        sess.run(train_a)
        after = sess.run({v.op.name: v for v in tf.global_variables()})
    changed = sorted(n for n in before if not np.array_equal(before[n], after[n]))
    assert changed == ['a/fc/biases', 'a/fc/weights']


def test_unknown_objective_loss_is_an_error_naming_what_the_tower_returned():
    with pytest.raises(towers.TowersError, match=r"'missing'.*loss_a"):
        towers.build_towers(dense_tower, constant_batch(), cpus(2),
                            tf.train.GradientDescentOptimizer(0.1),
                            {'x': towers.Objective(loss='missing')})


def test_tower_without_losses_is_an_error():
    with pytest.raises(towers.TowersError, match='no loss'):
        towers.build_towers(lambda shard: {}, constant_batch(), cpus(2),
                            tf.train.GradientDescentOptimizer(0.1))


def test_per_tower_loss_summaries_are_collected():
    replicated = towers.build_towers(dense_tower, constant_batch(), cpus(2),
                                     tf.train.GradientDescentOptimizer(0.1))
    with tf.Session(config=CONFIG) as sess:
        sess.run(tf.global_variables_initializer())
        serialized = sess.run(tf.summary.merge(replicated.summaries))
    # TF1 suffixes a summary's tag with _1 when an op already has its name, as in the tutorial.
    tags = sorted(re.sub(r'_1$', '', value.tag)
                  for value in tf.Summary.FromString(serialized).value)
    assert tags == ['tower_0/mean_squared_error/value', 'tower_0/total_loss',
                    'tower_1/mean_squared_error/value', 'tower_1/total_loss']


BN_DECAY = 0.5


def batch_norm_tower(shard):
    normed = slim.batch_norm(shard, decay=BN_DECAY, is_training=True, scope='bn')
    tf.losses.add_loss(tf.reduce_mean(tf.square(normed - 1.0)))
    return {}


def test_batch_norm_moving_statistics_follow_tower_zero_only():
    # Tower 0's rows have mean 1, tower 1's mean 5: the documented update uses tower 0's alone.
    rows = np.concatenate([np.full([4, 2], 1.0), np.full([4, 2], 5.0)]).astype(np.float32)
    rows += np.tile([[-0.5], [0.5], [-0.5], [0.5]], [2, 2]).astype(np.float32)
    replicated = towers.build_towers(batch_norm_tower, tf.constant(rows), cpus(2),
                                     tf.train.GradientDescentOptimizer(0.1))
    assert [op.name for op in replicated.update_ops] == [
        op.name for op in replicated.towers[0].update_ops]
    assert all(op.name.startswith('tower_0/') for op in replicated.update_ops)
    moving_mean = tf.global_variables('bn/moving_mean')[0]
    moving_variance = tf.global_variables('bn/moving_variance')[0]
    with tf.Session(config=CONFIG) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(replicated.train_op())
        mean, variance = sess.run([moving_mean, moving_variance])
    tower0 = rows[:4]
    np.testing.assert_allclose(mean, (1 - BN_DECAY) * tower0.mean(axis=0), rtol=1e-5)
    # Moving variance uses the unbiased (Bessel-corrected) batch variance.
    np.testing.assert_allclose(
        variance, BN_DECAY * 1.0 + (1 - BN_DECAY) * tower0.var(axis=0, ddof=1), rtol=1e-5)


def two_part_batch_norm_tower(shard):
    with tf.variable_scope('a'):
        first = slim.batch_norm(shard, decay=BN_DECAY, is_training=True, scope='bn')
    with tf.variable_scope('b'):
        second = slim.batch_norm(first + 1.0, decay=BN_DECAY, is_training=True, scope='bn')
    return {'loss_a': tf.reduce_mean(tf.square(first - 1.0)),
            'loss_b': tf.reduce_mean(tf.square(second - 1.0))}


def test_objective_limited_to_a_scope_updates_only_that_scopes_batch_norm_statistics():
    objectives = {'a': towers.Objective(loss='loss_a', scope='a'),
                  'b': towers.Objective(loss='loss_b', scope='b')}
    rows = np.random.RandomState(0).standard_normal([8, 2]).astype(np.float32) + 3.0

    def add_loss(shard):
        outputs = two_part_batch_norm_tower(shard)
        tf.losses.add_loss(outputs['loss_a'] + outputs['loss_b'])
        return outputs

    replicated = towers.build_towers(add_loss, tf.constant(rows), cpus(2),
                                     tf.train.GradientDescentOptimizer(0.1), objectives)
    assert all(op.name.startswith('tower_0/a/') for op in replicated.objective_update_ops('a'))
    assert len(replicated.objective_update_ops('a')) == 2
    train_a = replicated.train_op('a')
    statistics = {v.op.name: v for v in tf.global_variables() if 'moving' in v.op.name}
    with tf.Session(config=CONFIG) as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(statistics)
        sess.run(train_a)
        after = sess.run(statistics)
    changed = sorted(n for n in before if not np.array_equal(before[n], after[n]))
    assert changed == ['a/bn/moving_mean', 'a/bn/moving_variance']
