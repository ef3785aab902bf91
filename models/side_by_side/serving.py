"""What segmentation models trained side by side serve once exported
(`scripts/export_saved_model.py --model side_by_side`): one mask per model.

    serving_default(images: uint8 [?, S, S, 3]) -> fpn_mask float32 [?, S, S, 1],
        linknet_mask float32 [?, S, S, 1], unet_mask float32 [?, S, S, 1]

RGB images 0-255 of the size trained at (`--image_size`, a multiple of 32, default 128); inside
the graph, the evaluation's scaling to [0, 1] and each model restored from its own scope of the
checkpoint, as `eval_side_by_side.py` restores each alone, with batch norm on its moving
statistics. `<model>_mask` is that model's sigmoid mask. The models are those the checkpoint
holds, or those of `--models`.
"""
from models.side_by_side import architectures, model, resnet34
from towers import export
from towers.compat import tf
from towers.errors import TowersError
from towers.training import side_by_side

# Sizes that the checkpoint does not hold: the input's side; and which models to serve.
FLAGS = ('image_size', 'models')
IMAGE_SIZE = 128
MASK_SUFFIX = '_mask'


def serving(checkpoint, image_size=IMAGE_SIZE, models=None):
    """The `towers.export.Serving` of the models of `checkpoint` side by side, on images
    [?, image_size, image_size, 3].

    Args:
      checkpoint: a side-by-side training's checkpoint prefix.
      image_size: the side of the square input, a multiple of 32.
      models: the comma-separated models to serve, or None for every model the checkpoint holds.

    Raises:
      TowersError: the checkpoint holds none of the architectures, `models` names an unknown
        one, or `image_size` is not a multiple of 32.
    """
    resnet34.check_input_size(image_size, image_size, '--image_size')
    names = (architectures.parse_list(models) if models
             else side_by_side.models_in_checkpoint(checkpoint, architectures.names()))
    if not names:
        raise TowersError('checkpoint %s holds none of the models %s'
                          % (checkpoint, ', '.join(architectures.names())))

    def build():
        images = tf.placeholder(tf.uint8, [None, image_size, image_size, 3], name='images')
        scaled = tf.cast(images, tf.float32) / 255.0
        outputs = {}
        for name in names:
            with side_by_side.model_scope(name):
                outputs[name + MASK_SUFFIX] = model.SegmentationNet(name)(
                    scaled, is_training=False)['mask']
        return {'images': images}, outputs

    return export.Serving(build, 'the side-by-side models %s' % ', '.join(names))
