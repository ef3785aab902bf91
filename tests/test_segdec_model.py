"""Specification of SegDecNet: shapes, variable names and batch norm in its two modes."""
import json
import os

import numpy as np
import pytest

from models.segdec import model as segdec
from towers import TowersError
from towers.compat import tf

GOLDEN = os.path.join(os.path.dirname(__file__), 'data', 'regression', 'segdec',
                      'golden_seed0.json')
# The smallest input the decision net's pools allow: 1/8 is 8x8, 1/64 is 1x1.
SMALL = 64


def _images(batch, height, width):
    return tf.placeholder(tf.float32, [batch, height, width, 1])


def test_full_size_input_gives_outputs_at_one_eighth_resolution():
    outputs = segdec.SegDecNet()(_images(2, 1280, 512), is_training=True)
    assert outputs['features'].shape.as_list() == [2, 160, 64, 1024]
    assert outputs['pixel_logits'].shape.as_list() == [2, 160, 64, 1]
    assert outputs['mask'].shape.as_list() == [2, 160, 64, 1]
    assert outputs['class_logits'].shape.as_list() == [2, 2]
    assert outputs['score'].shape.as_list() == [2]


def test_paper_variant_has_one_class_logit_on_its_larger_input():
    variant = segdec.VARIANTS['paper']
    images = _images(1, variant.image_height, variant.image_width)
    outputs = segdec.SegDecNet('paper')(images, is_training=False)
    assert outputs['pixel_logits'].shape.as_list() == [1, 176, 64, 1]
    assert outputs['class_logits'].shape.as_list() == [1, 1]
    assert tf.trainable_variables('decision/fully_connected/weights')[0].shape == (66, 1)


def test_variable_names_and_shapes_are_those_of_the_tf1_multi_gpu_version():
    with open(GOLDEN) as f:
        expected = json.load(f)['runs']['1']['global_variables']
    segdec.SegDecNet()(_images(1, 256, 128), is_training=True)
    assert {v.op.name: v.shape.as_list() for v in tf.global_variables()} == expected


def test_size_that_the_decision_pools_cannot_halve_is_refused():
    with pytest.raises(TowersError, match='multiples of 64'):
        segdec.SegDecNet()(_images(1, 96, 64), is_training=True)


def _two_images():
    rng = np.random.RandomState(0)
    return rng.uniform(0, 1, [2, SMALL, SMALL, 1]).astype(np.float32)


def _scores_alone_and_together(is_training):
    """The first image's score alone and beside a second image, and the update ops."""
    images = _images(None, SMALL, SMALL)
    score = segdec.SegDecNet()(images, is_training=is_training)['score']
    batch = _two_images()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        alone = sess.run(score, {images: batch[:1]})[0]
        together = sess.run(score, {images: batch})[0]
    return alone, together


def test_training_mode_normalises_with_the_statistics_of_the_batch():
    alone, together = _scores_alone_and_together(is_training=True)
    assert abs(alone - together) > 1e-4
    assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 2 * 14


def test_test_mode_uses_the_moving_statistics_and_updates_nothing():
    alone, together = _scores_alone_and_together(is_training=False)
    assert abs(alone - together) < 1e-6
    assert not tf.get_collection(tf.GraphKeys.UPDATE_OPS)


def test_test_mode_output_follows_the_moving_statistics():
    images = _images(1, SMALL, SMALL)
    logits = segdec.SegDecNet()(images, is_training=False)['pixel_logits']
    moving_mean = tf.global_variables('segment/conv11/BatchNorm/moving_mean')[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feed = {images: _two_images()[:1]}
        before = sess.run(logits, feed)
        moving_mean.load([1.0], sess)
        after = sess.run(logits, feed)
    # The 1x1 layer's batch norm has no scale and moving variance 1: logits shift by -mean.
    np.testing.assert_allclose(after, before - 1.0, atol=1e-3)


def _same_conv_mean(image, kernels):
    """Spatial mean of a SAME-padded 2-D correlation of `image` [H, W] with kernels [5, 5, C]."""
    padded = np.pad(image, 2)
    height, width = image.shape
    total = np.zeros(kernels.shape[-1])
    for dy in range(5):
        for dx in range(5):
            total += padded[dy:dy + height, dx:dx + width].sum() * kernels[dy, dx]
    return total / (height * width)


def test_training_updates_move_the_statistics_toward_the_batch():
    images = _images(1, SMALL, SMALL)
    segdec.SegDecNet(batch_norm_decay=0.5)(images, is_training=True)
    moving_mean = tf.global_variables('segment/conv1/BatchNorm/moving_mean')[0]
    batch = _two_images()[:1]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        weights = sess.run(tf.global_variables('segment/conv1/weights')[0])
        sess.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS), {images: batch})
        updated = sess.run(moving_mean)
    batch_mean = _same_conv_mean(batch[0, :, :, 0], weights[:, :, 0, :])
    np.testing.assert_allclose(updated, 0.5 * batch_mean, rtol=1e-3, atol=1e-5)


def test_frozen_segmentation_runs_in_test_mode_while_the_decision_net_trains():
    segdec.SegDecNet(frozen_segment=True)(_images(1, SMALL, SMALL), is_training=True)
    updated = {op.name.split('/')[0] for op in tf.get_collection(tf.GraphKeys.UPDATE_OPS)}
    assert updated == {'decision'}
