"""What the CIFAR-10 model serves once exported (`scripts/export_saved_model.py --model cifar10`).

    serving_default(images: uint8 [?, 32, 32, 3]) -> probabilities float32 [?, 10],
        classes int64 [?], logits float32 [?, 10]

The images as CIFAR-10 stores them (RGB, 0-255); inside the graph, the tutorial's evaluation:
the central 24x24 crop, per-image standardization, the network with each variable restored
from its moving average, as `cifar10_eval.py` restores them.
"""
from models.cifar10 import model
from models.datasets.cifar10 import reader
from towers import export
from towers.compat import tf

# Sizes that the checkpoint does not hold: none.
FLAGS = ()


def serving(checkpoint):
    """The `towers.export.Serving` of the tutorial's network; `checkpoint` holds its fixed
    sizes already."""
    def build():
        images = tf.placeholder(tf.uint8, [None, reader.HEIGHT, reader.WIDTH, reader.DEPTH],
                                name='images')
        logits = model.inference(reader.central_crop(images))
        return {'images': images}, export.classified(tf.nn.softmax(logits), logits)

    return export.Serving(build, 'the CIFAR-10 model', var_list=model.variables_to_restore)
