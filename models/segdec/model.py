"""SegDecNet: segmentation-based surface-defect detection (Tabernik et al., JIM 2019).

Two networks in tf-slim, with the variable names of the TF1 multi-GPU SegDecNet so that its
checkpoints load:

    segment/conv1..conv9/weights     5x5 convolutions: 32, 32 | 64, 64, 64 | 64, 64, 64, 64
    segment/conv10/weights           [15, 15, 64, 1024], the features at 1/8 resolution
    segment/conv11/weights           [1, 1, 1024, 1], the pixel logits (no activation)
    decision/conv1..conv3/weights    [5, 5, 1025, 8], [5, 5, 8, 16], [5, 5, 16, 32]
    decision/fully_connected/{weights,biases}  [66, classes], [classes]
    every convolution: <scope>/BatchNorm/{beta,moving_mean,moving_variance} (no gamma, no bias)

SegmentNet maps an image [b, H, W, 1] to 1024 features and one pixel logit at [b, H/8, W/8];
DecisionNet pools the features concatenated with the sigmoid of the logits (the mask) down to
1/64, convolves, and classifies from the global mean and max of its 32 channels and of the mask.

Batch norm uses the batch's statistics while training (`is_training=True`) and the moving
statistics at test time. With one image per tower, as the paper trains, "the batch" is one
image, so training-mode batch norm normalises each image by itself, which test mode cannot
imitate. Two rules keep training and testing consistent:
- each train op runs the moving-statistics updates of its own scope only, from tower 0
  (`towers.build_towers` applies tf-slim's model_deploy rule per objective): the segment op
  leaves the decision net's statistics alone and the decision op those of the segmentation net;
- `SegDecNet(frozen_segment=True)`, for the paper's second stage, runs the segmentation net in
  test mode while the decision net trains, so that the decision net learns from the very
  masks and features it will be given at test time. (In a trial on the generated data set,
  a decision net trained on the per-image-normalised segmentation instead scored the clean
  test images near 0.8 in test mode: average precision 0.77.)
For the same reason the decision net trains best on one image per tower: batch norm over a
batch that always holds a defective and a clean image lets it compare the two, which it cannot
do at test time (average precision 0.84-0.88 instead of 0.99 in trials).
"""
from models.segdec import OUTPUT_STRIDE, SIZE_MULTIPLE, VARIANTS
from towers.compat import slim, tf
from towers.errors import TowersError
from towers.replication.tower import Objective

SEGMENT_SCOPE = 'segment'
DECISION_SCOPE = 'decision'
# The 5x5 convolutions of SegmentNet, one tuple per resolution; a 2x2 max pool follows each.
SEGMENT_BLOCKS = ((32, 32), (64, 64, 64), (64, 64, 64, 64))
FEATURE_CHANNELS = 1024
FEATURE_KERNEL = 15
DECISION_CHANNELS = (8, 16, 32)
# The moving statistics must settle within the few hundred steps this project trains for;
# tf-slim's default 0.999 would leave them near their initial 0 and 1.
BATCH_NORM_DECAY = 0.9


def input_size(variant, image_height=None, image_width=None):
    """The input (height, width): the given sizes, or where None the variant's."""
    sizes = VARIANTS[variant]
    return image_height or sizes.image_height, image_width or sizes.image_width


OBJECTIVES = {
    'total': Objective(),
    'segment': Objective(loss='pixel_loss', scope=SEGMENT_SCOPE),
    'decision': Objective(loss='class_loss', scope=DECISION_SCOPE),
}
"""The three train ops of one set of towers: everything on the total loss, SegmentNet on the
pixel loss, DecisionNet on the class loss."""


