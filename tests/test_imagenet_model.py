"""Specification of the ResNet model: tf-slim's variables (so its checkpoints restore), the
reference's losses, and the network on towers."""
import types

import numpy as np
import pytest

import towers
from models.imagenet import model, recipe
from towers.compat import slim, tf

SIZE = 32
BATCH = 2


def shapes(variables):
    return {v.op.name: v.shape.as_list() for v in variables}


@pytest.fixture(scope='module')
def on_towers():
    """ResNet-50's training step on 2 virtual CPU towers, and tf-slim's own resnet_v1_50 with
    its arg scope in a plain graph."""
    with tf.Graph().as_default():
        setup = towers.configure_devices(2)
        inputs = (tf.zeros([2 * BATCH, SIZE, SIZE, 3]), tf.zeros([2 * BATCH], tf.int32))
        training = towers.assemble(recipe.ResNetRecipe(model.ResNet(50), BATCH, 100),
                                   lambda: inputs, setup)
        ours = types.SimpleNamespace(
            variables=shapes(tf.global_variables()),
            devices={v.op.name: v.device for v in tf.global_variables()},
            tower_1_conv_devices={op.device for op in tf.get_default_graph().get_operations()
                                  if op.type == 'Conv2D' and op.name.startswith('tower_1/')},
            setup=setup, losses=[t.losses for t in training.replicated.towers])
    with tf.Graph().as_default():
        with slim.arg_scope(slim.nets.resnet_v1.resnet_arg_scope()):
            slim.nets.resnet_v1.resnet_v1_50(tf.zeros([1, 224, 224, 3]), 1000)
        ours.slims = shapes(tf.global_variables())
    return ours


def test_network_variables_have_the_names_and_shapes_tf_slims_resnet_v1_50_gives(on_towers):
    network = {name: shape for name, shape in on_towers.variables.items()
               if name.startswith('resnet_v1_50/') and not name.endswith('/Momentum')}
    assert network == on_towers.slims
    assert network['resnet_v1_50/conv1/weights'] == [7, 7, 3, 64]
    assert network['resnet_v1_50/logits/weights'] == [1, 1, 2048, 1000]


def test_checkpoint_holds_only_the_network_the_momentum_and_the_global_step(on_towers):
    others = {name for name in on_towers.variables
              if name not in on_towers.slims and not name.endswith('/Momentum')}
    assert others == {'global_step'}


def device(name):
    return tf.DeviceSpec.from_string(name).to_string()


def test_variables_live_on_the_parameter_device_and_tower_1_computes_on_its_own(on_towers):
    assert {device(d) for d in on_towers.devices.values()} == {
        device(on_towers.setup.ps_device)}
    assert {device(d) for d in on_towers.tower_1_conv_devices} == {
        device(on_towers.setup.tower_devices[1])}


def test_each_tower_minimises_its_cross_entropy_and_the_weight_decay(on_towers):
    for index, losses in enumerate(on_towers.losses):
        assert sorted(loss.op.name for loss in losses) == [
            'tower_%d/cross_entropy/value' % index, 'tower_%d/weight_decay' % index]


def test_cross_entropy_is_against_labels_smoothed_over_the_classes():
    logits = np.array([[2.0, 0.5, -1.0, 0.0], [0.0, 1.0, 3.0, -2.0]], np.float32)
    labels = np.array([0, 2])
    loss = model.classification_loss(tf.constant(logits), tf.constant(labels), 0.1)
    targets = np.full([2, 4], 0.1 / 4) + 0.9 * np.eye(4)[labels]
    log_softmax = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    with tf.Session() as sess:
        assert sess.run(loss) == pytest.approx(-(targets * log_softmax).sum(axis=1).mean(),
                                               rel=1e-6)
    assert tf.get_collection(model.LOSSES) == [loss]


def test_weight_decay_covers_the_kernels_only():
    images = tf.random.normal([2, 8, 8, 3])
    with tf.variable_scope('net'):
        features = slim.conv2d(images, 4, [3, 3], normalizer_fn=slim.batch_norm,
                               normalizer_params={'scale': True}, scope='conv')
        slim.fully_connected(slim.flatten(features), 5, scope='dense')
    tf.get_variable('elsewhere/weights', [3])
    kernels = model.kernels('net')
    assert sorted(v.op.name for v in kernels) == ['net/conv/weights', 'net/dense/weights']
    loss = model.kernel_l2_loss(kernels, 1e-4)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run(kernels)
        assert sess.run(loss) == pytest.approx(
            1e-4 * sum((v.astype(np.float64) ** 2).sum() / 2 for v in values), rel=1e-5)


def test_the_depth_of_a_checkpoint_is_read_from_its_logits():
    assert model.depth_of_checkpoint(['global_step', 'resnet_v1_101/logits/weights']) == 101
    assert model.depth_of_checkpoint(['conv1/weights']) is None

