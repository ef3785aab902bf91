"""A TF 1.x Estimator program of the getting-started kind, written against TF 1.15's API only:
a custom `model_fn` (a small dense network) on generated data, trained and evaluated with
`tf.estimator.train_and_evaluate`, then predicted and exported."""
import json
import os

import numpy as np
import tensorflow as tf
from tensorflow.python.estimator.export import export as export_lib
from tensorflow_estimator import estimator as tf_estimator

flags = tf.app.flags
flags.DEFINE_string('model_dir', '/tmp/estimator_program', 'Where checkpoints go.')
flags.DEFINE_integer('max_steps', 40, 'Training steps.')
flags.DEFINE_integer('batch_size', 16, 'Batch size.')
flags.DEFINE_integer('save_checkpoints_steps', 10, 'Checkpoint interval in steps.')
flags.DEFINE_string('report', '', 'Write the results here as JSON.')
FLAGS = flags.FLAGS

NUM_FEATURES = 6


def data(seed, n):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, NUM_FEATURES).astype(np.float32)
    y = (x[:, 0] + 0.5 * x[:, 1] - x[:, 2] > 0).astype(np.int64)
    return x, y


def input_fn(mode, params):
    x, y = data(0 if mode == tf.estimator.ModeKeys.TRAIN else 1, 256)
    dataset = tf.data.Dataset.from_tensor_slices(({'x': x}, y))
    if mode == tf.estimator.ModeKeys.TRAIN:
        dataset = dataset.shuffle(256, seed=1).repeat()
    return dataset.batch(params['batch_size'])


def model_fn(features, labels, mode, params):
    hidden = tf.layers.dense(features['x'], 16, activation=tf.nn.relu, name='hidden')
    logits = tf.layers.dense(hidden, 2, name='logits')
    predictions = {'classes': tf.argmax(logits, axis=1),
                   'probabilities': tf.nn.softmax(logits)}
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions, export_outputs={
            'serving_default': tf.estimator.export.PredictOutput(predictions)})
    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    optimizer = tf.train.AdamOptimizer(params['learning_rate'])
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    metrics = {'accuracy': tf.metrics.accuracy(labels, predictions['classes'])}
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      eval_metric_ops=metrics)


def serving_input_receiver_fn():
    x = tf.placeholder(tf.float32, [None, NUM_FEATURES], name='x')
    return export_lib.ServingInputReceiver({'x': x}, {'x': x})


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    config = tf_estimator.RunConfig(save_checkpoints_steps=FLAGS.save_checkpoints_steps,
                                    log_step_count_steps=10, tf_random_seed=7)
    estimator = tf.estimator.Estimator(
        model_fn, model_dir=FLAGS.model_dir, config=config,
        params={'batch_size': FLAGS.batch_size, 'learning_rate': 0.05})
    train_spec = tf.estimator.TrainSpec(input_fn, max_steps=FLAGS.max_steps)
    eval_spec = tf.estimator.EvalSpec(
        input_fn, steps=None, throttle_secs=0,
        exporters=[tf.estimator.LatestExporter('latest', serving_input_receiver_fn)])
    metrics, exports = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)
    print('evaluation: accuracy %.4f loss %.4f global_step %d'
          % (metrics['accuracy'], metrics['loss'], metrics['global_step']))
    predictions = list(estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices({'x': data(2, 8)[0]}).batch(4)))
    print('predicted %d examples, keys %s' % (len(predictions), sorted(predictions[0])))
    if FLAGS.report:
        with open(FLAGS.report, 'w') as f:
            json.dump({'metrics': {k: float(v) for k, v in metrics.items()},
                       'exports': [e.decode() for e in exports if e],
                       'probabilities': [p['probabilities'].tolist() for p in predictions]}, f)


if __name__ == '__main__':
    tf.app.run()
