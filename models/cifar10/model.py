"""The network, loss and training graph of TensorFlow's CIFAR-10 multi-GPU tutorial.

The model is the tutorial's (tensorflow/models `tutorials/image/cifar10`, TF 1.13 era) layer for
layer, with its variable names, shapes and initialisers, so that checkpoints move between the
original and this project unchanged:

    conv1/weights [5, 5, 3, 64]     conv1/biases [64]
    conv2/weights [5, 5, 64, 64]    conv2/biases [64]
    local3/weights [2304, 384]      local3/biases [384]
    local4/weights [384, 192]       local4/biases [192]
    softmax_linear/weights [192, 10]  softmax_linear/biases [10]
    global_step [] (float32), and '<variable>/ExponentialMovingAverage' for each of the ten.

`inference` and `loss` are the tutorial's single-device functions; `tower_fn` is the model as
`towers.build_towers` calls it; `evaluation` and `variables_to_restore` are the evaluation's
graph and what it restores. The training recipe (schedule, optimizer, moving averages,
summaries) is in `models.cifar10.recipe`.

The variables take the dtype of the images: float16 images (`--use_fp16`) give float16 weights.
"""
import re

import numpy as np

from models.cifar10 import BATCH_SIZE
from models.datasets.cifar10 import reader as cifar10_input
from towers.compat import tf
from towers.replication.tower import TOWER_NAME

IMAGE_SIZE = cifar10_input.IMAGE_SIZE
NUM_CLASSES = cifar10_input.NUM_CLASSES
NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN = cifar10_input.NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN
NUM_EXAMPLES_PER_EPOCH_FOR_EVAL = cifar10_input.NUM_EXAMPLES_PER_EPOCH_FOR_EVAL

MOVING_AVERAGE_DECAY = 0.9999
NUM_EPOCHS_PER_DECAY = 350.0
LEARNING_RATE_DECAY_FACTOR = 0.1
INITIAL_LEARNING_RATE = 0.1

# The `losses` collection the tutorial sums into each tower's total loss.
LOSSES = 'losses'


def _activation_summary(x):
    """Histogram and sparsity of an activation, named as in the tutorial (the tag also carries
    the current name scope, so each tower's are apart)."""
    tensor_name = re.sub('%s_[0-9]*/' % TOWER_NAME, '', x.op.name)
    tf.summary.histogram(tensor_name + '/activations', x)
    tf.summary.scalar(tensor_name + '/sparsity', tf.nn.zero_fraction(x))


def _variable_with_weight_decay(name, shape, stddev, wd, dtype):
    """A truncated-normal variable whose L2 norm times `wd` joins the `losses` collection.

    The decay term is made in the caller's name scope on every call, so each tower counts it.
    """
    var = tf.get_variable(name, shape, dtype,
                          initializer=tf.truncated_normal_initializer(stddev=stddev))
    if wd is not None:
        weight_decay = tf.multiply(tf.nn.l2_loss(var), wd, name='weight_loss')
        tf.add_to_collection(LOSSES, weight_decay)
    return var


def _conv_relu(inputs, name, shape, bias):
    with tf.variable_scope(name) as scope:
        kernel = _variable_with_weight_decay('weights', shape, stddev=5e-2, wd=None,
                                             dtype=inputs.dtype)
        conv = tf.nn.conv2d(inputs, kernel, [1, 1, 1, 1], padding='SAME')
        biases = tf.get_variable('biases', shape[-1:], inputs.dtype,
                                 initializer=tf.constant_initializer(bias))
        output = tf.nn.relu(tf.nn.bias_add(conv, biases), name=scope.name)
        _activation_summary(output)
    return output


def _fully_connected(inputs, name, units, stddev, wd, bias, activation):
    with tf.variable_scope(name) as scope:
        weights = _variable_with_weight_decay('weights', [inputs.shape.as_list()[1], units],
                                              stddev=stddev, wd=wd, dtype=inputs.dtype)
        biases = tf.get_variable('biases', [units], inputs.dtype,
                                 initializer=tf.constant_initializer(bias))
        output = activation(tf.matmul(inputs, weights) + biases, name=scope.name)
        _activation_summary(output)
    return output


def _max_pool(inputs, name):
    return tf.nn.max_pool(inputs, ksize=[1, 3, 3, 1], strides=[1, 2, 2, 1], padding='SAME',
                          name=name)


# Local response normalisation of the tutorial: depth_radius 4, bias 1, alpha 0.001/9, beta 0.75.
LRN_DEPTH_RADIUS = 4
LRN_BIAS = 1.0
LRN_ALPHA = 0.001 / 9.0
LRN_BETA = 0.75

# Layers that normalise rather than compute features: a FLOP count of the model leaves them out.
NORMALIZATION_SCOPES = ('norm1', 'norm2')


