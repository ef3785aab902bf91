"""A program of the 2018 pattern, written against TF 1.x's API only: a compiled tf.keras model
(the Fashion-MNIST multi-GPU example's layers) made into an Estimator with
`tf.keras.estimator.model_to_estimator`, whose RunConfig trains it with
`tf.contrib.distribute.MirroredStrategy(num_gpus=N)`; it trains with a SessionRunHook that times
each batch, then evaluates and predicts. --batch_size is per replica, as TF 1.x took it."""
import json
import os
import time

import numpy as np
import tensorflow as tf

flags = tf.app.flags
flags.DEFINE_integer('num_gpus', 2, 'GPUs to mirror the model on.')
flags.DEFINE_integer('batch_size', 16, 'Images per GPU and step.')
flags.DEFINE_integer('steps', 20, 'Training steps.')
flags.DEFINE_string('model_dir', '/tmp/keras_estimator_program', 'Where checkpoints go.')
flags.DEFINE_string('report', '', 'Write the evaluation and predictions here as JSON.')
FLAGS = flags.FLAGS

NUM_CLASSES = 10


def images_and_labels(seed, count):
    """uint8 28x28 images whose class sets the brightness of one of ten bands."""
    rng = np.random.RandomState(seed)
    labels = rng.randint(0, NUM_CLASSES, count)
    images = rng.randint(0, 100, [count, 28, 28]).astype(np.uint8)
    for index, label in enumerate(labels):
        images[index, 2 + 2 * label:4 + 2 * label, :] = 250
    return images, labels


def as_features(images):
    return (images / 255.0).astype(np.float32)[..., None]


def build_model():
    images = tf.keras.layers.Input(shape=(28, 28, 1), name='images')
    net = tf.keras.layers.Conv2D(32, 3, activation='relu', name='conv1')(images)
    net = tf.keras.layers.MaxPooling2D(2, 2, name='pool1')(net)
    net = tf.keras.layers.Conv2D(64, 3, activation='relu', name='conv2')(net)
    net = tf.keras.layers.MaxPooling2D(2, 2, name='pool2')(net)
    net = tf.keras.layers.Conv2D(64, 3, activation='relu', name='conv3')(net)
    net = tf.keras.layers.Flatten(name='flatten')(net)
    net = tf.keras.layers.Dense(64, activation='relu', name='dense1')(net)
    probabilities = tf.keras.layers.Dense(NUM_CLASSES, activation='softmax', name='dense2')(net)
    return tf.keras.models.Model(images, probabilities, name='fashion_mnist')


class TimeHistory(tf.train.SessionRunHook):
    """Times each batch, as the 2018 example's hook did."""

    def begin(self):
        self.times = []

    def before_run(self, run_context):
        self.started = time.time()

    def after_run(self, run_context, run_values):
        self.times.append(time.time() - self.started)


def input_fn(seed, count, batch_size, repeat):
    def make():
        images, labels = images_and_labels(seed, count)
        dataset = tf.data.Dataset.from_tensor_slices(
            ({'images': as_features(images)},
             tf.keras.utils.to_categorical(labels, NUM_CLASSES)))
        return dataset.batch(batch_size).repeat() if repeat else dataset.batch(batch_size)
    return make


def main(_):
    tf.set_random_seed(1)
    model = build_model()
    model.compile(optimizer=tf.train.AdamOptimizer(learning_rate=0.001),
                  loss='categorical_crossentropy', metrics=['accuracy'])
    strategy = tf.contrib.distribute.MirroredStrategy(num_gpus=FLAGS.num_gpus)
    config = tf.estimator.RunConfig(train_distribute=strategy, log_step_count_steps=10,
                                    tf_random_seed=1)
    estimator = tf.keras.estimator.model_to_estimator(model, config=config,
                                                      model_dir=FLAGS.model_dir)
    timing = TimeHistory()
    estimator.train(input_fn(0, 1024, FLAGS.batch_size, repeat=True), steps=FLAGS.steps,
                    hooks=[timing])
    metrics = estimator.evaluate(input_fn(1, 128, 32, repeat=False))
    print('%d GPU(s): %d batches of %d per GPU, %.4f s a batch; evaluation: acc %.4f loss %.4f'
          % (FLAGS.num_gpus, len(timing.times), FLAGS.batch_size, np.mean(timing.times),
             metrics['acc'], metrics['loss']))
    images, labels = images_and_labels(1, 128)
    predictions = [p['dense2'].tolist() for p in estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices({'images': as_features(images)}).batch(32))]
    if FLAGS.report:
        with open(FLAGS.report, 'w') as f:
            json.dump({'metrics': {k: float(v) for k, v in metrics.items()},
                       'images': images.tolist(), 'labels': labels.tolist(),
                       'probabilities': predictions, 'batches': len(timing.times)}, f)


if __name__ == '__main__':
    tf.app.run()
