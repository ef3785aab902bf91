"""The port of `tower_program.py` to this project: its network and training as a `towers.Recipe`.

The variable names are the original's (conv1/weights, conv1/BatchNorm/moving_mean, ...,
logits/biases), so a checkpoint of either side restores into the other. `regress_example.py`
proves the port equal to the original, number for number.
"""
import towers
from towers.compat import slim, tf

NUM_CLASSES = 4
WEIGHT_DECAY = 1e-4
BATCH_NORM_DECAY = 0.9
MOMENTUM = 0.9


def network(images, is_training):
    """The original's `inference`.

    Args:
      images: [b, 8, 8, 3] float32, per-image standardized.
      is_training: batch statistics (True) or the moving ones (False) in batch norm.

    Returns:
      logits: [b, NUM_CLASSES].
    """
    with slim.arg_scope([slim.conv2d, slim.fully_connected],
                        weights_initializer=slim.xavier_initializer(),
                        weights_regularizer=slim.l2_regularizer(WEIGHT_DECAY)):
        with slim.arg_scope([slim.conv2d], normalizer_fn=slim.batch_norm,
                            normalizer_params={'is_training': is_training,
                                               'decay': BATCH_NORM_DECAY}):
            net = slim.conv2d(images, 16, [3, 3], scope='conv1')
            net = slim.max_pool2d(net, [2, 2], scope='pool1')
            net = slim.conv2d(net, 16, [3, 3], scope='conv2')
            net = slim.flatten(net)
        return slim.fully_connected(net, NUM_CLASSES, activation_fn=None, scope='logits')


class TowerRecipe(towers.Recipe):
    """The original's training: momentum 0.9 at a constant learning rate."""

    def __init__(self, learning_rate=0.05):
        self._learning_rate = learning_rate

    def learning_rate(self, global_step, num_towers):
        return self._learning_rate

    def optimizer(self, learning_rate):
        return tf.train.MomentumOptimizer(learning_rate, MOMENTUM)

    def tower_fn(self, batch):
        images, labels = batch
        logits = network(images, is_training=True)
        tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
        return {'logits': logits}