class SegDecNet(object):
    """SegmentNet followed by DecisionNet; the constructor only holds the configuration.

    Calling the object builds the networks; later calls in the same variable scope with
    `reuse` share the variables, as `towers.build_towers` arranges for its towers.
    """

    def __init__(self, variant='tower', batch_norm_decay=BATCH_NORM_DECAY,
                 frozen_segment=False):
        """Args:
          variant: 'tower' (two-class softmax head) or 'paper' (one sigmoid logit).
          batch_norm_decay: decay of the batch-norm moving statistics.
          frozen_segment: run the segmentation net in test mode (moving statistics, no
            updates) even when training, as the second stage of the paper's schedule needs.
        """
        if variant not in VARIANTS:
            raise TowersError('unknown SegDecNet variant %r; expected one of %s'
                             % (variant, sorted(VARIANTS)))
        self.variant = variant
        self.num_logits = VARIANTS[variant].num_logits
        self.batch_norm_decay = batch_norm_decay
        self.frozen_segment = frozen_segment

    def __call__(self, images, is_training):
        """Builds SegmentNet and DecisionNet on `images`.

        Args:
          images: [b, H, W, 1] float32 in [0, 1]; H and W multiples of 64.
          is_training: Python bool: batch statistics and their moving-average updates (in
            `UPDATE_OPS`) when True (for the segmentation net only when it is not frozen), the
            moving statistics when False.

        Returns:
          A dict of tensors:
            features: [b, H/8, W/8, 1024], SegmentNet's last features.
            pixel_logits: [b, H/8, W/8, 1], the segmentation before the sigmoid.
            mask: [b, H/8, W/8, 1], sigmoid(pixel_logits).
            class_logits: [b, num_logits], the decision before the softmax (or sigmoid).
            score: [b], the probability that the image has a defect.
        """
        height, width = images.shape.as_list()[1:3]
        if height is None or width is None or height % SIZE_MULTIPLE or width % SIZE_MULTIPLE:
            raise TowersError('SegDecNet needs images whose height and width are multiples of '
                              '%d (--image_height, --image_width), got %s'
                              % (SIZE_MULTIPLE, images.shape))
        with self._batch_norm_scope(is_training and not self.frozen_segment):
            features, pixel_logits = _segment_net(images)
        mask = tf.sigmoid(pixel_logits, name='mask')
        with self._batch_norm_scope(is_training):
            class_logits = _decision_net(features, mask, self.num_logits)
        if self.num_logits == 1:
            score = tf.sigmoid(class_logits[:, 0])
        else:
            score = tf.nn.softmax(class_logits)[:, 1]
        return {'features': features, 'pixel_logits': pixel_logits, 'mask': mask,
                'class_logits': class_logits, 'score': tf.identity(score, name='score')}

    def _batch_norm_scope(self, is_training):
        return slim.arg_scope([slim.conv2d], padding='SAME', normalizer_fn=slim.batch_norm,
                              normalizer_params={'is_training': is_training,
                                                 'decay': self.batch_norm_decay})

    def losses(self, outputs, pixel_labels, labels):
        """Adds the pixel and the class loss to the `losses` collection.

        Args:
          outputs: the dict returned by calling the network.
          pixel_labels: [b, H/8, W/8, 1] float32 in {0, 1}, the downsampled defect mask.
          labels: [b] int32, 1 for an image with a defect.

        Returns:
          pixel_loss: mean sigmoid cross entropy of the pixel logits.
          class_loss: mean cross entropy of the decision (softmax or sigmoid).
        """
        pixel_loss = tf.losses.sigmoid_cross_entropy(pixel_labels, outputs['pixel_logits'],
                                                     scope='pixel_loss')
        if self.num_logits == 1:
            class_loss = tf.losses.sigmoid_cross_entropy(
                tf.cast(labels[:, None], tf.float32), outputs['class_logits'],
                scope='class_loss')
        else:
            class_loss = tf.losses.sparse_softmax_cross_entropy(
                labels, outputs['class_logits'], scope='class_loss')
        return pixel_loss, class_loss

    def tower_fn(self, batch):
        """The model of one tower in training mode, as `towers.build_towers` calls it.

        Args:
          batch: (images [b, H, W, 1], pixel_labels [b, H/8, W/8, 1], labels [b]).

        Returns:
          The network's outputs plus 'pixel_loss' and 'class_loss' (scalars), whose sum is the
          tower's total loss.
        """
        images, pixel_labels, labels = batch
        outputs = self(images, is_training=True)
        outputs['pixel_loss'], outputs['class_loss'] = self.losses(outputs, pixel_labels,
                                                                   labels)
        return outputs


def _segment_net(images):
    net = images
    layer = 0
    with tf.variable_scope(SEGMENT_SCOPE):
        for block, channels in enumerate(SEGMENT_BLOCKS):
            for num_outputs in channels:
                layer += 1
                net = slim.conv2d(net, num_outputs, 5, scope='conv%d' % layer)
            net = slim.max_pool2d(net, 2, scope='pool%d' % (block + 1))
        features = slim.conv2d(net, FEATURE_CHANNELS, FEATURE_KERNEL, scope='conv%d' % (layer + 1))
        pixel_logits = slim.conv2d(features, 1, 1, activation_fn=None,
                                   scope='conv%d' % (layer + 2))
    return features, pixel_logits


def _decision_net(features, mask, num_logits):
    with tf.variable_scope(DECISION_SCOPE):
        net = tf.concat([features, mask], axis=3)
        for layer, num_outputs in enumerate(DECISION_CHANNELS, start=1):
            net = slim.max_pool2d(net, 2, scope='pool%d' % layer)
            net = slim.conv2d(net, num_outputs, 5, scope='conv%d' % layer)
        pooled = tf.concat([tf.reduce_mean(net, [1, 2]), tf.reduce_max(net, [1, 2]),
                            tf.reduce_mean(mask, [1, 2]), tf.reduce_max(mask, [1, 2])], axis=1)
        return slim.fully_connected(pooled, num_logits, activation_fn=None,
                                    scope='fully_connected')
