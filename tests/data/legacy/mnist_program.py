"""A multi-GPU MNIST program as the TensorFlow 1 tutorials of 2016-2018 wrote them, for the tests
of the legacy runner (towers.legacy). It does not run on TensorFlow 2 by itself:

    python -m towers.legacy --legacy_devices 2 tests/data/legacy/mnist_program.py \
        --data_dir /tmp/mnist_data --num_gpus 2 --max_steps 20

MNIST-format files come from `input_data.read_data_sets`; each of --num_gpus towers takes its
slice of one fed batch on /gpu:i, with the variables on the CPU (a device function on the op
types of variables) and shared by `reuse`; the towers' gradients are averaged and applied
once. At the end the tutorial's `mnist.evaluation` counts the right answers on the test set.
"""
from __future__ import division, print_function

import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data, mnist

FLAGS = tf.app.flags.FLAGS
tf.app.flags.DEFINE_string('data_dir', '/tmp/data/', 'Where the four MNIST-format files are.')
tf.app.flags.DEFINE_integer('num_gpus', 2, 'How many GPUs to use.')
tf.app.flags.DEFINE_integer('batch_size', 32, 'Images per tower.')
tf.app.flags.DEFINE_integer('max_steps', 20, 'Number of batches to run.')
tf.app.flags.DEFINE_integer('validation_size', 100, 'Training images set apart.')
tf.app.flags.DEFINE_float('learning_rate', 0.5, 'Learning rate of gradient descent.')

PS_OPS = ['Variable', 'VariableV2', 'AutoReloadVariable']


def assign_to_device(device, ps_device='/cpu:0'):
    def _assign(op):
        node_def = op if isinstance(op, tf.NodeDef) else op.node_def
        return ps_device if node_def.op in PS_OPS else device
    return _assign


def network(images, reuse):
    with tf.variable_scope('Net', reuse=reuse):
        net = tf.reshape(images, [-1, 28, 28, 1])
        net = tf.layers.conv2d(net, 8, 5, activation=tf.nn.relu)
        net = tf.layers.max_pooling2d(net, 2, 2)
        net = tf.contrib.layers.flatten(net)
        return tf.layers.dense(net, mnist.NUM_CLASSES)


def average_gradients(tower_grads):
    average_grads = []
    for grad_and_vars in zip(*tower_grads):
        grads = [tf.expand_dims(g, 0) for g, _ in grad_and_vars]
        average_grads.append((tf.reduce_mean(tf.concat(grads, 0), 0), grad_and_vars[0][1]))
    return average_grads


def main(_):
    data = input_data.read_data_sets(FLAGS.data_dir, validation_size=FLAGS.validation_size)
    print('train %d, validation %d, test %d' % (data.train.num_examples,
                                                data.validation.num_examples,
                                                data.test.num_examples))
    with tf.Graph().as_default(), tf.device('/cpu:0'):
        images = tf.placeholder(tf.float32, [None, mnist.IMAGE_PIXELS])
        labels = tf.placeholder(tf.int32, [None])
        opt = tf.train.GradientDescentOptimizer(FLAGS.learning_rate)
        tower_grads, losses = [], []
        for i in range(FLAGS.num_gpus):
            with tf.device(assign_to_device('/gpu:%d' % i)):
                begin, end = i * FLAGS.batch_size, (i + 1) * FLAGS.batch_size
                logits = network(images[begin:end], reuse=i > 0)
                loss = mnist.loss(logits, labels[begin:end])
                tower_grads.append(opt.compute_gradients(loss))
                losses.append(loss)
                print('tower %d: loss on %s' % (i, loss.device))
        train_op = opt.apply_gradients(average_gradients(tower_grads))
        correct = mnist.evaluation(network(images, reuse=True), labels)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(FLAGS.max_steps):
                batch_x, batch_y = data.train.next_batch(FLAGS.batch_size * FLAGS.num_gpus)
                _, loss_value = sess.run([train_op, losses[0]], {images: batch_x,
                                                                 labels: batch_y})
                print('step %d: loss = %.4f, epochs completed %d'
                      % (step, loss_value, data.train.epochs_completed))
            right = sess.run(correct, {images: data.test.images, labels: data.test.labels})
            print('test accuracy = %.3f' % (right / data.test.num_examples))


if __name__ == '__main__':
    tf.app.run()
