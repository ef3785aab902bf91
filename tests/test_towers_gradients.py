"""Specification of gradient averaging: N towers update the model as one tower on N times the batch."""
import logging

import numpy as np
import pytest

import towers
from towers.compat import tf

PER_TOWER_BATCH = 4


def small_conv_net(shard):
    """A conv net without batch norm: conv 3x3x3x8 -> relu -> max pool -> dense 10, mean loss."""
    images, labels = shard
    weights = tf.get_variable('conv/weights', [3, 3, 3, 8],
                              initializer=tf.truncated_normal_initializer(stddev=0.1, seed=1))
    biases = tf.get_variable('conv/biases', [8], initializer=tf.constant_initializer(0.1))
    hidden = tf.nn.relu(tf.nn.conv2d(images, weights, [1, 1, 1, 1], 'SAME') + biases)
    hidden = tf.nn.max_pool(hidden, [1, 2, 2, 1], [1, 2, 2, 1], 'SAME')
    flat = tf.reshape(hidden, [tf.shape(hidden)[0], 4 * 4 * 8])
    dense = tf.get_variable('dense/weights', [4 * 4 * 8, 10],
                            initializer=tf.truncated_normal_initializer(stddev=0.1, seed=2))
    logits = tf.matmul(flat, dense)
    tf.losses.sparse_softmax_cross_entropy(labels, logits)
    return {'logits': logits}


def global_batch(num_towers):
    rs = np.random.RandomState(0)
    images = rs.standard_normal([num_towers * PER_TOWER_BATCH, 8, 8, 3]).astype(np.float32)
    labels = rs.randint(0, 10, size=num_towers * PER_TOWER_BATCH).astype(np.int32)
    return images, labels


def averaged_gradients(num_towers, batch_towers):
    """Gradients of `num_towers` towers on the global batch of `batch_towers` towers' size."""
    with tf.Graph().as_default():
        images, labels = global_batch(batch_towers)
        devices = ['/cpu:%d' % i for i in range(num_towers)]
        replicated = towers.build_towers(small_conv_net, (tf.constant(images), tf.constant(labels)),
                                         devices, tf.train.GradientDescentOptimizer(0.1))
        config = tf.ConfigProto(device_count={'CPU': num_towers})
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            grads = sess.run([g for g, _ in replicated.grads['total']])
        return {v.op.name: g for g, (_, v) in zip(grads, replicated.grads['total'])}


@pytest.mark.parametrize('num_towers', [1, 2, 4])
def test_averaged_tower_gradients_equal_one_tower_on_the_whole_batch(num_towers):
    reference = averaged_gradients(1, num_towers)
    replicated = averaged_gradients(num_towers, num_towers)
    assert sorted(replicated) == sorted(reference) == [
        'conv/biases', 'conv/weights', 'dense/weights']
    for name in reference:
        np.testing.assert_allclose(replicated[name], reference[name], rtol=1e-5, atol=1e-7,
                                   err_msg=name)


def test_averaged_gradients_differ_from_a_single_shard():
    # Guards the test above: a builder that used only tower 0's gradient would fail it.
    reference = averaged_gradients(1, 2)
    tower_zero_only = averaged_gradients(1, 1)
    assert not np.allclose(reference['dense/weights'], tower_zero_only['dense/weights'],
                           rtol=1e-3)


def test_average_keeps_pairs_in_variable_order():
    a = tf.get_variable('a', [2])
    b = tf.get_variable('b', [3])
    tower_grads = [[(tf.constant([1., 2.]), a), (tf.constant([1., 1., 1.]), b)],
                   [(tf.constant([3., 4.]), a), (tf.constant([3., 3., 3.]), b)]]
    averaged = towers.average_gradients(tower_grads)
    assert [v for _, v in averaged] == [a, b]
    with tf.Session() as sess:
        values = sess.run([g for g, _ in averaged])
    np.testing.assert_array_equal(values[0], [2., 3.])
    np.testing.assert_array_equal(values[1], [2., 2., 2.])


def test_variable_without_gradient_in_every_tower_is_left_out_and_named(caplog):
    used = tf.get_variable('used', [2])
    unused = tf.get_variable('unused', [2])
    tower_grads = [[(tf.ones([2]), used), (None, unused)] for _ in range(2)]
    with caplog.at_level(logging.INFO, logger='towers'):
        averaged = towers.average_gradients(tower_grads)
    assert [v for _, v in averaged] == [used]
    assert 'unused' in caplog.text


def test_gradient_missing_in_only_some_towers_is_an_error_naming_variable_and_tower():
    var = tf.get_variable('partly', [2])
    tower_grads = [[(tf.ones([2]), var)], [(None, var)], [(tf.ones([2]), var)]]
    with pytest.raises(towers.TowersError, match=r'partly.*tower\(s\) 1'):
        towers.average_gradients(tower_grads)


def test_towers_with_different_variables_are_an_error():
    a = tf.get_variable('a', [2])
    b = tf.get_variable('b', [2])
    with pytest.raises(towers.TowersError, match='different variables'):
        towers.average_gradients([[(tf.ones([2]), a)], [(tf.ones([2]), b)]])


def embedding_tower_grads(num_towers):
    """Gradients of an embedding lookup per tower: `tf.IndexedSlices`."""
    table = tf.get_variable('embedding', [6, 3],
                            initializer=tf.random_normal_initializer(seed=3))
    rs = np.random.RandomState(4)
    tower_grads = []
    for i in range(num_towers):
        ids = tf.constant(rs.randint(0, 6, size=5))
        loss = tf.reduce_sum(tf.square(tf.gather(table, ids))) * (i + 1)
        tower_grads.append(tf.train.GradientDescentOptimizer(1.0).compute_gradients(
            loss, var_list=[table]))
    return table, tower_grads


def test_sparse_gradients_stay_indexed_slices():
    _, tower_grads = embedding_tower_grads(3)
    assert all(isinstance(g[0][0], tf.IndexedSlices) for g in tower_grads)
    (grad, _), = towers.average_gradients(tower_grads)
    assert isinstance(grad, tf.IndexedSlices)


def test_sparse_average_equals_the_dense_average():
    _, tower_grads = embedding_tower_grads(3)
    (sparse_mean, _), = towers.average_gradients(tower_grads)
    dense_reference = tf.add_n([tf.convert_to_tensor(g[0][0]) for g in tower_grads]) / 3.0
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, want = sess.run([tf.convert_to_tensor(sparse_mean), dense_reference])
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_sparse_mean_applied_updates_the_table_like_the_dense_mean():
    table, tower_grads = embedding_tower_grads(2)
    (sparse_mean, _), = towers.average_gradients(tower_grads)
    dense_mean = tf.add_n([tf.convert_to_tensor(g[0][0]) for g in tower_grads]) / 2.0
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        start, want_step = sess.run([table.read_value(), dense_mean])
        sess.run(tf.train.GradientDescentOptimizer(1.0).apply_gradients([(sparse_mean, table)]))
        np.testing.assert_allclose(sess.run(table), start - want_step, rtol=1e-5, atol=1e-6)
