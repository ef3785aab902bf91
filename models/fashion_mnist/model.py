"""The Keras network of Zalando Research's Fashion-MNIST multi-GPU example (2018).

Functional API, as the reference: three 3x3 ReLU convolutions (32, 64, 64 filters) with 2x2
max pooling after the first two, a 64-unit ReLU layer and a 10-way softmax; categorical
cross-entropy on one-hot labels. The layers are named, so that a checkpoint written by the
towers restores into the model built anywhere else (evaluation).

    model = build_model()                         # a keras.Model, [B, 28, 28, 1] -> [B, 10]
    outputs = tower_fn(SharedModel(build_model), (images, one_hot_labels))
"""
from models.datasets.fashion_mnist import reader
from models.fashion_mnist import BATCH_SIZE
from towers.compat import keras, tf


def build_model(num_classes=reader.NUM_CLASSES):
    """The reference network.

    Args:
      num_classes: outputs of the softmax.

    Returns:
      A `keras.Model` from images [B, 28, 28, 1] float32 in [0, 1] to class probabilities
      [B, num_classes].
    """
    layers = keras.layers
    images = keras.Input([reader.HEIGHT, reader.WIDTH, 1], name='images')
    net = layers.Conv2D(32, 3, activation='relu', name='conv1')(images)
    net = layers.MaxPooling2D(2, 2, name='pool1')(net)
    net = layers.Conv2D(64, 3, activation='relu', name='conv2')(net)
    net = layers.MaxPooling2D(2, 2, name='pool2')(net)
    net = layers.Conv2D(64, 3, activation='relu', name='conv3')(net)
    net = layers.Flatten(name='flatten')(net)
    net = layers.Dense(64, activation='relu', name='dense1')(net)
    probabilities = layers.Dense(num_classes, activation='softmax', name='dense2')(net)
    return keras.Model(images, probabilities, name='fashion_mnist')


def loss(labels, probabilities):
    """Categorical cross-entropy, the mean over the batch, added to the `losses` collection.

    Args:
      labels: [B, classes] one-hot.
      probabilities: [B, classes].

    Returns:
      The scalar loss.
    """
    cross_entropy = tf.reduce_mean(keras.losses.categorical_crossentropy(labels, probabilities),
                                   name='cross_entropy')
    tf.losses.add_loss(cross_entropy)
    return cross_entropy


def tower_fn(shared_model, batch):
    """Builds one tower: the shared model on this tower's images, and its loss.

    Args:
      shared_model: a `towers.replication.keras_models.SharedModel` of `build_model`, the same for every
        tower.
      batch: (images [B, 28, 28, 1] float32, labels [B, 10] one-hot).

    Returns:
      A dict: 'probabilities' [B, 10], 'cross_entropy' scalar.
    """
    images, labels = batch
    probabilities = shared_model(images, training=True)
    return {'probabilities': probabilities, 'cross_entropy': loss(labels, probabilities)}
