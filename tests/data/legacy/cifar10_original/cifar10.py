"""Stand-in for the CIFAR-10 tutorial's `cifar10.py`, written for the tests of
`scripts/regress_cifar10.py --original_dir` in the tutorial's module layout and TF1 idioms (it
is not the tutorial's code): the tutorial's network, with its variable names, shapes,
initialisers, weight decay and constants, and its loss; no input pipeline."""
import re

import tensorflow as tf

import cifar10_input

FLAGS = tf.app.flags.FLAGS
tf.app.flags.DEFINE_integer('batch_size', 128, 'Number of images to process in a batch.')
tf.app.flags.DEFINE_string('data_dir', '/tmp/cifar10_data', 'Path to the CIFAR-10 data.')
tf.app.flags.DEFINE_boolean('use_fp16', False, 'Train the model using fp16.')

NUM_CLASSES = cifar10_input.NUM_CLASSES
NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN = cifar10_input.NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN

MOVING_AVERAGE_DECAY = 0.9999
NUM_EPOCHS_PER_DECAY = 350.0
LEARNING_RATE_DECAY_FACTOR = 0.1
INITIAL_LEARNING_RATE = 0.1
TOWER_NAME = 'tower'


def _summarize(x):
    name = re.sub('%s_[0-9]*/' % TOWER_NAME, '', x.op.name)
    tf.summary.histogram(name + '/activations', x)
    tf.summary.scalar(name + '/sparsity', tf.nn.zero_fraction(x))


def _dtype():
    return tf.float16 if FLAGS.use_fp16 else tf.float32


def _weights(name, shape, stddev, wd):
    with tf.device('/cpu:0'):
        var = tf.get_variable(name, shape, initializer=tf.truncated_normal_initializer(
            stddev=stddev, dtype=_dtype()), dtype=_dtype())
    if wd is not None:
        tf.add_to_collection('losses', tf.multiply(tf.nn.l2_loss(var), wd, name='weight_loss'))
    return var


def _biases(shape, value):
    with tf.device('/cpu:0'):
        return tf.get_variable('biases', shape, initializer=tf.constant_initializer(value),
                               dtype=_dtype())


def inference(images):
    with tf.variable_scope('conv1') as scope:
        kernel = _weights('weights', [5, 5, 3, 64], 5e-2, None)
        conv = tf.nn.conv2d(images, kernel, [1, 1, 1, 1], padding='SAME')
        conv1 = tf.nn.relu(tf.nn.bias_add(conv, _biases([64], 0.0)), name=scope.name)
        _summarize(conv1)
    pool1 = tf.nn.max_pool(conv1, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding='SAME',
                           name='pool1')
    norm1 = tf.nn.lrn(pool1, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name='norm1')
    with tf.variable_scope('conv2') as scope:
        kernel = _weights('weights', [5, 5, 64, 64], 5e-2, None)
        conv = tf.nn.conv2d(norm1, kernel, [1, 1, 1, 1], padding='SAME')
        conv2 = tf.nn.relu(tf.nn.bias_add(conv, _biases([64], 0.1)), name=scope.name)
        _summarize(conv2)
    norm2 = tf.nn.lrn(conv2, 4, bias=1.0, alpha=0.001 / 9.0, beta=0.75, name='norm2')
    pool2 = tf.nn.max_pool(norm2, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding='SAME',
                           name='pool2')
    with tf.variable_scope('local3') as scope:
        reshape = tf.reshape(pool2, [images.get_shape().as_list()[0], -1])
        weights = _weights('weights', [reshape.get_shape()[1].value, 384], 0.04, 0.004)
        local3 = tf.nn.relu(tf.matmul(reshape, weights) + _biases([384], 0.1), name=scope.name)
        _summarize(local3)
    with tf.variable_scope('local4') as scope:
        weights = _weights('weights', [384, 192], 0.04, 0.004)
        local4 = tf.nn.relu(tf.matmul(local3, weights) + _biases([192], 0.1), name=scope.name)
        _summarize(local4)
    with tf.variable_scope('softmax_linear') as scope:
        weights = _weights('weights', [192, NUM_CLASSES], 1 / 192.0, None)
        softmax_linear = tf.add(tf.matmul(local4, weights), _biases([NUM_CLASSES], 0.0),
                                name=scope.name)
        _summarize(softmax_linear)
    return softmax_linear


def loss(logits, labels):
    cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=tf.cast(labels, tf.int64), logits=logits, name='cross_entropy_per_example')
    tf.add_to_collection('losses', tf.reduce_mean(cross_entropy, name='cross_entropy'))
    return tf.add_n(tf.get_collection('losses'), name='total_loss')