def _lrn(inputs, name):
    """`tf.nn.lrn` with the tutorial's constants, computed through a matrix product.

    The sum of squares over each channel's window of 2*4+1 channels is a product with a banded
    [C, C] matrix of ones. It equals `tf.nn.lrn` to float rounding (1e-7 relative), and its
    gradient is built from matmuls, which run three times faster than TensorFlow's CPU LRNGrad
    kernel (that kernel alone took a quarter of the training step; see docs/performance.md).
    Since LRN_BETA is 3/4, (bias + alpha * s)^-beta is rsqrt(t) * sqrt(rsqrt(t)).

    Args:
      inputs: [batch, height, width, C] activations.
      name: the layer's name scope.

    Returns:
      [batch, height, width, C], each value divided by (bias + alpha * window sum)^beta.
    """
    with tf.name_scope(name):
        channels = inputs.shape.as_list()[-1]
        index = np.arange(channels)
        window = np.abs(index[:, None] - index[None, :]) <= LRN_DEPTH_RADIUS
        squares = tf.reshape(tf.square(inputs), [-1, channels])
        sums = tf.reshape(tf.matmul(squares, tf.constant(window, dtype=inputs.dtype)),
                          tf.shape(inputs))
        inverse_root = tf.math.rsqrt(LRN_BIAS + LRN_ALPHA * sums)
        return inputs * inverse_root * tf.sqrt(inverse_root)


def inference(images):
    """Builds the CIFAR-10 model.

    Args:
      images: [batch, 24, 24, 3] float32 or float16, per-image standardized.

    Returns:
      logits: [batch, NUM_CLASSES] of the images' dtype, before the softmax.
    """
    conv1 = _conv_relu(images, 'conv1', [5, 5, 3, 64], bias=0.0)
    pool1 = _max_pool(conv1, 'pool1')
    norm1 = _lrn(pool1, 'norm1')
    conv2 = _conv_relu(norm1, 'conv2', [5, 5, 64, 64], bias=0.1)
    norm2 = _lrn(conv2, 'norm2')
    pool2 = _max_pool(norm2, 'pool2')
    # [batch, 6, 6, 64] -> [batch, 2304], static in its last dimension to size local3.
    flat = tf.reshape(pool2, [-1, int(np.prod(pool2.shape.as_list()[1:]))])
    local3 = _fully_connected(flat, 'local3', 384, stddev=0.04, wd=0.004, bias=0.1,
                              activation=tf.nn.relu)
    local4 = _fully_connected(local3, 'local4', 192, stddev=0.04, wd=0.004, bias=0.1,
                              activation=tf.nn.relu)
    return _fully_connected(local4, 'softmax_linear', NUM_CLASSES, stddev=1 / 192.0, wd=None,
                            bias=0.0, activation=tf.identity)


def _add_cross_entropy(logits, labels):
    """Adds the mean cross entropy of `logits` against `labels` to the `losses` collection."""
    labels = tf.cast(labels, tf.int64)
    cross_entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=logits, name='cross_entropy_per_example')
    cross_entropy_mean = tf.reduce_mean(cross_entropy, name='cross_entropy')
    tf.add_to_collection(LOSSES, cross_entropy_mean)
    return cross_entropy_mean


def loss(logits, labels):
    """The tutorial's single-device total loss: cross entropy plus every weight-decay term.

    Args:
      logits: [batch, NUM_CLASSES] from `inference`.
      labels: [batch] int32 class ids.

    Returns:
      Scalar: the sum of the `losses` collection of the whole graph.
    """
    _add_cross_entropy(logits, labels)
    return tf.add_n(tf.get_collection(LOSSES), name='total_loss')


def tower_fn(batch):
    """The model of one tower, as `towers.build_towers` calls it.

    The cross entropy and this tower's weight-decay terms go to the `losses` collection under
    the tower's name scope; `build_towers` sums them into the tower's total loss, as the
    tutorial's `tower_loss` does.

    Args:
      batch: (images [b, 24, 24, 3], labels [b] int32), one tower's shard.

    Returns:
      A dict: 'logits' [b, NUM_CLASSES] and 'cross_entropy' (scalar).
    """
    images, labels = batch
    logits = inference(images)
    return {'logits': logits, 'cross_entropy': _add_cross_entropy(logits, labels)}


def evaluation(images, labels):
    """The tutorial's evaluation of one batch.

    Args:
      images: [batch, 24, 24, 3] float32 or float16 (from `cifar10_input.inputs`).
      labels: [batch] int32.

    Returns:
      logits: [batch, NUM_CLASSES] of the images' dtype.
      in_top_1: [batch] bool, whether the top logit is the label.
    """
    logits = inference(images)
    in_top_1 = tf.nn.in_top_k(tf.cast(logits, tf.float32), labels, 1)
    return logits, in_top_1


def variables_to_restore():
    """What the tutorial's evaluation restores: each trainable variable from its moving average.

    Call it after `evaluation` has made the variables.

    Returns:
      A dict for `tf.train.Saver`: checkpoint name ('conv1/weights/ExponentialMovingAverage',
      ...) -> the variable of the evaluation graph that takes its value.
    """
    return tf.train.ExponentialMovingAverage(MOVING_AVERAGE_DECAY).variables_to_restore()
