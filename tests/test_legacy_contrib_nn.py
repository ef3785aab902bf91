"""Specification of `tf.contrib.nn` under the legacy runner: TF 1.15's nine functions, each
computing what TF 1.x's did."""
import numpy as np
import pytest

from towers.compat import tf
from towers.legacy.contrib import nn


def run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def test_alpha_dropout_keeps_zero_mean_and_unit_variance():
    x = tf.random_normal([200000], seed=1)
    dropped = run(nn.alpha_dropout(x, 0.8, seed=2))
    assert abs(dropped.mean()) < 0.01 and abs(dropped.std() - 1) < 0.01
    assert nn.alpha_dropout(x, 1.0) is x
    with pytest.raises(ValueError, match=r'keep_prob must be in \(0, 1\]'):
        nn.alpha_dropout(x, 1.5)


def test_scaled_softplus_is_a_smooth_relu_clipped_at_clip():
    x = np.array([-2.0, 0.5, 8.0], np.float32)
    smooth, sharp, clipped = run([nn.scaled_softplus(x, 2.0), nn.scaled_softplus(x, 1e-3),
                                  nn.scaled_softplus(x, 1e-3, clip=6.0)])
    np.testing.assert_allclose(smooth, 2.0 * np.log1p(np.exp(x / 2.0)), rtol=1e-6)
    np.testing.assert_allclose(sharp, np.maximum(x, 0), atol=1e-3)
    np.testing.assert_allclose(clipped, [0, 0.5, 6.0], atol=1e-3)


def test_conv1d_transpose_takes_tf1_argument_names():
    value = tf.ones([1, 4, 2])
    kernel = tf.ones([3, 5, 2])
    tf1 = nn.conv1d_transpose(value, kernel, [1, 8, 5], 2, padding='SAME')
    tf2 = tf.nn.conv1d_transpose(value, kernel, [1, 8, 5], 2, padding='SAME')
    np.testing.assert_array_equal(*run([tf1, tf2]))


def test_nth_element_gives_the_nth_smallest_of_the_last_dimension():
    assert run(nn.nth_element(tf.constant([[3, 1, 2], [9, 7, 8]]), 1)).tolist() == [2, 8]


def test_flipped_losses_take_logits_first():
    logits = tf.constant([[1.0, 2.0], [0.5, -1.0]])
    labels = tf.constant([[0.0, 1.0], [1.0, 0.0]])
    pairs = [(nn.deprecated_flipped_softmax_cross_entropy_with_logits(logits, labels),
              tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)),
             (nn.deprecated_flipped_sparse_softmax_cross_entropy_with_logits(
                 logits, tf.constant([1, 0])),
              tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.constant([1, 0]),
                                                             logits=logits)),
             (nn.deprecated_flipped_sigmoid_cross_entropy_with_logits(logits, labels),
              tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))]
    for flipped, original in run(pairs):
        np.testing.assert_allclose(flipped, original)


def sampling_problem():
    rng = np.random.RandomState(0)
    weights = tf.constant(rng.randn(10, 4).astype(np.float32))
    biases = tf.constant(rng.randn(10).astype(np.float32))
    inputs = tf.constant(rng.randn(3, 4).astype(np.float32))
    labels = tf.constant([[1], [4], [7]], tf.int64)
    sampled = (tf.constant([0, 2, 3, 5, 6, 8], tf.int64), tf.fill([3, 1], 0.5),
               tf.fill([6], 0.5))
    return weights, biases, inputs, labels, sampled


def test_sampled_sparse_softmax_loss_is_the_sampled_softmax_loss_of_one_true_class():
    weights, biases, inputs, labels, sampled = sampling_problem()
    sparse = nn.sampled_sparse_softmax_loss(weights, biases, labels, inputs, 6, 10,
                                            sampled_values=sampled)
    dense = tf.nn.sampled_softmax_loss(weights, biases, labels, inputs, 6, 10,
                                       sampled_values=sampled)
    np.testing.assert_allclose(*run([sparse, dense]), rtol=1e-6)


def test_rank_sampled_softmax_loss_keeps_the_candidates_of_highest_logsumexp():
    weights, biases, inputs, labels, sampled = sampling_problem()
    loss = nn.rank_sampled_softmax_loss(weights, biases, labels, inputs, 6, 2, 10, 1, sampled,
                                        0.5, True, 'div')
    w, b, x, candidates = run([weights, biases, inputs, sampled[0]])
    scores = np.log(np.exp(w[candidates] @ (x / 0.5).T).sum(axis=1)) + b[candidates] / 0.5
    kept = candidates[np.argsort(-scores)[:2]]
    expected = tf.nn.sampled_softmax_loss(
        weights, biases, labels, inputs, 2, 10, partition_strategy='div',
        sampled_values=(tf.constant(kept), sampled[1], tf.fill([2], 0.5)))
    np.testing.assert_allclose(*run([loss, expected]), rtol=1e-5)
    with pytest.raises(ValueError, match=r'num_resampled \(6\) must be less than num_sampled'):
        nn.rank_sampled_softmax_loss(weights, biases, labels, inputs, 6, 6, 10, 1, sampled,
                                     0.5, True, 'div')
