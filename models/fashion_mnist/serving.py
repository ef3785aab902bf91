"""What the Fashion-MNIST model serves once exported (`scripts/export_saved_model.py --model
fashion_mnist`), and its Keras counterpart.

    serving_default(images: uint8 [?, 28, 28]) -> probabilities float32 [?, 10], classes int64 [?]

The images as Fashion-MNIST stores them (and `keras.datasets.fashion_mnist` gives them): 28x28
grey levels 0-255, scaled to [0, 1] inside the graph as the evaluation scales them. The Keras
model (`model.build_model`, plain tf_keras) takes the scaled images [?, 28, 28, 1] float32:
`--keras_out` and `--tf2_checkpoint_dir` load into it.
"""
from models.datasets.fashion_mnist import reader
from models.fashion_mnist import model
from towers import export
from towers.compat import tf
from towers.replication.keras_models import SharedModel

# Sizes that the checkpoint does not hold: none.
FLAGS = ()


def serving(checkpoint):
    """The `towers.export.Serving` of the Keras network; `checkpoint` holds its fixed sizes
    already."""
    network = SharedModel(model.build_model)

    def build():
        images = tf.placeholder(tf.uint8, [None, reader.HEIGHT, reader.WIDTH], name='images')
        return {'images': images}, export.classified(
            network(reader.scale_images(images), training=False))

    return export.Serving(build, 'the Fashion-MNIST model', keras_model=lambda: network.model)
