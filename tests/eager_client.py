"""A user's program of plain TensorFlow 2 that runs the exports, for tests/test_export.py.

    python tests/eager_client.py JOBS.json

It imports TensorFlow, tf_keras and NumPy, never `towers` or `tf.compat.v1`, and runs eagerly.
JOBS.json is a list of jobs, each writing its outputs to the .npz file "out":
  {"saved_model": DIR, "images": NPZ | "jpegs": [PATH, ...], "out": NPZ}
      `tf.saved_model.load(DIR).signatures['serving_default'](images=...)` on the array
      'images' of NPZ, or on each JPEG decoded (one image per call: their sizes may differ);
  {"keras": "fashion_mnist" | "vgg16_transfer", "classes": C, "image_size": S,
   "weights": FILE.weights.h5 | "tf2_checkpoint_dir": DIR, "images": NPZ | "jpegs": [...],
   "out": NPZ}
      the architecture built here in tf_keras, its weights loaded with `load_weights` or
      restored with `tf.train.Checkpoint(model=model)`, run on the images preprocessed as the
      docs/export.md tells a client to.
Last it prints one line of JSON: whether it ran eagerly and whether `towers` was imported.
"""
import json
import sys

import numpy as np
import tensorflow as tf
import tf_keras


def fashion_mnist(classes, image_size):
    """The Keras network of the Fashion-MNIST example, as docs/workloads.md describes it."""
    layers = tf_keras.layers
    images = tf_keras.Input([image_size, image_size, 1])
    net = layers.Conv2D(32, 3, activation='relu', name='conv1')(images)
    net = layers.MaxPooling2D(2, 2, name='pool1')(net)
    net = layers.Conv2D(64, 3, activation='relu', name='conv2')(net)
    net = layers.MaxPooling2D(2, 2, name='pool2')(net)
    net = layers.Conv2D(64, 3, activation='relu', name='conv3')(net)
    net = layers.Flatten(name='flatten')(net)
    net = layers.Dense(64, activation='relu', name='dense1')(net)
    probabilities = layers.Dense(classes, activation='softmax', name='dense2')(net)
    return tf_keras.Model(images, probabilities)


def vgg16_transfer(classes, image_size):
    """VGG16 without its top, Flatten and a softmax Dense, as docs/workloads.md describes it."""
    base = tf_keras.applications.VGG16(include_top=False, weights=None,
                                       input_shape=(image_size, image_size, 3))
    flat = tf_keras.layers.Flatten(name='flatten')(base.output)
    probabilities = tf_keras.layers.Dense(classes, activation='softmax',
                                          name='predictions')(flat)
    return tf_keras.Model(base.input, probabilities)


def keras_input(architecture, images, image_size):
    """What the Keras model takes, from the images a user holds (uint8)."""
    images = tf.image.convert_image_dtype(images, tf.float32)
    if architecture == 'fashion_mnist':
        return images[..., None]
    # Resized as TensorFlow 1 resized them in training (no half-pixel centres).
    resized = tf.raw_ops.ResizeBilinear(images=images, size=[image_size, image_size],
                                        half_pixel_centers=False)
    return tf_keras.applications.vgg16.preprocess_input(resized * 255.0)


def image_batches(job):
    """The images of a job, as batches to send."""
    if 'jpegs' in job:
        return [tf.io.decode_image(tf.io.read_file(path), channels=3,
                                   expand_animations=False)[None] for path in job['jpegs']]
    with np.load(job['images']) as arrays:
        return [tf.constant(arrays['images'])]


def run(job):
    """A job's outputs: a dict name -> array over all its images."""
    batches = image_batches(job)
    if 'saved_model' in job:
        predict = tf.saved_model.load(job['saved_model']).signatures['serving_default']
        results = [predict(images=batch) for batch in batches]
    else:
        model = globals()[job['keras']](job['classes'], job['image_size'])
        if 'weights' in job:
            model.load_weights(job['weights'])
        else:
            tf.train.Checkpoint(model=model).restore(
                tf.train.latest_checkpoint(job['tf2_checkpoint_dir'])).assert_consumed()
        results = [{'probabilities': model(keras_input(job['keras'], batch, job['image_size']))}
                   for batch in batches]
    # Strings come as bytes objects; NumPy keeps them as fixed-size bytes.
    return {name: np.concatenate([result[name].numpy() for result in results]).astype(
        bytes if results[0][name].dtype == tf.string else results[0][name].dtype.as_numpy_dtype)
        for name in results[0]}


def main(jobs_file):
    with open(jobs_file) as f:
        jobs = json.load(f)
    for job in jobs:
        np.savez(job['out'], **run(job))
    print(json.dumps({'executing_eagerly': tf.executing_eagerly(),
                      'towers_imported': any(name.split('.')[0] == 'towers'
                                             for name in sys.modules)}))


if __name__ == '__main__':
    main(sys.argv[1])
