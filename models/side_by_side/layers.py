"""The building blocks the encoder and the decoders share: convolutions, batch norm, upsampling.

`segmentation_models` builds on Keras layers; these are their graph-mode equivalents:
- convolutions without bias before a batch norm, kernels He-uniform;
- batch norm with Keras' momentum 0.99 (tf-slim's `decay`), and Keras' epsilon 1e-3 in the
  decoders (the ResNet encoder sets 2e-5);
- `same` padding in the decoders; the encoder pads explicitly, as its Keras original does.
"""
from towers.compat import slim, tf

BATCH_NORM_DECAY = 0.99
DECODER_EPSILON = 1e-3


def he_uniform():
    """Keras' 'he_uniform': uniform in +-sqrt(6 / fan_in)."""
    return tf.variance_scaling_initializer(scale=2.0, mode='fan_in', distribution='uniform')


def glorot_uniform():
    """Keras' default kernel initializer, which the segmentation heads keep."""
    return tf.glorot_uniform_initializer()


def batch_norm(inputs, is_training, scope, epsilon=DECODER_EPSILON, scale=True):
    """Keras' `BatchNormalization` on [b, h, w, c]: moving statistics updated through
    `UPDATE_OPS` while training, used at test time."""
    return slim.batch_norm(inputs, decay=BATCH_NORM_DECAY, epsilon=epsilon, scale=scale,
                           is_training=is_training, scope=scope)


def conv_bn_relu(inputs, filters, kernel_size, is_training, scope):
    """`segmentation_models`' Conv3x3BnReLU / Conv1x1BnReLU: [b, h, w, c] -> [b, h, w, filters]."""
    with tf.variable_scope(scope):
        net = slim.conv2d(inputs, filters, kernel_size, padding='SAME', activation_fn=None,
                          weights_initializer=he_uniform(), biases_initializer=None,
                          scope='conv')
        return tf.nn.relu(batch_norm(net, is_training, 'bn'))


def upsample(inputs, factor, method='nearest'):
    """Keras' `UpSampling2D(factor)`: [b, h, w, c] -> [b, h * factor, w * factor, c].

    'nearest' repeats each pixel; 'bilinear' interpolates with half-pixel centres, as
    TensorFlow 2's `tf.image.resize` (which Keras uses) does.
    """
    height, width = inputs.shape.as_list()[1:3]
    size = [height * factor, width * factor]
    if method == 'nearest':
        return tf.image.resize_nearest_neighbor(inputs, size)
    return tf.image.resize_bilinear(inputs, size, half_pixel_centers=True)


def head(inputs, scope):
    """The segmentation head: a 3x3 convolution with bias to one logit per pixel,
    [b, h, w, c] -> [b, h, w, 1] (the sigmoid is applied by the model)."""
    return slim.conv2d(inputs, 1, 3, padding='SAME', activation_fn=None,
                       weights_initializer=glorot_uniform(), scope=scope)
