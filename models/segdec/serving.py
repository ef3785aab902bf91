"""What SegDecNet serves once exported (`scripts/export_saved_model.py --model segdec`).

    serving_default(images: uint8 [?, H, W]) -> mask float32 [?, H/8, W/8, 1], score float32 [?]

Grey-level images 0-255 of the size trained at (`--image_height`, `--image_width`: multiples
of 64; default the variant's, 1280x512 or 1408x512); inside the graph, the evaluation's
scaling to [0, 1] and both networks with batch norm on their moving statistics. `mask` is the
segmentation (the sigmoid of the pixel logits, at 1/8 of the input's resolution), `score` the
probability that the image shows a defect. The variant ('tower': a two-class softmax head,
'paper': one sigmoid logit) is read from the checkpoint.
"""
from models.segdec import model
from towers import export
from towers.compat import tf
from towers.errors import TowersError

# Sizes that the checkpoint does not hold: the input's.
FLAGS = ('image_height', 'image_width')
# The decision head's weights [66, logits]: their number of logits tells the variant.
HEAD = model.DECISION_SCOPE + '/fully_connected/weights'


def checkpoint_variant(checkpoint):
    """'tower' or 'paper': the variant whose head the checkpoint prefix `checkpoint` holds.

    Raises:
      TowersError: naming `checkpoint`, when it holds no SegDecNet head.
    """
    shapes = dict(tf.train.list_variables(checkpoint))
    for name, variant in model.VARIANTS.items():
        if shapes.get(HEAD, [None])[-1] == variant.num_logits:
            return name
    raise TowersError('checkpoint %s holds no SegDecNet: it lacks %s (of shape [66, 1 or 2])'
                      % (checkpoint, HEAD))


def serving(checkpoint, image_height=None, image_width=None):
    """The `towers.export.Serving` of the SegDecNet of `checkpoint` on images [?, H, W]:
    `image_height` and `image_width` as trained, or None for the variant's sizes."""
    variant = checkpoint_variant(checkpoint)
    height, width = model.input_size(variant, image_height, image_width)
    net = model.SegDecNet(variant)

    def build():
        images = tf.placeholder(tf.uint8, [None, height, width], name='images')
        outputs = net(tf.cast(images[..., None], tf.float32) / 255.0, is_training=False)
        return {'images': images}, {'mask': outputs['mask'], 'score': outputs['score']}

    return export.Serving(build, 'a SegDecNet (%s variant)' % variant)
