"""Specification of the Fashion-MNIST model and recipe: the reference network, trained on towers
and by MirroredStrategy as one shared Keras model."""
import numpy as np

import towers
from models import registry
from models.fashion_mnist import model as fashion_mnist
from models.fashion_mnist.recipe import FashionMnistRecipe
from towers.benchmarks import suite
from towers.compat import tf

CONFIG = tf.ConfigProto(device_count={'CPU': 2})


def fixed_batch(rows=4):
    rs = np.random.RandomState(0)
    images = rs.uniform(size=[rows, 28, 28, 1]).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rs.randint(0, 10, rows)]
    return tf.constant(images), tf.constant(labels)


def test_network_is_the_references_three_convolutions_and_two_dense_layers():
    model = fashion_mnist.build_model()
    assert [(layer.name, layer.count_params()) for layer in model.layers if layer.weights] == [
        ('conv1', 3 * 3 * 1 * 32 + 32), ('conv2', 3 * 3 * 32 * 64 + 64),
        ('conv3', 3 * 3 * 64 * 64 + 64), ('dense1', 3 * 3 * 64 * 64 + 64),
        ('dense2', 64 * 10 + 10)]
    assert model.output.shape.as_list() == [None, 10]


def test_loss_is_the_mean_categorical_cross_entropy_added_to_the_losses_collection():
    labels = tf.constant([[0.0, 1.0], [1.0, 0.0]])
    probabilities = tf.constant([[0.25, 0.75], [0.5, 0.5]])
    loss = fashion_mnist.loss(labels, probabilities)
    assert tf.get_collection(tf.GraphKeys.LOSSES) == [loss]
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(loss), -(np.log(0.75) + np.log(0.5)) / 2, rtol=1e-6)


def test_recipe_on_two_towers_trains_one_set_of_variables_with_adam():
    setup = towers.configure_devices(2)
    training = towers.assemble(FashionMnistRecipe(), fixed_batch, setup)
    assert sorted(v.op.name for v in tf.trainable_variables()) == sorted(
        '%s/%s' % (layer, kind) for layer in ('conv1', 'conv2', 'conv3', 'dense1', 'dense2')
        for kind in ('kernel', 'bias'))
    assert any(v.op.name == 'conv1/kernel/Adam' for v in tf.global_variables())
    with tf.Session(config=setup.config) as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run([training.losses['total'], training.train_ops['total']])[0]
                  for _ in range(5)]
    assert losses[-1] < losses[0]


def test_mirrored_strategy_trains_the_shared_keras_model_in_every_replica():
    entry = registry.get('fashion_mnist')
    setup = towers.configure_devices(2)
    step = suite.mirrored_step(entry, fixed_batch(), setup, batch_size=2)
    variables = tf.trainable_variables()
    assert len(variables) == 10
    with tf.Session(config=setup.config) as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(variables[0].values[0])
        sess.run(step)
        replicas = [sess.run(copy) for copy in variables[0].values]
    assert len(replicas) == 2
    np.testing.assert_allclose(replicas[1], replicas[0], rtol=1e-6)
    assert not np.allclose(replicas[0], before)
