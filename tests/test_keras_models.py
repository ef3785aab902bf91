"""Specification of Keras models in towers: one model shared by object, placed, updated and
regularized as the towers treat slim models."""
import numpy as np
import pytest

import towers
from towers.compat import keras, tf
from towers.replication.keras_models import SharedModel, call_in_tower
from towers.replication.precision import mixed_precision_tower

PS_DEVICE = '/cpu:0'
TOWER_DEVICES = ['/cpu:1', '/cpu:2']
SESSION_CONFIG = tf.ConfigProto(device_count={'CPU': 4})
WEIGHT_DECAY = 0.01


def small_convnet():
    """[B, 6, 6, 2] -> [B, 3] probabilities; seeded, with one L2-regularized kernel."""
    images = keras.Input([6, 6, 2])
    hidden = keras.layers.Conv2D(4, 3, activation='relu', name='conv',
                                 kernel_initializer=keras.initializers.RandomNormal(seed=1),
                                 kernel_regularizer=keras.regularizers.l2(WEIGHT_DECAY))(images)
    hidden = keras.layers.Flatten()(hidden)
    probabilities = keras.layers.Dense(
        3, activation='softmax', name='dense',
        kernel_initializer=keras.initializers.RandomNormal(seed=2))(hidden)
    return keras.Model(images, probabilities)


def classifier_tower(shared):
    def tower_fn(shard):
        images, labels = shard
        probabilities = shared(images)
        tf.losses.add_loss(tf.reduce_mean(keras.losses.categorical_crossentropy(labels,
                                                                                probabilities)))
        return {'probabilities': probabilities}
    return tower_fn


def image_batch(rows=6):
    rs = np.random.RandomState(0)
    images = rs.standard_normal([rows, 6, 6, 2]).astype(np.float32)
    labels = np.eye(3, dtype=np.float32)[rs.randint(0, 3, rows)]
    return tf.constant(images), tf.constant(labels)


def build(devices, build_fn=small_convnet):
    shared = SharedModel(build_fn)
    replicated = towers.build_towers(classifier_tower(shared), image_batch(), devices,
                                     tf.train.GradientDescentOptimizer(0.1), ps_device=PS_DEVICE)
    return shared, replicated


def averaged_gradients(num_towers):
    """{variable name: averaged gradient} of `num_towers` towers on the same batch."""
    with tf.Graph().as_default():
        _, replicated = build(['/cpu:%d' % i for i in range(num_towers)])
        grads = {v.op.name: g for g, v in replicated.grads['total']}
        with tf.Session(config=SESSION_CONFIG) as sess:
            sess.run(tf.global_variables_initializer())
            return sess.run(grads)


def test_towers_of_a_keras_model_average_to_one_towers_gradient_on_the_whole_batch():
    three_towers = averaged_gradients(3)
    one_tower = averaged_gradients(1)
    assert sorted(three_towers) == ['conv/bias', 'conv/kernel', 'dense/bias', 'dense/kernel']
    for name, gradient in one_tower.items():
        np.testing.assert_allclose(three_towers[name], gradient, rtol=1e-5, atol=1e-7,
                                   err_msg=name)


def test_towers_share_the_models_one_set_of_variables_named_as_outside_any_tower():
    shared, _ = build(TOWER_DEVICES)
    assert sorted(v.op.name for v in tf.global_variables()) == [
        'conv/bias', 'conv/kernel', 'dense/bias', 'dense/kernel']
    assert set(tf.global_variables()) == set(shared.model.weights)


def test_variables_live_on_the_parameter_device_and_each_tower_computes_on_its_own():
    build(TOWER_DEVICES)
    graph = tf.get_default_graph()
    variable_ops = [op for op in graph.get_operations() if op.type == 'VarHandleOp']
    assert {tf.DeviceSpec.from_string(op.device) for op in variable_ops} == {
        tf.DeviceSpec.from_string(PS_DEVICE)}
    convs = [op for op in graph.get_operations()
             if op.type == 'Conv2D' and op.name.startswith('tower_')]
    assert sorted((op.name.split('/')[0], tf.DeviceSpec.from_string(op.device))
                  for op in convs) == [
        ('tower_0', tf.DeviceSpec.from_string('/cpu:1')),
        ('tower_1', tf.DeviceSpec.from_string('/cpu:2'))]


def test_regularization_losses_are_made_once_and_counted_by_every_tower():
    _, replicated = build(TOWER_DEVICES)
    regularization, = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert all(tower.losses[-1] is regularization for tower in replicated.towers)
    kernel, = [v for v in tf.global_variables() if v.op.name == 'conv/kernel']
    with tf.Session(config=SESSION_CONFIG) as sess:
        sess.run(tf.global_variables_initializer())
        value, kernel_value = sess.run([regularization, kernel])
    np.testing.assert_allclose(value, WEIGHT_DECAY * np.sum(kernel_value ** 2), rtol=1e-5)


