"""FPN (feature pyramid network, Lin et al., 2017) with the semantic-segmentation head that
`segmentation_models` builds on a ResNet encoder.

Pyramid of 256 channels: the encoder's output through a 1x1 convolution (with bias), doubled
(nearest neighbour) and added to the deepest skip through its own 1x1 convolution gives P5;
each next skip in turn gives P4, P3 and P2 (at 1/16, 1/8, 1/4 and 1/2 of the input). Each
level goes through two 3x3 conv-BN-ReLU of 128 channels and is enlarged (nearest, x8, x4, x2,
x1) to P2's resolution; the four are concatenated (512 channels), go through a 3x3
conv-BN-ReLU of 128, are doubled bilinearly to the input's resolution, and a 3x3 convolution
with bias gives one logit.
"""
from models.side_by_side import layers
from towers.compat import slim, tf

TITLE = 'FPN'
PYRAMID_FILTERS = 256
SEGMENTATION_FILTERS = 128


def _lateral(inputs, scope):
    return slim.conv2d(inputs, PYRAMID_FILTERS, 1, activation_fn=None,
                       weights_initializer=layers.he_uniform(), scope=scope)


def decoder(output, skips, is_training):
    """Builds the FPN decoder and head in variable scope 'decoder': the logits
    [b, H, W, 1] of the encoder's `output` [b, H/32, W/32, c] and `skips` (see
    `models.side_by_side.resnet34.encoder`); `is_training` for batch norm."""
    with tf.variable_scope('decoder'):
        level = output
        if level.shape.as_list()[3] != PYRAMID_FILTERS:
            level = _lateral(level, 'pyramid_input')
        pyramid = []
        for number, skip in zip(range(5, 1, -1), skips):
            level = tf.add(layers.upsample(level, 2), _lateral(skip, 'p%d_skip' % number),
                           name='p%d' % number)
            pyramid.append(level)
        segmented = []
        for number, level, factor in zip(range(5, 1, -1), pyramid, (8, 4, 2, 1)):
            net = layers.conv_bn_relu(level, SEGMENTATION_FILTERS, 3, is_training,
                                      'segment%da' % number)
            net = layers.conv_bn_relu(net, SEGMENTATION_FILTERS, 3, is_training,
                                      'segment%db' % number)
            segmented.append(layers.upsample(net, factor) if factor > 1 else net)
        net = tf.concat(segmented, axis=3, name='aggregate')
        net = layers.conv_bn_relu(net, SEGMENTATION_FILTERS, 3, is_training, 'final_stage')
        net = layers.upsample(net, 2, method='bilinear')
        return layers.head(net, 'final_conv')
