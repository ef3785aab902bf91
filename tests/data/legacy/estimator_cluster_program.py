"""A TF 1.x Estimator program for a cluster, written against TF 1.x's API only: the same
program is every task (chief, workers, parameter server, evaluator) and reads its role from
TF_CONFIG through `tf.estimator.train_and_evaluate`; --strategy trains with one of
tf.contrib.distribute's strategies across processes (TF 1.13-1.14)."""
import numpy as np
import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_string('model_dir', '/tmp/estimator_cluster_program', 'Shared by every task.')
flags.DEFINE_integer('max_steps', 200, 'The global step training stops at.')
flags.DEFINE_integer('save_checkpoints_steps', 50, 'The chief checkpoints this often.')
flags.DEFINE_string('strategy', '', "'', 'parameter_server' or 'collective_all_reduce'.")
flags.DEFINE_integer('gpus_per_worker', 2, 'Replicas in each worker, with --strategy.')
FLAGS = flags.FLAGS


def input_fn(mode):
    rng = np.random.RandomState(0 if mode == tf.estimator.ModeKeys.TRAIN else 1)
    x = rng.randn(512, 6).astype(np.float32)
    y = (x[:, 0] - x[:, 1] > 0).astype(np.int64)
    dataset = tf.data.Dataset.from_tensor_slices(({'x': x}, y))
    if mode == tf.estimator.ModeKeys.TRAIN:
        dataset = dataset.shuffle(512).repeat()
    return dataset.batch(32)


def model_fn(features, labels, mode):
    hidden = tf.layers.dense(features['x'], 16, activation=tf.nn.relu, name='hidden')
    logits = tf.layers.dense(hidden, 2, name='logits')
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(
        loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={
        'accuracy': tf.metrics.accuracy(labels, tf.argmax(logits, 1))})


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    strategy = None
    if FLAGS.strategy == 'parameter_server':
        strategy = tf.contrib.distribute.ParameterServerStrategy(
            num_gpus_per_worker=FLAGS.gpus_per_worker)
    elif FLAGS.strategy == 'collective_all_reduce':
        strategy = tf.contrib.distribute.CollectiveAllReduceStrategy(
            num_gpus_per_worker=FLAGS.gpus_per_worker)
    config = tf.estimator.RunConfig(save_checkpoints_steps=FLAGS.save_checkpoints_steps,
                                    log_step_count_steps=10, train_distribute=strategy)
    estimator = tf.estimator.Estimator(model_fn, FLAGS.model_dir, config)
    train_spec = tf.estimator.TrainSpec(input_fn, max_steps=FLAGS.max_steps)
    eval_spec = tf.estimator.EvalSpec(input_fn, steps=None, start_delay_secs=0,
                                      throttle_secs=1)
    metrics, _ = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    if metrics is not None:
        print('evaluation: accuracy %.4f loss %.4f global_step %d'
              % (metrics['accuracy'], metrics['loss'], metrics['global_step']))


if __name__ == '__main__':
    tf.app.run()
