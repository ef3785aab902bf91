"""A small learnable convolutional net and its data, for the tests of the training modes.

Its variables are made with `tf.get_variable` in the dtype of its input (as the CIFAR-10
tutorial's), start from fixed values (the same in any graph, whatever else it holds), and the
first layer's weights carry an L2 regulariser.
"""
import numpy as np

import towers
from towers.compat import tf

IMAGE_SIZE = 8
CHANNELS = 3
FILTERS = 8
CLASSES = 4
WEIGHT_DECAY = 1e-3


def batch(num_examples, seed=0):
    """Images [num_examples, 8, 8, 3] float32 and labels [num_examples] int32 that a linear
    function of the images' mean colours decides."""
    rs = np.random.RandomState(seed)
    images = rs.standard_normal([num_examples, IMAGE_SIZE, IMAGE_SIZE, CHANNELS])
    colours = images.mean(axis=(1, 2)) + rs.standard_normal([num_examples, CHANNELS]) * 0.3
    labels = np.argmax(colours.dot(np.random.RandomState(99).standard_normal([CHANNELS,
                                                                                CLASSES])), 1)
    images[..., :] += colours[:, None, None, :]
    return images.astype(np.float32), labels.astype(np.int32)


def _initial(shape, seed):
    return np.random.RandomState(seed).standard_normal(shape).astype(np.float32) * 0.3


def tower_fn(shard, weight_decay=WEIGHT_DECAY):
    """conv 3x3 (regularised) -> relu -> mean over the image -> dense -> cross entropy.

    Args:
      shard: (images [b, 8, 8, 3], labels [b]).
      weight_decay: of the L2 regulariser of the convolution's weights; 0 for none.

    Returns:
      {'logits': [b, 4]}; the cross entropy goes to the `losses` collection.
    """
    images, labels = shard
    dtype = images.dtype
    with tf.variable_scope('conv'):
        kernel = tf.get_variable(
            'weights', [3, 3, CHANNELS, FILTERS], dtype,
            initializer=tf.constant_initializer(_initial([3, 3, CHANNELS, FILTERS], 1)),
            regularizer=lambda w: tf.multiply(tf.nn.l2_loss(w), weight_decay,
                                              name='weight_decay') if weight_decay else None)
        features = tf.nn.relu(tf.nn.conv2d(images, kernel, [1, 1, 1, 1], 'SAME'))
    pooled = tf.reduce_mean(features, [1, 2])
    with tf.variable_scope('dense'):
        weights = tf.get_variable(
            'weights', [FILTERS, CLASSES], dtype,
            initializer=tf.constant_initializer(_initial([FILTERS, CLASSES], 2)))
        biases = tf.get_variable('biases', [CLASSES], dtype,
                                 initializer=tf.zeros_initializer())
        logits = tf.matmul(pooled, weights) + biases
    tf.losses.sparse_softmax_cross_entropy(labels, logits)
    return {'logits': logits}


class SmallRecipe(towers.Recipe):
    """The small net trained with momentum (which keeps a slot per variable)."""

    def __init__(self, learning_rate=0.1):
        self._learning_rate = learning_rate

    def learning_rate(self, global_step, num_towers):
        return self._learning_rate

    def optimizer(self, learning_rate):
        return tf.train.MomentumOptimizer(learning_rate, 0.9)

    def tower_fn(self, batch):
        return tower_fn(batch)


def assemble(mode, num_towers, examples=16):
    """The small net's training step on `num_towers` virtual devices in the default graph, on
    one fixed batch of `examples`. Returns (the `towers.Training`, its `towers.DeviceSetup`)."""
    setup = towers.configure_devices(num_towers)
    images, labels = batch(examples)
    return towers.assemble(SmallRecipe(), lambda: (tf.constant(images), tf.constant(labels)),
                           setup, mode=mode), setup


def saved_names(mode):
    """The names of the variables a checkpoint of the small net on 2 towers holds in `mode`."""
    with tf.Graph().as_default():
        assemble(mode, num_towers=2)
        return sorted(v.op.name for v in tf.global_variables())


def train(mode, num_towers, steps, examples=16, run_metadata=None):
    """Trains the small net `steps` steps on one fixed batch, in a new graph and session.

    Args:
      mode: a `towers.Mode`.
      num_towers, steps: of the training.
      examples: the global batch.
      run_metadata: a `tf.RunMetadata` to fill with the trace of the first step, or None.

    Returns:
      (losses, variables, copies): the last tower's loss at each step; each trainable
      variable's value by name at the end; and in the replicated mode, for each tower, the
      value of its copy of each variable by the variable's name (empty for tower 0).
    """
    with tf.Graph().as_default():
        training, setup = assemble(mode, num_towers, examples)
        with tf.train.SingularMonitoredSession(config=setup.config) as session:
            fetches = [training.train_ops['total'], training.losses['total']]
            trace = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
            losses = [session.run(fetches, options=trace if step == 0 else None,
                                  run_metadata=run_metadata if step == 0 else None)[1]
                      for step in range(steps)]
            variables = {v.op.name: session.run(v) for v in tf.trainable_variables()}
            copies = [{p.op.name: session.run(c) for p, c in tower.items()}
                      for tower in getattr(training.replicated, 'copies', [])]
    return losses, variables, copies
