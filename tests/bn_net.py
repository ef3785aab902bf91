"""A small convolutional net with two batch-norm layers (tf-slim), its data and its recipe, for
the tests of batch-norm statistics and of validation while training.

    images -> 1x1 conv (no bias) -> batch norm (scale) -> ReLU -> batch norm -> mean -> dense

The second layer's input depends on how the first normalises, so population statistics of it
differ from the moving averages of batch statistics. Variables start from fixed values.
"""
import numpy as np

import towers
from towers.compat import slim, tf

# tf-slim's batch-norm epsilon, which the numpy forward pass repeats.
EPSILON = 1e-3
IMAGE_SIZE = 3
CHANNELS = 2
FILTERS = 3
CLASSES = 2


def batch(num_examples, seed=0):
    """Images [n, 3, 3, 2] float32 (mean 2, spread 3, so that the moving statistics' start
    at 0 and 1 is far off) and labels [n] int32 that their mean colour decides."""
    rs = np.random.RandomState(seed)
    images = 2.0 + 3.0 * rs.standard_normal([num_examples, IMAGE_SIZE, IMAGE_SIZE, CHANNELS])
    labels = (images.mean(axis=(1, 2)) @ [1.0, -1.0] > 0).astype(np.int32)
    return images.astype(np.float32), labels


def _constant(shape, seed):
    return tf.constant_initializer(np.random.RandomState(seed).standard_normal(shape) * 0.5)


def network(images, is_training):
    """The net's logits [b, CLASSES] of images [b, 3, 3, 2]; batch statistics (and their
    moving averages updated through `UPDATE_OPS`) when `is_training`."""
    net = slim.conv2d(images, FILTERS, 1, activation_fn=None, biases_initializer=None,
                      weights_initializer=_constant([1, 1, CHANNELS, FILTERS], 1),
                      scope='conv1')
    net = slim.batch_norm(net, decay=0.5, scale=True, epsilon=EPSILON, is_training=is_training,
                          param_initializers={'gamma': _constant([FILTERS], 2)}, scope='bn1')
    net = slim.batch_norm(tf.nn.relu(net), decay=0.5, epsilon=EPSILON,
                          is_training=is_training, scope='bn2')
    return slim.fully_connected(tf.reduce_mean(net, [1, 2]), CLASSES, activation_fn=None,
                                weights_initializer=_constant([FILTERS, CLASSES], 3),
                                scope='logits')


def evaluated(images):
    """The network in inference mode on `images`, as an evaluation builds it."""
    return {'logits': network(images, is_training=False)}


def forward_in_training_mode(weights, batches):
    """Each batch-norm layer's input on each batch, computed in numpy as training computes it
    (every layer normalising with the batch's statistics).

    Args:
      weights: dict variable name -> value ('conv1/weights', 'bn1/gamma', 'bn1/beta',
        'bn2/beta').
      batches: a list of images [b, 3, 3, 2].

    Returns:
      {'bn1': [values [b * 9, FILTERS] of each batch], 'bn2': [...]}.
    """
    inputs = {'bn1': [], 'bn2': []}
    for images in batches:
        first = images.reshape(-1, CHANNELS) @ weights['conv1/weights'][0, 0]
        normalised = (first - first.mean(0)) / np.sqrt(first.var(0) + EPSILON)
        second = np.maximum(normalised * weights['bn1/gamma'] + weights['bn1/beta'], 0)
        inputs['bn1'].append(first)
        inputs['bn2'].append(second)
    return inputs


class BnRecipe(towers.Recipe):
    """The net trained with plain gradient descent on its cross entropy; validated by its
    accuracy."""

    def __init__(self, learning_rate=0.1):
        self._learning_rate = learning_rate

    def learning_rate(self, global_step, num_towers):
        return self._learning_rate

    def tower_fn(self, shard):
        images, labels = shard
        tf.losses.sparse_softmax_cross_entropy(labels, network(images, is_training=True))
        return {}

    def validation_outputs(self, batch):
        images, labels = batch
        return {'predicted': tf.argmax(network(images, is_training=False), 1,
                                        output_type=tf.int32),
                'label': labels}

    def validation_metrics(self, outputs):
        return {'accuracy': float(np.mean(outputs['predicted'] == outputs['label']))}
