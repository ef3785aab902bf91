"""Linknet (Chaurasia and Culurciello, 2017) as `segmentation_models` builds it on a ResNet
encoder.

Five decoder blocks; each takes its input of c channels through a 1x1 conv-BN-ReLU to c/4,
doubles the resolution (nearest neighbour), applies a 3x3 conv-BN-ReLU at c/4 and a 1x1
conv-BN-ReLU to the channels of the encoder's skip of that resolution, and adds the skip. The
last block has no skip and ends at 16 filters, at the input's resolution. Head: 3x3
convolution with bias to one logit.
"""
from models.side_by_side import layers
from towers.compat import tf

TITLE = 'Linknet'
LAST_FILTERS = 16
NUM_BLOCKS = 5


def decoder(output, skips, is_training):
    """Builds the Linknet decoder and head in variable scope 'decoder': the logits
    [b, H, W, 1] of the encoder's `output` [b, H/32, W/32, c] and `skips` (see
    `models.side_by_side.resnet34.encoder`); `is_training` for batch norm."""
    net = output
    with tf.variable_scope('decoder'):
        for stage in range(NUM_BLOCKS):
            skip = skips[stage] if stage < len(skips) else None
            reduced = net.shape.as_list()[3] // 4
            net = layers.conv_bn_relu(net, reduced, 1, is_training, 'stage%da' % stage)
            net = layers.upsample(net, 2)
            net = layers.conv_bn_relu(net, reduced, 3, is_training, 'stage%db' % stage)
            filters = LAST_FILTERS if skip is None else skip.shape.as_list()[3]
            net = layers.conv_bn_relu(net, filters, 1, is_training, 'stage%dc' % stage)
            if skip is not None:
                net = tf.add(net, skip, name='stage%d_add' % stage)
        return layers.head(net, 'final_conv')
