"""A TF 1.x program of the replicate_model_fn kind (TF 1.5-1.8), written against TF 1.x's API
only: towers inside an Estimator's model_fn through
`tf.contrib.estimator.replicate_model_fn` and `TowerOptimizer`, on every GPU the machine has;
the input_fn gives the global batch, which the towers split. It trains, evaluates and predicts."""
import numpy as np
import tensorflow as tf
from tensorflow.python.client import device_lib

flags = tf.app.flags
flags.DEFINE_string('model_dir', '/tmp/replicate_program', 'Where checkpoints go.')
flags.DEFINE_integer('batch_size', 32, 'The global batch, split over the GPUs.')
flags.DEFINE_integer('train_steps', 60, 'Training steps.')
FLAGS = flags.FLAGS


def data(seed, count):
    rng = np.random.RandomState(seed)
    x = rng.randn(count, 8).astype(np.float32)
    y = (np.abs(x[:, 0]) + x[:, 1] > 0.8).astype(np.int32)
    return x, y


def input_fn(seed, repeat):
    def make():
        x, y = data(seed, 512)
        dataset = tf.data.Dataset.from_tensor_slices(({'x': x}, y))
        dataset = dataset.shuffle(512, seed=seed).repeat() if repeat else dataset
        return dataset.batch(FLAGS.batch_size, drop_remainder=True)
    return make


def model_fn(features, labels, mode, params):
    hidden = tf.layers.dense(features['x'], 32, activation=tf.nn.relu, name='hidden')
    logits = tf.layers.dense(hidden, 2, name='logits')
    predictions = {'classes': tf.argmax(logits, 1), 'probabilities': tf.nn.softmax(logits)}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)
    loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
    optimizer = tf.contrib.estimator.TowerOptimizer(tf.train.AdamOptimizer(params['rate']))
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op, eval_metric_ops={
        'accuracy': tf.metrics.accuracy(labels, predictions['classes'])})


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    gpus = [d.name for d in device_lib.list_local_devices() if d.device_type == 'GPU']
    print('towers on %d GPU(s): %s' % (len(gpus), ', '.join(gpus)))
    estimator = tf.estimator.Estimator(
        model_fn=tf.contrib.estimator.replicate_model_fn(model_fn), model_dir=FLAGS.model_dir,
        params={'rate': 0.01}, config=tf.estimator.RunConfig(log_step_count_steps=20))
    estimator.train(input_fn(0, repeat=True), steps=FLAGS.train_steps)
    metrics = estimator.evaluate(input_fn(1, repeat=False))
    x, y = data(2, 16)
    predicted = [p['classes'] for p in estimator.predict(
        tf.estimator.inputs.numpy_input_fn({'x': x}, shuffle=False, batch_size=16))]
    print('evaluation: accuracy %.4f loss %.4f global_step %d; predicted %d of %d right'
          % (metrics['accuracy'], metrics['loss'], metrics['global_step'],
             int(np.sum(np.asarray(predicted) == y)), len(y)))


if __name__ == '__main__':
    tf.app.run()
