"""The ResNet-34 encoder of `segmentation_models` (the pre-activation ResNet of
`classification_models`), in graph mode with tf-slim.

    output, skips = encoder(images, is_training=True)

Layers, all convolutions without bias and He-uniform, every batch norm with momentum 0.99 and
epsilon 2e-5:
    bn_data                       batch norm of the input, without scale
    conv0, bn0, relu0             7x7/2 convolution to 64, batch norm, ReLU       (1/2)
    pool0                         3x3/2 max pool                                  (1/4)
    stage1..stage4                3, 4, 6, 3 basic blocks of 64, 128, 256, 512
                                  filters; stages 2-4 start with stride 2    (1/4 .. 1/32)
    bn1, relu1                    final batch norm and ReLU
A block is bn1 -> ReLU -> [on a stage's first block, `sc`: a 1x1 projection, with the block's
stride, of that activated input] -> 3x3 conv1 (the block's stride) -> bn2 -> ReLU -> 3x3 conv2
-> add the shortcut (the projection, or else the block's input). Convolutions and the max pool
pad their input symmetrically and then use 'VALID', as the Keras original pads with
`ZeroPadding2D`.

The skips a decoder takes are the first ReLU of stages 4, 3 and 2 (the activated outputs of
stages 3, 2 and 1) and relu0: 256, 128, 64 and 64 channels at 1/16, 1/8, 1/4 and 1/2.
Variables: 176 (21,302,473 numbers), as the Keras ResNet-34 without its classifier.
"""
from models.side_by_side import layers
from towers.compat import slim, tf
from towers.errors import TowersError

SCOPE = 'encoder'
STAGE_BLOCKS = (3, 4, 6, 3)
STAGE_FILTERS = (64, 128, 256, 512)
EPSILON = 2e-5
# Height and width must survive five halvings exactly.
OUTPUT_STRIDE = 32


def check_input_size(height, width, what):
    """Raises `TowersError` naming `what` unless both sizes are multiples of 32."""
    if height % OUTPUT_STRIDE or width % OUTPUT_STRIDE:
        raise TowersError('%s is %dx%d (height x width); the ResNet-34 encoder needs a height '
                          'and width divisible by %d' % (what, height, width, OUTPUT_STRIDE))


def _pad(inputs, amount):
    return tf.pad(inputs, [[0, 0], [amount, amount], [amount, amount], [0, 0]])


def _conv(inputs, filters, kernel_size, stride, scope):
    padded = _pad(inputs, kernel_size // 2) if kernel_size > 1 else inputs
    return slim.conv2d(padded, filters, kernel_size, stride=stride, padding='VALID',
                       activation_fn=None, weights_initializer=layers.he_uniform(),
                       biases_initializer=None, scope=scope)


def _bn(inputs, is_training, scope, scale=True):
    return layers.batch_norm(inputs, is_training, scope, epsilon=EPSILON, scale=scale)


def _block(inputs, filters, stride, project, is_training, name):
    """One basic block; returns (its output, the activation of its input)."""
    activated = tf.nn.relu(_bn(inputs, is_training, name + '_bn1'), name=name + '_relu1')
    shortcut = _conv(activated, filters, 1, stride, name + '_sc') if project else inputs
    net = _conv(activated, filters, 3, stride, name + '_conv1')
    net = tf.nn.relu(_bn(net, is_training, name + '_bn2'), name=name + '_relu2')
    net = _conv(net, filters, 3, 1, name + '_conv2')
    return tf.add(net, shortcut, name=name + '_add'), activated


def encoder(images, is_training):
    """Builds the encoder in variable scope 'encoder'.

    Args:
      images: [b, H, W, c] float32, H and W multiples of 32.
      is_training: Python bool: batch statistics and their moving-average updates (in
        `UPDATE_OPS`) when True, the moving statistics when False.

    Returns:
      output: [b, H/32, W/32, 512], after the final batch norm and ReLU.
      skips: [b, H/16, W/16, 256], [b, H/8, W/8, 128], [b, H/4, W/4, 64], [b, H/2, W/2, 64],
        deepest first.
    """
    height, width = images.shape.as_list()[1:3]
    check_input_size(height, width, 'the input %s' % images.name)
    with tf.variable_scope(SCOPE):
        net = _bn(images, is_training, 'bn_data', scale=False)
        net = _conv(net, STAGE_FILTERS[0], 7, 2, 'conv0')
        relu0 = tf.nn.relu(_bn(net, is_training, 'bn0'), name='relu0')
        net = slim.max_pool2d(_pad(relu0, 1), 3, stride=2, padding='VALID', scope='pool0')
        skips = [relu0]
        for stage, (blocks, filters) in enumerate(zip(STAGE_BLOCKS, STAGE_FILTERS), start=1):
            for block in range(1, blocks + 1):
                first = block == 1
                net, activated = _block(net, filters, 2 if first and stage > 1 else 1, first,
                                        is_training, 'stage%d_unit%d' % (stage, block))
                if first and stage > 1:
                    skips.insert(0, activated)
        output = tf.nn.relu(_bn(net, is_training, 'bn1'), name='relu1')
    return output, skips
