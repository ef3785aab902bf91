"""Stand-in for the TF1 multi-GPU SegDecNet's `segdec_model.py`, written for the tests of
`scripts/regress_segdec.py --original_dir` in that version's module layout and TF1 idioms (it is
not the original's code): SegmentNet and DecisionNet in tf-slim, and the two losses."""
import tensorflow as tf

slim = tf.contrib.slim

NUM_CLASSES = 2


def SegmentNet(images, is_training=True):
    """[b, H, W, 1] -> features [b, H/8, W/8, 1024] and pixel logits [b, H/8, W/8, 1]."""
    with tf.variable_scope('segment'), slim.arg_scope(
            [slim.conv2d], padding='SAME', normalizer_fn=slim.batch_norm,
            normalizer_params={'is_training': is_training}):
        net, index = images, 0
        for pool, widths in enumerate([[32, 32], [64, 64, 64], [64, 64, 64, 64]]):
            for width in widths:
                index += 1
                net = slim.conv2d(net, width, [5, 5], scope='conv%d' % index)
            net = slim.max_pool2d(net, [2, 2], scope='pool%d' % (pool + 1))
        features = slim.conv2d(net, 1024, [15, 15], scope='conv10')
        logits = slim.conv2d(features, 1, [1, 1], activation_fn=None, scope='conv11')
    return features, logits


def DecisionNet(features, mask, is_training=True):
    """Features and the sigmoid mask -> class logits [b, NUM_CLASSES]."""
    with tf.variable_scope('decision'), slim.arg_scope(
            [slim.conv2d], padding='SAME', normalizer_fn=slim.batch_norm,
            normalizer_params={'is_training': is_training}):
        net = tf.concat([features, mask], 3)
        for index, width in enumerate([8, 16, 32]):
            net = slim.max_pool2d(net, [2, 2], scope='pool%d' % (index + 1))
            net = slim.conv2d(net, width, [5, 5], scope='conv%d' % (index + 1))
        net = tf.concat([tf.reduce_mean(net, [1, 2]), tf.reduce_max(net, [1, 2]),
                         tf.reduce_mean(mask, [1, 2]), tf.reduce_max(mask, [1, 2])], 1)
        return slim.fully_connected(net, NUM_CLASSES, activation_fn=None,
                                    scope='fully_connected')


def loss(pixel_logits, class_logits, pixel_labels, labels):
    """Adds the pixel and the class loss to the 'losses' collection; returns both."""
    pixel_loss = tf.losses.sigmoid_cross_entropy(pixel_labels, pixel_logits)
    class_loss = tf.losses.sparse_softmax_cross_entropy(labels, class_logits)
    return pixel_loss, class_loss
