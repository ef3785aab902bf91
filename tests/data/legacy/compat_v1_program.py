"""A multi-GPU program in the TensorFlow 1 idioms of 2019-2020 (`import tensorflow.compat.v1 as
tf`, contrib pieces by import path), for the tests of the legacy runner (towers.legacy):

    python -m towers.legacy --legacy_devices 2 tests/data/legacy/compat_v1_program.py \
        --log_dir /tmp/compat_v1_program --num_gpus 2 --max_steps 10 --hparams 'layers=[12,8]'

A small regression net of dense layers (its own `arg_scope`-able layer function) fits a fixed
linear target. Each of --num_gpus towers takes a slice of the batch on /gpu:i and shares the
variables through `tf.AUTO_REUSE`; each gradient is summed across the towers with
`tf.contrib.nccl.all_sum` and averaged. Hyperparameters are an `HParams` overridden by
--hparams; --quantize asks for quantization-aware training. The checkpoint goes to --log_dir,
a flag name that absl.logging also defines.
"""
import os

import numpy as np
import tensorflow.compat.v1 as tf
import tensorflow.python.client.device_lib as device_lib
from tensorflow.contrib import quantize as contrib_quantize
from tensorflow.contrib import training as contrib_training
from tensorflow.contrib.framework.python.ops import add_arg_scope, arg_scope
from tensorflow.gfile import Exists, MakeDirs

# Module-level use of a removed NumPy alias, as network libraries of the time had them.
FEATURES = np.int(np.round(8 * 1.5))

flags = tf.app.flags
flags.DEFINE_string('log_dir', '/tmp/compat_v1_program', 'Where the checkpoint goes.')
flags.DEFINE_integer('num_gpus', 2, 'How many GPUs to use.')
flags.DEFINE_integer('max_steps', 10, 'Number of batches to run.')
flags.DEFINE_string('hparams', '', 'Overrides of the hyperparameters: "learning_rate=0.1,..."')
flags.DEFINE_boolean('quantize', False, 'Train for quantization (quantization-aware).')
FLAGS = flags.FLAGS


def default_hparams():
    return contrib_training.HParams(learning_rate=0.05, layers=[FEATURES, 8], batch_size=16)


@add_arg_scope
def dense(inputs, units, activation=tf.nn.relu, scope=None):
    with tf.variable_scope(scope, default_name='dense'):
        weights = tf.get_variable('weights', [inputs.shape[1], units])
        biases = tf.get_variable('biases', [units], initializer=tf.zeros_initializer())
        return activation(tf.matmul(inputs, weights) + biases)


def tower_loss(inputs, targets, hparams):
    with arg_scope([dense], activation=tf.nn.tanh):
        net = inputs
        for i, units in enumerate(hparams.layers):
            net = dense(net, units, scope='layer%d' % i)
        predictions = dense(net, 1, activation=tf.identity, scope='predictions')
    return tf.reduce_mean(tf.square(predictions - targets))


def main(_):
    hparams = default_hparams().parse(FLAGS.hparams)
    print('hparams: %s' % hparams.to_json(sort_keys=True))
    print('local device types: %s' % sorted({device.device_type
                                              for device in device_lib.list_local_devices()}))
    rng = np.random.RandomState(0)
    inputs = rng.standard_normal([256, 4]).astype(np.float32)
    targets = inputs.dot(np.array([[1.0], [-2.0], [0.5], [0.0]], np.float32))
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_tensor_slices((inputs, targets)).repeat().batch(
            hparams.batch_size * FLAGS.num_gpus).prefetch(np.int64(2))
        batch_inputs, batch_targets = dataset.make_one_shot_iterator().get_next()
        input_splits = tf.split(batch_inputs, FLAGS.num_gpus)
        target_splits = tf.split(batch_targets, FLAGS.num_gpus)
        opt = tf.train.GradientDescentOptimizer(hparams.learning_rate)
        tower_grads, losses = [], []
        for i in range(FLAGS.num_gpus):
            with tf.device('/gpu:%d' % i), tf.variable_scope('model', reuse=tf.AUTO_REUSE):
                losses.append(tower_loss(input_splits[i], target_splits[i], hparams))
                tower_grads.append(opt.compute_gradients(losses[-1]))
                print('tower %d: loss on %s' % (i, losses[-1].device))
        grads = []
        for grad_and_vars in zip(*tower_grads):
            summed = tf.contrib.nccl.all_sum([grad for grad, _ in grad_and_vars])
            grads.append((summed[0] / FLAGS.num_gpus, grad_and_vars[0][1]))
        train_op = opt.apply_gradients(grads, global_step=tf.train.get_or_create_global_step())
        if FLAGS.quantize:
            contrib_quantize.create_training_graph(quant_delay=0)
        saver = tf.train.Saver()
        with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
            sess.run(tf.global_variables_initializer())
            for step in range(FLAGS.max_steps):
                _, loss_value = sess.run([train_op, losses[0]])
                print('step %d: loss = %.4f' % (step, loss_value))
            if not Exists(FLAGS.log_dir):
                MakeDirs(FLAGS.log_dir)
            print('saved %s' % saver.save(sess, os.path.join(FLAGS.log_dir, 'model.ckpt')))


if __name__ == '__main__':
    tf.app.run()
