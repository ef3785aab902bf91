"""Unet (Ronneberger et al., 2015) as `segmentation_models` builds it on a ResNet encoder.

Five decoder blocks of 256, 128, 64, 32 and 16 filters; each doubles the resolution (nearest
neighbour), concatenates the encoder's skip of that resolution (none in the last block, which
returns to the input's resolution) and applies two 3x3 conv-BN-ReLU. Head: 3x3 convolution
with bias to one logit.
"""
from models.side_by_side import layers
from towers.compat import tf

TITLE = 'Unet'
DECODER_FILTERS = (256, 128, 64, 32, 16)


def decoder(output, skips, is_training):
    """Builds the Unet decoder and head in variable scope 'decoder': the logits
    [b, H, W, 1] of the encoder's `output` [b, H/32, W/32, c] and `skips` (see
    `models.side_by_side.resnet34.encoder`); `is_training` for batch norm."""
    net = output
    with tf.variable_scope('decoder'):
        for stage, filters in enumerate(DECODER_FILTERS):
            net = layers.upsample(net, 2)
            if stage < len(skips):
                net = tf.concat([net, skips[stage]], axis=3, name='stage%d_concat' % stage)
            net = layers.conv_bn_relu(net, filters, 3, is_training, 'stage%da' % stage)
            net = layers.conv_bn_relu(net, filters, 3, is_training, 'stage%db' % stage)
        return layers.head(net, 'final_conv')
