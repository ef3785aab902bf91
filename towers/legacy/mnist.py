"""The model of TensorFlow 1.x's MNIST tutorial (`tensorflow.examples.tutorials.mnist.mnist`),
which its `fully_connected_feed.py` imports: two ReLU layers and a linear softmax layer.

    logits = mnist.inference(images, 128, 32)          # images [N, 784] -> logits [N, 10]
    train_op = mnist.training(mnist.loss(logits, labels), 0.01)
    correct = mnist.evaluation(logits, labels)          # how many of the N are right

Variables are named as the tutorial named them ('hidden1/weights', 'hidden1/biases', ...,
'softmax_linear/biases', 'global_step'), so checkpoints move both ways.
"""
import math

from towers.compat import tf

NUM_CLASSES = 10
IMAGE_SIZE = 28
IMAGE_PIXELS = IMAGE_SIZE * IMAGE_SIZE


def _layer(name, inputs, fan_in, units):
    """inputs [N, fan_in] @ weights (truncated normal, stddev 1/sqrt(fan_in)) + biases (0)."""
    with tf.name_scope(name):
        weights = tf.Variable(tf.truncated_normal([fan_in, units],
                                                  stddev=1.0 / math.sqrt(float(fan_in))),
                              name='weights')
        biases = tf.Variable(tf.zeros([units]), name='biases')
        return tf.matmul(inputs, weights) + biases


def inference(images, hidden1_units, hidden2_units):
    """images float [N, IMAGE_PIXELS] -> logits [N, NUM_CLASSES]."""
    hidden1 = tf.nn.relu(_layer('hidden1', images, IMAGE_PIXELS, hidden1_units))
    hidden2 = tf.nn.relu(_layer('hidden2', hidden1, hidden1_units, hidden2_units))
    return _layer('softmax_linear', hidden2, hidden2_units, NUM_CLASSES)


def loss(logits, labels):
    """The mean cross-entropy of logits [N, NUM_CLASSES] against class ids labels [N]."""
    return tf.losses.sparse_softmax_cross_entropy(labels=tf.to_int64(labels), logits=logits)


def training(loss, learning_rate):
    """A gradient-descent step on `loss` that counts 'global_step' (made here) and a 'loss'
    scalar summary; returns the train op."""
    tf.summary.scalar('loss', loss)
    global_step = tf.Variable(0, name='global_step', trainable=False)
    return tf.train.GradientDescentOptimizer(learning_rate).minimize(loss,
                                                                     global_step=global_step)


def evaluation(logits, labels):
    """How many of the N examples have their label (int [N]) as the top logit: int32 []."""
    correct = tf.nn.in_top_k(logits, labels, 1)
    return tf.reduce_sum(tf.cast(correct, tf.int32))