def test_losses_that_depend_on_the_inputs_go_to_each_towers_own_losses():
    def activity_regularized():
        images = keras.Input([6, 6, 2])
        flat = keras.layers.Flatten()(images)
        return keras.Model(images, keras.layers.Dense(
            3, activation='softmax', activity_regularizer=keras.regularizers.l1(0.1))(flat))

    _, replicated = build(TOWER_DEVICES, activity_regularized)
    for tower in replicated.towers:
        assert len(tower.losses) == 2
        assert all(loss.op.name.startswith(tower.name_scope) for loss in tower.losses)


BN_MOMENTUM = 0.5


def batch_norm_net():
    features = keras.Input([2])
    return keras.Model(features, keras.layers.BatchNormalization(momentum=BN_MOMENTUM,
                                                                 name='bn')(features))


def test_batch_norm_moving_mean_follows_tower_zero_only():
    # Tower 0's rows have mean 1, tower 1's mean 5: the update uses tower 0's alone, as for slim.
    rows = np.concatenate([np.full([4, 2], 1.0), np.full([4, 2], 5.0)]).astype(np.float32)
    rows += np.tile([[-0.5], [0.5], [-0.5], [0.5]], [2, 2]).astype(np.float32)
    shared = SharedModel(batch_norm_net)

    def tower_fn(shard):
        tf.losses.add_loss(tf.reduce_mean(tf.square(shared(shard) - 1.0)))

    replicated = towers.build_towers(tower_fn, tf.constant(rows), TOWER_DEVICES,
                                     tf.train.GradientDescentOptimizer(0.1), ps_device=PS_DEVICE)
    assert len(replicated.update_ops) == 2
    assert all(op.name.startswith('tower_0/') for op in replicated.update_ops)
    assert len(replicated.towers[1].update_ops) == 2
    moving_mean, = [v for v in tf.global_variables() if v.op.name == 'bn/moving_mean']
    with tf.Session(config=SESSION_CONFIG) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(replicated.train_op())
        mean = sess.run(moving_mean)
    np.testing.assert_allclose(mean, (1 - BN_MOMENTUM) * rows[:4].mean(axis=0), rtol=1e-5)


def test_layers_frozen_after_they_were_built_are_neither_trained_nor_an_error():
    def frozen_conv():
        model = small_convnet()
        model.get_layer('conv').trainable = False
        return model

    _, replicated = build(TOWER_DEVICES, frozen_conv)
    assert sorted(v.op.name for v in tf.trainable_variables()) == ['dense/bias', 'dense/kernel']
    variables = {v.op.name: v for v in tf.global_variables()}
    with tf.Session(config=SESSION_CONFIG) as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run(variables)
        sess.run(replicated.train_op())
        after = sess.run(variables)
    changed = sorted(n for n in before if not np.array_equal(before[n], after[n]))
    assert changed == ['dense/bias', 'dense/kernel']


def test_a_model_built_before_the_towers_computes_in_each_and_regularizes_once():
    with tf.device(PS_DEVICE):
        model = small_convnet()
    for index, device in enumerate(TOWER_DEVICES):
        with tf.device(towers.assign_to_device(device, PS_DEVICE)), \
                tf.name_scope('tower_%d' % index):
            probabilities = call_in_tower(model, image_batch()[0], training=False)
        assert tf.DeviceSpec.from_string(probabilities.device) == tf.DeviceSpec.from_string(
            device)
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 1


def test_shared_model_makes_a_model_of_its_own_in_each_new_graph():
    shared = SharedModel(small_convnet)
    shared(image_batch()[0])
    first = shared.model
    with tf.Graph().as_default() as graph:
        shared(image_batch()[0])
        assert shared.model is not first
        assert all(v.graph is graph for v in shared.model.weights)


def test_mixed_precision_of_a_keras_model_is_refused_naming_why():
    # Keras layers cast their input to their own dtype policy (float32), so the towers would
    # compute in float32 under a mixed-precision flag; that is refused, not silently done.
    with tf.Graph().as_default():
        tower_fn = mixed_precision_tower(classifier_tower(SharedModel(small_convnet)))
        with pytest.raises(towers.TowersError, match='computed no loss in float16.*Keras'):
            towers.build_towers(tower_fn, image_batch(), ['/cpu:0'],
                                tf.train.GradientDescentOptimizer(0.1), ps_device=PS_DEVICE)
