"""Stand-in for the CIFAR-10 tutorial's `cifar10_multi_gpu_train.py`, written for the tests of
`scripts/regress_cifar10.py --original_dir` in the tutorial's module layout and TF1 idioms (it
is not the tutorial's code): its flags, `tower_loss` and `average_gradients`, which the
regression runs in the tutorial's tower loop; no training loop of its own."""
import re

import tensorflow as tf

import cifar10

FLAGS = tf.app.flags.FLAGS
tf.app.flags.DEFINE_string('train_dir', '/tmp/cifar10_train', 'Where to write checkpoints.')
tf.app.flags.DEFINE_integer('max_steps', 1000000, 'Number of batches to run.')
tf.app.flags.DEFINE_integer('num_gpus', 1, 'How many GPUs to use.')
tf.app.flags.DEFINE_boolean('log_device_placement', False, 'Whether to log device placement.')


def tower_loss(scope, images, labels):
    logits = cifar10.inference(images)
    cifar10.loss(logits, labels)
    losses = tf.get_collection('losses', scope)
    total_loss = tf.add_n(losses, name='total_loss')
    for l in losses + [total_loss]:
        tf.summary.scalar(re.sub('%s_[0-9]*/' % cifar10.TOWER_NAME, '', l.op.name), l)
    return total_loss


def average_gradients(tower_grads):
    average_grads = []
    for grad_and_vars in zip(*tower_grads):
        grads = [tf.expand_dims(g, 0) for g, _ in grad_and_vars]
        grad = tf.reduce_mean(tf.concat(axis=0, values=grads), 0)
        average_grads.append((grad, grad_and_vars[0][1]))
    return average_grads
