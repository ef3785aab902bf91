"""A two-tower TF1 program for the tests of `towers-legacy --compare_tf1`, written against TF 1.15's
API only, that runs on TensorFlow 1.15 itself and under the runner:

    towers-legacy --compare_tf1 tests/data/legacy/compare_program.py --train_dir /tmp/compare_program

A shuffled `tf.data` input (no seed of its own: the graph's) feeds two towers on the CPU that
share their variables through one `variable_scope`; each tower's dense network has dropout; the
averaged gradients go into one momentum step, with moving averages of the weights. Each step's
loss goes to a scalar summary, and a checkpoint is saved at the end; a run resumes from the
newest checkpoint in --train_dir. `--differ_at_step K` changes one constant, the learning rate,
from step K on under TensorFlow 2 only: a program that computes differently from there.
"""
import numpy as np
import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_string('train_dir', '/tmp/compare_program', 'Where summaries and the checkpoint go.')
flags.DEFINE_integer('max_steps', 12, 'Training steps.')
flags.DEFINE_integer('differ_at_step', -1, 'Under TensorFlow 2, the learning rate changes here.')
FLAGS = flags.FLAGS

NUM_TOWERS = 2
BATCH = 8


def tower_loss(features, labels):
    hidden = tf.layers.dense(features, 16, activation=tf.nn.relu, name='hidden')
    hidden = tf.nn.dropout(hidden, keep_prob=0.8)
    logits = tf.layers.dense(hidden, 3, name='logits')
    return tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)


def main(_):
    tf.set_random_seed(3)
    rng = np.random.RandomState(0)
    x = rng.randn(96, 5).astype(np.float32)
    y = (np.argmax(x[:, :3], axis=1)).astype(np.int64)
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(96).repeat().batch(
        NUM_TOWERS * BATCH)
    features, labels = tf.data.make_one_shot_iterator(dataset).get_next()
    global_step = tf.train.get_or_create_global_step()
    learning_rate = tf.placeholder(tf.float32, [], name='learning_rate')
    optimizer = tf.train.MomentumOptimizer(learning_rate, 0.9)
    tower_grads, losses = [], []
    with tf.variable_scope(tf.get_variable_scope()):
        for i in range(NUM_TOWERS):
            with tf.device('/cpu:0'), tf.name_scope('tower_%d' % i):
                loss = tower_loss(features[i * BATCH:(i + 1) * BATCH],
                                  labels[i * BATCH:(i + 1) * BATCH])
                tf.get_variable_scope().reuse_variables()
                tower_grads.append(optimizer.compute_gradients(loss))
                losses.append(loss)
    grads = [(tf.add_n([g for g, _ in pairs]) / NUM_TOWERS, pairs[0][1])
             for pairs in zip(*tower_grads)]
    update = optimizer.apply_gradients(grads, global_step=global_step)
    averages = tf.train.ExponentialMovingAverage(0.9, global_step)
    with tf.control_dependencies([update]):
        train_op = averages.apply(tf.trainable_variables())
    mean_loss = tf.add_n(losses) / NUM_TOWERS
    summary = tf.summary.scalar('loss', mean_loss)
    saver = tf.train.Saver()
    writer = tf.summary.FileWriter(FLAGS.train_dir)
    with tf.Session() as sess:
        checkpoint = tf.train.latest_checkpoint(FLAGS.train_dir)
        if checkpoint:
            saver.restore(sess, checkpoint)
        else:
            sess.run(tf.global_variables_initializer())
        for step in range(sess.run(global_step), FLAGS.max_steps):
            rate = 0.1
            if 0 <= FLAGS.differ_at_step <= step and not tf.__version__.startswith('1.'):
                rate = 0.12
            _, loss_value, summary_value = sess.run([train_op, mean_loss, summary],
                                                    {learning_rate: rate})
            writer.add_summary(summary_value, step)
            print('step %d, loss = %.4f' % (step, loss_value))
        writer.close()
        saver.save(sess, FLAGS.train_dir + '/model.ckpt', global_step=global_step)


if __name__ == '__main__':
    tf.app.run()
