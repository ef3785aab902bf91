"""A multi-GPU tower program as TensorFlow 1 code of 2016-2019 was written, for the tests of the
legacy runner (towers.legacy). It does not run on TensorFlow 2 by itself:

    python -m towers.legacy --legacy_devices 2 tests/data/legacy/tower_program.py \
        --num_gpus 2 --train_dir /tmp/legacy_tower_train --max_steps 20

A small slim conv net with batch norm classifies 8x8 RGB images into 4 classes. The images come
from a file of fixed-length records (1 label byte, then 8*8*3 image bytes) through a queue
runner; without that file, a learnable set of 256 records is written first. Each of --num_gpus
towers gets its share of the batch on /gpu:i with its variables on the CPU, the gradients are
averaged, and a checkpoint is saved at the end.
"""
import os

import numpy as np
import tensorflow as tf

slim = tf.contrib.slim

FLAGS = tf.app.flags.FLAGS
tf.app.flags.DEFINE_string('train_dir', '/tmp/legacy_tower_train', 'Where checkpoints go.')
tf.app.flags.DEFINE_string('data_file', '/tmp/legacy_tower_data/train.bin',
                           'Fixed-length records: 1 label byte, 8*8*3 image bytes.')
tf.app.flags.DEFINE_integer('num_gpus', 2, 'How many GPUs to use.')
tf.app.flags.DEFINE_integer('batch_size', 16, 'Images per tower.')
tf.app.flags.DEFINE_integer('max_steps', 20, 'Number of batches to run.')
tf.app.flags.DEFINE_float('learning_rate', 0.05, 'Learning rate of the momentum optimizer.')
tf.app.flags.DEFINE_boolean('log_device_placement', False, 'Whether to log device placement.')

IMAGE_SIZE = 8
CHANNELS = 3
NUM_CLASSES = 4
IMAGE_BYTES = IMAGE_SIZE * IMAGE_SIZE * CHANNELS
RECORD_BYTES = 1 + IMAGE_BYTES
NUM_RECORDS = 256
TOWER_NAME = 'tower'

PS_OPS = ['Variable', 'VariableV2', 'AutoReloadVariable']


def assign_to_device(device, ps_device='/cpu:0'):
    """Variables on ps_device, everything else on device."""
    def _assign(op):
        node_def = op if isinstance(op, tf.NodeDef) else op.node_def
        if node_def.op in PS_OPS:
            return ps_device
        return device
    return _assign


def write_records(path):
    """A learnable data set: each class is a fixed pattern plus noise."""
    rng = np.random.RandomState(0)
    patterns = rng.uniform(0, 255, [NUM_CLASSES, IMAGE_BYTES])
    labels = rng.randint(NUM_CLASSES, size=NUM_RECORDS)
    images = np.clip(patterns[labels] + rng.normal(0, 30, [NUM_RECORDS, IMAGE_BYTES]), 0, 255)
    records = np.concatenate([labels[:, None], images], axis=1).astype(np.uint8)
    tf.gfile.MakeDirs(os.path.dirname(path))
    with tf.gfile.GFile(path, 'wb') as f:
        f.write(records.tobytes())


def inputs(batch_size):
    filename_queue = tf.train.string_input_producer([FLAGS.data_file])
    reader = tf.FixedLengthRecordReader(record_bytes=RECORD_BYTES)
    _, value = reader.read(filename_queue)
    record = tf.decode_raw(value, tf.uint8)
    label = tf.cast(record[0], tf.int32)
    image = tf.reshape(tf.strided_slice(record, [1], [RECORD_BYTES]),
                       [IMAGE_SIZE, IMAGE_SIZE, CHANNELS])
    image = tf.image.per_image_standardization(tf.cast(image, tf.float32))
    images, labels = tf.train.shuffle_batch(
        [image, label], batch_size=batch_size, num_threads=2,
        capacity=64 + 3 * batch_size, min_after_dequeue=64)
    return images, labels


