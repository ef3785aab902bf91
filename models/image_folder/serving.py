"""What a folder-of-JPEGs classifier (VGG16 transfer) serves once exported
(`scripts/export_saved_model.py --model image_folder`), and its Keras counterpart.

    serving_default(images: uint8 [?, ?, ?, 3]) -> probabilities float32 [?, C],
        classes int64 [?], class_names string [?]

Decoded RGB images of any one size, 0-255; inside the graph, the evaluation's input (scaled to
[0, 1], resized bilinearly to the size trained at) and VGG16's Caffe preprocessing. The classes
and the size come from the training's `model.json`, beside the checkpoint; `class_names` are
the class folders' names. The Keras model (`model.vgg16_transfer`, plain tf_keras) takes the
Caffe-preprocessed images [?, S, S, 3] float32 (`model.caffe_preprocess`, which is
`keras.applications.vgg16.preprocess_input` of the images in 0-255): `--keras_out` and
`--tf2_checkpoint_dir` load into it.
"""
import os

from models.datasets.image_folder import reader
from models.image_folder import model
from towers import export
from towers.compat import tf

# Sizes that the checkpoint does not hold: none that its model.json does not.
FLAGS = ()


def serving(checkpoint):
    """The `towers.export.Serving` of the classifier of `checkpoint`, at the classes and size
    of the `model.json` in its directory.

    Raises:
      TowersError: the checkpoint's directory holds no `model.json` of a training.
    """
    classes, image_size = model.load_spec(os.path.dirname(os.path.abspath(checkpoint)))
    network = model.Vgg16Transfer(len(classes), image_size)

    def build():
        images = tf.placeholder(tf.uint8, [None, None, None, 3], name='images')
        outputs = export.classified(
            network(reader.scale_and_resize(images, image_size), training=False))
        outputs['class_names'] = tf.gather(tf.constant(classes), outputs['classes'],
                                           name='class_names')
        return {'images': images}, outputs

    return export.Serving(build, 'a VGG16 transfer classifier of %d classes at %dx%d'
                          % (len(classes), image_size, image_size),
                          keras_model=lambda: network.keras_model)
