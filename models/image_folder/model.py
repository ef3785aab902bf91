"""Transfer learning with Keras' VGG16: the convolutional base, a new softmax classifier on top.

The network of the reference's image-folder example:

    VGG16 without its top (tf_keras.applications, 13 convolutions in 5 blocks, 5 max pools)
    -> Flatten -> Dense(classes, softmax)

with every VGG16 layer frozen except the last four (block5_conv1..3 and block5_pool), so that
training changes block 5 and the classifier only. The base starts from random values unless a
Keras HDF5 weights file is given (`--weights`, e.g. Keras' ImageNet file
`vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5`), whose layers are matched by name.

The ImageNet weights were trained on images in Caffe's preprocessing (BGR, 0..255, mean pixel
subtracted); the reference feeds the images scaled to [0, 1], and so does this model.

Variables keep Keras' names (`block1_conv1/kernel`, ..., `predictions/kernel`) in every graph, so
that the evaluation's model restores the training's checkpoints.
"""
import logging
import os

import h5py
import numpy as np

from models.image_folder import IMAGE_SIZE, MIN_IMAGE_SIZE
from towers.compat import keras, tf
from towers.errors import TowersError
from towers.files import read_json, write_json
from towers.replication.keras_models import SharedModel

log = logging.getLogger(__name__)

TRAINABLE_VGG16_LAYERS = 4
VGG16_LAYER_PREFIX = 'block'
# The mean pixel of ImageNet's training images, blue, green, red, on 0..255.
IMAGENET_MEAN_BGR = (103.939, 116.779, 123.68)
# What a training directory records of its model, for resuming and evaluating it.
SPEC_FILE = 'model.json'


def caffe_preprocess(images):
    """VGG16's own input: RGB in [0, 1] -> BGR in 0..255 less ImageNet's mean pixel.

    As Keras' `vgg16.preprocess_input` (Caffe's preprocessing, that of the ImageNet weights).

    Args:
      images: [B, H, W, 3] float32 RGB in [0, 1].

    Returns:
      [B, H, W, 3] float32, BGR, about -124..151.
    """
    return images[..., ::-1] * 255.0 - IMAGENET_MEAN_BGR


def vgg16_transfer(num_classes, image_size=IMAGE_SIZE):
    """Makes the network in the default graph.

    Args:
      num_classes: outputs of the classifier.
      image_size: side of the square input, at least `MIN_IMAGE_SIZE`.

    Returns:
      A `keras.Model`: images [B, image_size, image_size, 3] -> probabilities
      [B, num_classes]; the layers before VGG16's last `TRAINABLE_VGG16_LAYERS` are frozen.
    """
    base = keras.applications.VGG16(include_top=False, weights=None,
                                    input_shape=(image_size, image_size, 3))
    for layer in base.layers[:-TRAINABLE_VGG16_LAYERS]:
        layer.trainable = False
    flat = keras.layers.Flatten(name='flatten')(base.output)
    probabilities = keras.layers.Dense(num_classes, activation='softmax',
                                       name='predictions')(flat)
    return keras.Model(base.input, probabilities, name='vgg16_transfer')


def _text(name):
    return name.decode('utf8') if isinstance(name, bytes) else str(name)


