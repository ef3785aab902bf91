"""Specification of the segmentation networks: the ResNet-34 encoder, the decoders, the registry."""
import numpy as np
import pytest

from models.side_by_side import architectures, model, resnet34
from towers.compat import tf
from towers.errors import TowersError

# The encoder's outputs for a 64x64 input: 1/32 and the skips at 1/16, 1/8, 1/4, 1/2.
OUTPUT_SHAPE = [1, 2, 2, 512]
SKIP_SHAPES = [[1, 4, 4, 256], [1, 8, 8, 128], [1, 16, 16, 64], [1, 32, 32, 64]]
# How each decoder joins a skip: Unet concatenates, Linknet adds, FPN projects it (1x1).
SKIP_CONSUMER = {'unet': 'ConcatV2', 'linknet': 'AddV2', 'fpn': 'Conv2D'}


def test_encoder_has_the_variables_of_the_keras_resnet34_without_its_classifier():
    resnet34.encoder(tf.zeros([1, 64, 64, 3]), is_training=True)
    variables = tf.global_variables()
    # 37 convolution kernels, 33 batch norms of 4 variables, the input's of 3 (no scale).
    assert len(variables) == 176
    assert sum(int(np.prod(v.shape.as_list())) for v in variables) == 21302473
    assert len(tf.trainable_variables()) == 106


def test_encoder_skips_are_the_first_relu_of_stages_4_3_2_and_relu0():
    output, skips = resnet34.encoder(tf.zeros([1, 64, 64, 3]), is_training=False)
    assert output.shape.as_list() == OUTPUT_SHAPE
    assert [s.shape.as_list() for s in skips] == SKIP_SHAPES
    assert [s.op.name for s in skips] == [
        'encoder/stage4_unit1_relu1', 'encoder/stage3_unit1_relu1',
        'encoder/stage2_unit1_relu1', 'encoder/relu0']


def test_input_not_divisible_by_32_is_an_error_naming_its_size():
    with pytest.raises(TowersError, match=r'is 48x64 \(height x width\).*divisible by 32'):
        resnet34.encoder(tf.zeros([1, 48, 64, 3]), is_training=True)


def _decode(name):
    output = tf.random_normal(OUTPUT_SHAPE)
    skips = [tf.random_normal(shape) for shape in SKIP_SHAPES]
    logits = architectures.get(name).decoder(output, skips, is_training=True)
    return output, skips, logits


@pytest.mark.parametrize('name', sorted(SKIP_CONSUMER))
def test_decoder_gives_one_logit_per_input_pixel(name):
    _, _, logits = _decode(name)
    assert logits.shape.as_list() == [1, 64, 64, 1]


@pytest.mark.parametrize('name', sorted(SKIP_CONSUMER))
def test_decoder_joins_every_skip_at_its_resolution(name):
    output, skips, logits = _decode(name)
    for skip in skips:
        assert [op.type for op in skip.consumers()] == [SKIP_CONSUMER[name]]
        if name == 'unet':
            # The block's input: the upsampled features, then the skip.
            upsampled, joined = skip.consumers()[0].inputs[:2]
            assert upsampled.shape.as_list()[1:3] == skip.shape.as_list()[1:3]
            assert joined is skip
    assert all(g is not None for g in tf.gradients(logits, [output] + skips))


def test_network_in_test_mode_gives_the_sigmoid_mask_and_updates_no_statistics():
    outputs = model.SegmentationNet('linknet')(tf.zeros([1, 64, 64, 3]), is_training=False)
    assert outputs['mask'].shape.as_list() == [1, 64, 64, 1]
    assert outputs['mask'].op.type == 'Sigmoid'
    assert outputs['mask'].op.inputs[0] is outputs['logits']
    assert not tf.get_collection(tf.GraphKeys.UPDATE_OPS)


def test_every_module_of_the_architectures_package_is_registered():
    assert architectures.names() == ['fpn', 'linknet', 'unet']
    assert architectures.get('fpn').TITLE == 'FPN'


def test_unknown_model_in_a_list_is_an_error_naming_the_flag_and_the_choices():
    with pytest.raises(TowersError, match=r"--models 'unet,segnet'.*among fpn, linknet, unet "
                                          r"\(unknown: segnet\)"):
        architectures.parse_list('unet,segnet')