def inference(images, is_training):
    batch_norm_params = {'is_training': is_training, 'decay': 0.9,
                         'updates_collections': tf.GraphKeys.UPDATE_OPS}
    with slim.arg_scope([slim.conv2d, slim.fully_connected],
                        weights_initializer=tf.contrib.layers.xavier_initializer(),
                        weights_regularizer=tf.contrib.layers.l2_regularizer(1e-4)):
        with slim.arg_scope([slim.conv2d], normalizer_fn=slim.batch_norm,
                            normalizer_params=batch_norm_params):
            net = slim.conv2d(images, 16, [3, 3], scope='conv1')
            net = slim.max_pool2d(net, [2, 2], scope='pool1')
            net = slim.conv2d(net, 16, [3, 3], scope='conv2')
            net = slim.flatten(net)
        logits = slim.fully_connected(net, NUM_CLASSES, activation_fn=None, scope='logits')
    return logits


def tower_loss(scope, images, labels):
    logits = inference(images, is_training=True)
    tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    losses = tf.get_collection(tf.GraphKeys.LOSSES, scope)
    # The regularizers were made with the variables, in the first tower; every tower counts them.
    total_loss = tf.add_n(losses + tf.losses.get_regularization_losses(), name='total_loss')
    return total_loss


def average_gradients(tower_grads):
    average_grads = []
    for grad_and_vars in zip(*tower_grads):
        grads = [tf.expand_dims(g, 0) for g, _ in grad_and_vars]
        grad = tf.reduce_mean(tf.concat(axis=0, values=grads), 0)
        average_grads.append((grad, grad_and_vars[0][1]))
    return average_grads


def train():
    with tf.Graph().as_default(), tf.device('/cpu:0'):
        global_step = tf.contrib.framework.get_or_create_global_step()
        opt = tf.train.MomentumOptimizer(FLAGS.learning_rate, 0.9)
        images, labels = inputs(FLAGS.batch_size * FLAGS.num_gpus)
        image_splits = tf.split(images, FLAGS.num_gpus)
        label_splits = tf.split(labels, FLAGS.num_gpus)
        tower_grads = []
        with tf.variable_scope(tf.get_variable_scope()):
            for i in range(FLAGS.num_gpus):
                with tf.device(assign_to_device('/gpu:%d' % i, ps_device='/cpu:0')):
                    with tf.name_scope('%s_%d' % (TOWER_NAME, i)) as scope:
                        loss = tower_loss(scope, image_splits[i], label_splits[i])
                        tf.get_variable_scope().reuse_variables()
                        if i == 0:
                            batchnorm_updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS, scope)
                        tower_grads.append(opt.compute_gradients(loss))
                        print('tower %d: %s on %s' % (i, loss.op.name, loss.device))
        grads = average_gradients(tower_grads)
        with tf.control_dependencies(batchnorm_updates):
            train_op = opt.apply_gradients(grads, global_step=global_step)

        saver = tf.train.Saver(tf.global_variables())
        sess = tf.Session(config=tf.ConfigProto(
            allow_soft_placement=True, log_device_placement=FLAGS.log_device_placement))
        sess.run(tf.global_variables_initializer())
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess=sess, coord=coord)
        print('devices: %s' % ', '.join(d.name for d in sess.list_devices()))
        for step in range(FLAGS.max_steps):
            _, loss_value = sess.run([train_op, loss])
            assert not np.isnan(loss_value), 'Model diverged with loss = NaN'
            if step % 5 == 0 or step + 1 == FLAGS.max_steps:
                print('step %d, loss = %.3f' % (step, loss_value))
        saver.save(sess, os.path.join(FLAGS.train_dir, 'model.ckpt'), global_step=global_step)
        coord.request_stop()
        coord.join(threads)
        sess.close()


def main(argv=None):
    if not tf.gfile.Exists(FLAGS.data_file):
        write_records(FLAGS.data_file)
    if tf.gfile.Exists(FLAGS.train_dir):
        tf.gfile.DeleteRecursively(FLAGS.train_dir)
    tf.gfile.MakeDirs(FLAGS.train_dir)
    train()


if __name__ == '__main__':
    tf.app.run()