def read_weights(path, model):
    """The values of `model`'s VGG16 layers stored in a Keras HDF5 weights file.

    Layers are matched by name, as Keras' `load_weights(by_name=True)` matches them: the file's
    other layers (an ImageNet classifier, say) are ignored, and a VGG16 layer the file lacks
    keeps its initializer (logged).

    Args:
      path: a file written by Keras' `save_weights` or `save` in HDF5 (weights in the root
        or under `model_weights`).
      model: from `vgg16_transfer`.

    Returns:
      A dict variable -> numpy array of its shape.

    Raises:
      TowersError: naming `path`, when it cannot be read, is not a Keras weights file, holds
        no VGG16 layer, or a layer's weights differ in number or shape.
    """
    if not os.path.isfile(path):
        raise TowersError('--weights %s does not exist (expected a Keras HDF5 weights file such '
                          'as vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5)' % path)
    try:
        with h5py.File(path, 'r') as weights_file:
            group = weights_file.get('model_weights', weights_file)
            if 'layer_names' not in group.attrs:
                raise TowersError('--weights %s is not a Keras weights file: it has no '
                                  'layer_names attribute' % path)
            stored = {_text(name) for name in group.attrs['layer_names']}
            values, missing = {}, []
            for layer in model.layers:
                if not layer.name.startswith(VGG16_LAYER_PREFIX) or not layer.weights:
                    continue
                if layer.name not in stored:
                    missing.append(layer.name)
                    continue
                values.update(_layer_values(path, layer, group[layer.name]))
    except OSError as err:
        raise TowersError('cannot read --weights %s: %s (expected a Keras HDF5 weights file)'
                          % (path, err))
    if not values:
        raise TowersError('--weights %s holds none of VGG16\'s layers (block1_conv1 .. '
                          'block5_conv3)' % path)
    if missing:
        log.warning('--weights %s lacks VGG16 layer(s) %s: they start from random values',
                    path, ', '.join(missing))
    log.info('a new training starts VGG16 from the weights of %d layers in %s',
             len(values) // 2, path)
    return values


def _layer_values(path, layer, layer_group):
    arrays = [np.asarray(layer_group[_text(name)]) for name in layer_group.attrs['weight_names']]
    shapes = [tuple(variable.shape.as_list()) for variable in layer.weights]
    if [array.shape for array in arrays] != shapes:
        raise TowersError('--weights %s: layer %s holds weights of shapes %s; VGG16 expects %s'
                          % (path, layer.name, [array.shape for array in arrays], shapes))
    return dict(zip(layer.weights, arrays))


class Vgg16Transfer:
    """The network as the towers and the evaluation use it.

    The constructor holds only configuration; calling the object in a tower makes the Keras
    model in that graph the first time (in tower 0, so that its variables go to the parameter
    device) and shares it with the other towers.

    Attributes:
      num_classes, image_size: as for `vgg16_transfer`.
      weights: the HDF5 file the VGG16 layers start from, or None for random values.
    """

    def __init__(self, num_classes, image_size=IMAGE_SIZE, weights=None):
        if image_size < MIN_IMAGE_SIZE:
            raise TowersError('--image_size %d is too small for VGG16: its five poolings need '
                              'at least %dx%d images' % (image_size, MIN_IMAGE_SIZE,
                                                          MIN_IMAGE_SIZE))
        self.num_classes = num_classes
        self.image_size = image_size
        self.weights = weights
        self._shared = SharedModel(lambda: vgg16_transfer(num_classes, image_size))

    def __call__(self, images, training=True):
        """Class probabilities [B, num_classes] of images [B, image_size, image_size, 3] in
        [0, 1] (RGB); `training` is Keras' (VGG16 has neither dropout nor batch norm)."""
        return self._shared(caffe_preprocess(images), training=training)

    @property
    def keras_model(self):
        """The `keras.Model` of the newest graph the object was called in (None before): the
        network without `caffe_preprocess`."""
        return self._shared.model

    def initial_values(self):
        """The values the variables of the newest graph's model start from: the VGG16 layers
        of `weights`, or none (random initialisation, which is logged). Call after the model
        was made."""
        if self.weights is None:
            log.info('a new training starts VGG16 from RANDOM values (no --weights file; '
                     'for ImageNet weights give vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5)')
            return {}
        return read_weights(self.weights, self.keras_model)

    def loss(self, probabilities, labels):
        """Adds the mean cross entropy of `probabilities` [B, num_classes] against `labels` [B]
        int32 to the `losses` collection and returns it (scalar)."""
        cross_entropy = tf.reduce_mean(
            keras.losses.sparse_categorical_crossentropy(labels, probabilities),
            name='cross_entropy')
        tf.add_to_collection(tf.GraphKeys.LOSSES, cross_entropy)
        return cross_entropy

    def tower_fn(self, batch):
        """One tower, as `towers.build_towers` calls it.

        Args:
          batch: (images [b, image_size, image_size, 3] float32 in [0, 1], labels [b] int32).

        Returns:
          A dict: 'probabilities' [b, num_classes], 'cross_entropy' (scalar).
        """
        images, labels = batch
        probabilities = self(images, training=True)
        return {'probabilities': probabilities,
                'cross_entropy': self.loss(probabilities, labels)}


def record_spec(train_dir, classes, image_size):
    """Writes what the model of `train_dir` takes and outputs, or checks it against what a
    resumed training there was started with.

    Args:
      train_dir: the training directory (created if missing).
      classes: the class names in label order.
      image_size: side of the square input.

    Raises:
      TowersError: `train_dir` holds a training of other classes or another image size.
    """
    if os.path.exists(os.path.join(train_dir, SPEC_FILE)):
        recorded = load_spec(train_dir)
        if recorded != (list(classes), image_size):
            raise TowersError('--train_dir %s holds a training of classes %s at image size %d; '
                              'this run has classes %s at image size %d: use another '
                              '--train_dir, or the same --labels and --image_size'
                              % ((train_dir,) + recorded + (list(classes), image_size)))
        return
    os.makedirs(train_dir, exist_ok=True)
    write_json(os.path.join(train_dir, SPEC_FILE),
               {'classes': list(classes), 'image_size': image_size})


def load_spec(train_dir):
    """(classes, image_size) of the training in `train_dir`, as `record_spec` wrote them.

    Raises:
      TowersError: `train_dir` has no such record, or it is malformed.
    """
    path = os.path.join(train_dir, SPEC_FILE)
    if not os.path.exists(path):
        raise TowersError('--train_dir %s has no %s: expected the --train_dir of '
                          'scripts/train_image_folder.py' % (train_dir, SPEC_FILE))
    spec = read_json(path, '--train_dir')
    if not (isinstance(spec, dict) and isinstance(spec.get('classes'), list)
            and isinstance(spec.get('image_size'), int)):
        raise TowersError('%s is not a record of a training: expected {"classes": [names], '
                          '"image_size": pixels}' % path)
    return spec['classes'], spec['image_size']
