"""A two-tower TF1 program on a shuffled `tf.data` input with dropout, for the tests of
`towers-legacy --deterministic --seed N`: every step draws from the graph's seed. It does not
run on TensorFlow 2 by itself:

    python -m towers.legacy --legacy_devices 2 --deterministic --seed 1 \
        tests/data/legacy/data_program.py /tmp/data_program/model.ckpt

It trains 5 steps and saves its variables to the checkpoint named on its command line.
"""
import sys

import numpy as np
import tensorflow as tf

with tf.Graph().as_default():
    rng = np.random.RandomState(0)
    data = tf.data.Dataset.from_tensor_slices(
        (rng.normal(size=[64, 4]).astype(np.float32), rng.randint(3, size=64)))
    features, labels = tf.data.make_one_shot_iterator(
        data.shuffle(64).repeat().batch(8)).get_next()
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    grads = []
    for tower, (x, y) in enumerate(zip(tf.split(features, 2), tf.split(labels, 2))):
        with tf.device('/gpu:%d' % tower), tf.variable_scope('net', reuse=tower > 0):
            hidden = tf.nn.dropout(tf.layers.dense(x, 16, tf.nn.relu), rate=0.5)
            loss = tf.losses.sparse_softmax_cross_entropy(y, tf.layers.dense(hidden, 3))
            grads.append(optimizer.compute_gradients(loss))
    train = optimizer.apply_gradients(
        [(tf.add_n([g for g, _ in pairs]) / 2, pairs[0][1]) for pairs in zip(*grads)])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(5):
            sess.run(train)
        tf.train.Saver().save(sess, sys.argv[1])
