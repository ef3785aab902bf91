"""What the ResNet serves once exported (`scripts/export_saved_model.py --model imagenet`).

    serving_default(images: uint8 [?, ?, ?, 3]) -> probabilities float32 [?, 1000],
        classes int64 [?], logits float32 [?, 1000]

Decoded RGB images of any one size, 0-255 (a batch of images of several sizes: send them one
at a time); inside the graph, the evaluation's centre crop: the shorter side scaled to 256 for
224 crops (scaled with `--image_size`), the centre crop, per-channel normalisation. `classes`
are the class indices of training, 0..999: the TFRecord label minus one, the list files' label;
`logits` are what the 10-crop test averages.
The depth (50, 101, 152) is read from the checkpoint; the crop size is `--image_size`, as
trained (default 224).
"""
from models.datasets.imagenet import reader
from models.imagenet import model
from towers import export
from towers.compat import tf

# Sizes that the checkpoint does not hold: the crop's side.
FLAGS = ('image_size',)
IMAGE_SIZE = 224


def serving(checkpoint, image_size=IMAGE_SIZE):
    """The `towers.export.Serving` of the ResNet of `checkpoint`, on centre crops of
    `image_size` (S >= 32).

    Raises:
      TowersError: the checkpoint holds no ResNet v1.
    """
    net = model.ResNet(model.checkpoint_depth(checkpoint))

    def build():
        images = tf.placeholder(tf.uint8, [None, None, None, 3], name='images')
        logits = net(reader.centre_crops(images, image_size), is_training=False)
        return {'images': images}, export.classified(tf.nn.softmax(logits), logits)

    return export.Serving(build, 'a %s' % net.scope)
