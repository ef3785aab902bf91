"""Specification of the frozen-VGG16 transfer model in towers: what trains, where it lives, the
towers' equivalence, pretrained weights from a Keras HDF5 file, and the training's record."""
import logging

import numpy as np
import pytest

import towers
from models.image_folder import model as vgg16_transfer
from models.image_folder.recipe import Vgg16TransferRecipe
from towers.cluster.roles import SingleProcess
from towers.compat import keras, tf

SIZE = 32
CLASSES = 3
PS_DEVICE = '/cpu:0'
SESSION_CONFIG = tf.ConfigProto(device_count={'CPU': 3})


def image_batch(rows=4, seed=0):
    rng = np.random.RandomState(seed)
    return (tf.constant(rng.uniform(size=[rows, SIZE, SIZE, 3]).astype(np.float32)),
            tf.constant(rng.randint(0, CLASSES, rows).astype(np.int32)))


def build(devices, network=None):
    network = network or vgg16_transfer.Vgg16Transfer(CLASSES, SIZE)
    return towers.build_towers(network.tower_fn, image_batch(), devices,
                               tf.train.AdamOptimizer(0.001), ps_device=PS_DEVICE)


def averaged_gradients(num_towers):
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        replicated = build(['/cpu:%d' % (i + 1) for i in range(num_towers)])
        grads = {v.op.name: g for g, v in replicated.grads['total']}
        with tf.Session(config=SESSION_CONFIG) as sess:
            sess.run(tf.global_variables_initializer())
            return sess.run(grads)


def save_keras_weights(path, build_fn):
    """Writes the weights of `build_fn()`'s model with Keras' own HDF5 writer; returns them."""
    with tf.Graph().as_default():
        model = build_fn()
        model.save_weights(path)
        return {w.name.split(':')[0]: value
                for w, value in zip(model.weights, model.get_weights())}


def vgg16_with_imagenet_classifier():
    """VGG16 with a 1000-class layer named as the transfer model's classifier."""
    base = keras.applications.VGG16(include_top=False, weights=None,
                                    input_shape=(SIZE, SIZE, 3))
    flat = keras.layers.Flatten()(base.output)
    return keras.Model(base.input, keras.layers.Dense(1000, name='predictions')(flat))


TRAINED = ['block5_conv1/bias', 'block5_conv1/kernel', 'block5_conv2/bias',
           'block5_conv2/kernel', 'block5_conv3/bias', 'block5_conv3/kernel',
           'predictions/bias', 'predictions/kernel']


def test_only_vgg16s_last_four_layers_and_the_classifier_get_gradients():
    replicated = build(['/cpu:1', '/cpu:2'])
    assert sorted(v.op.name for _, v in replicated.grads['total']) == TRAINED
    assert len(tf.global_variables()) == 28


def test_two_towers_average_to_one_towers_gradient_on_the_whole_batch():
    two, one = averaged_gradients(2), averaged_gradients(1)
    assert sorted(one) == TRAINED
    for name, gradient in one.items():
        # Float32 sums in another order: elements near cancellation are held to the scale of
        # their variable's gradient.
        np.testing.assert_allclose(two[name], gradient, rtol=1e-5,
                                   atol=1e-5 * np.abs(gradient).max(), err_msg=name)


def test_variables_live_on_the_parameter_device_and_convolutions_in_each_tower():
    build(['/cpu:1', '/cpu:2'])
    graph = tf.get_default_graph()
    assert {tf.DeviceSpec.from_string(op.device) for op in graph.get_operations()
            if op.type == 'VarHandleOp'} == {tf.DeviceSpec.from_string(PS_DEVICE)}
    first_convs = {op.name.split('/')[0]: tf.DeviceSpec.from_string(op.device)
                   for op in graph.get_operations()
                   if op.type == 'Conv2D' and op.name.startswith('tower_')
                   and 'block1_conv1' in op.name}
    assert first_convs == {'tower_0': tf.DeviceSpec.from_string('/cpu:1'),
                           'tower_1': tf.DeviceSpec.from_string('/cpu:2')}


def test_images_enter_vgg16_as_bgr_less_imagenet_mean_on_0_to_255():
    pixel = tf.constant([[[[1.0, 0.5, 0.0]]]])
    with tf.Session() as sess:
        value = sess.run(vgg16_transfer.caffe_preprocess(pixel))
    np.testing.assert_allclose(value[0, 0, 0], [0 - 103.939, 127.5 - 116.779, 255 - 123.68],
                               rtol=1e-6)


def test_an_image_size_below_32_is_an_error():
    with pytest.raises(towers.TowersError, match='--image_size 16 is too small for VGG16'):
        vgg16_transfer.Vgg16Transfer(CLASSES, 16)


def test_weights_are_read_for_vgg16s_layers_by_name_and_the_files_classifier_ignored(tmp_path):
    path = str(tmp_path / 'vgg16.h5')
    stored = save_keras_weights(path, vgg16_with_imagenet_classifier)
    model = vgg16_transfer.vgg16_transfer(CLASSES, SIZE)
    values = vgg16_transfer.read_weights(path, model)
    assert len(values) == 26
    for variable, value in values.items():
        np.testing.assert_array_equal(value, stored[variable.op.name])
    assert 'predictions/kernel' not in {variable.op.name for variable in values}


def test_a_weights_file_lacking_some_vgg16_layers_logs_which(tmp_path, caplog):
    def first_block():
        images = keras.Input([SIZE, SIZE, 3])
        return keras.Model(images, keras.layers.Conv2D(64, 3, name='block1_conv1')(images))

    path = str(tmp_path / 'block1.h5')
    save_keras_weights(path, first_block)
    with caplog.at_level(logging.WARNING):
        values = vgg16_transfer.read_weights(path, vgg16_transfer.vgg16_transfer(CLASSES, SIZE))
    assert [variable.op.name for variable in values] == ['block1_conv1/kernel',
                                                         'block1_conv1/bias']
    assert 'lacks VGG16 layer(s) block1_conv2, block2_conv1' in caplog.text


def test_a_weights_file_with_other_shapes_is_an_error_naming_the_layer(tmp_path):
    def narrow_first_layer():
        images = keras.Input([SIZE, SIZE, 3])
        return keras.Model(images, keras.layers.Conv2D(8, 3, name='block1_conv1')(images))

    path = str(tmp_path / 'narrow.h5')
    save_keras_weights(path, narrow_first_layer)
    with pytest.raises(towers.TowersError, match='--weights %s: layer block1_conv1 holds weights '
                       'of shapes \\[\\(3, 3, 3, 8\\), \\(8,\\)\\]; VGG16 expects '
                       '\\[\\(3, 3, 3, 64\\), \\(64,\\)\\]' % path):
        vgg16_transfer.read_weights(path, vgg16_transfer.vgg16_transfer(CLASSES, SIZE))


def test_a_weights_file_without_vgg16_layers_is_an_error(tmp_path):
    def other_model():
        images = keras.Input([4])
        return keras.Model(images, keras.layers.Dense(2, name='dense')(images))

    path = str(tmp_path / 'other.h5')
    save_keras_weights(path, other_model)
    with pytest.raises(towers.TowersError, match="holds none of VGG16's layers"):
        vgg16_transfer.read_weights(path, vgg16_transfer.vgg16_transfer(CLASSES, SIZE))


def test_a_weights_file_that_is_not_hdf5_is_an_error_naming_it(tmp_path):
    path = tmp_path / 'weights.h5'
    path.write_text('not hdf5')
    with pytest.raises(towers.TowersError, match='cannot read --weights %s' % path):
        vgg16_transfer.read_weights(str(path), vgg16_transfer.vgg16_transfer(CLASSES, SIZE))


def test_training_starts_from_the_weights_file_and_resuming_keeps_the_checkpoint(tmp_path):
    path = str(tmp_path / 'vgg16.h5')
    stored = save_keras_weights(path, vgg16_with_imagenet_classifier)
    train_dir = str(tmp_path / 'train')

    def fit(max_steps, weights):
        network = vgg16_transfer.Vgg16Transfer(CLASSES, SIZE, weights)
        towers.fit(Vgg16TransferRecipe(network), image_batch, towers.configure_devices(1),
                   SingleProcess(), train_dir, max_steps, examples_per_step=4,
                   printer=lambda *args, **kwargs: None)
        return tf.train.load_checkpoint(tf.train.latest_checkpoint(train_dir))

    after_one = fit(1, path)
    # Frozen layers keep the file's values; block 5 starts from them and trains.
    np.testing.assert_array_equal(after_one.get_tensor('block1_conv1/kernel'),
                                  stored['block1_conv1/kernel'])
    first_step = stored['block5_conv1/kernel'] - after_one.get_tensor('block5_conv1/kernel')
    assert 0 < np.abs(first_step).max() <= 0.0011
    after_two = fit(2, None)
    np.testing.assert_array_equal(after_two.get_tensor('block1_conv1/kernel'),
                                  stored['block1_conv1/kernel'])


def test_a_training_directory_records_classes_and_image_size_for_the_evaluation(tmp_path):
    vgg16_transfer.record_spec(str(tmp_path), ['CNV', 'DME'], 64)
    vgg16_transfer.record_spec(str(tmp_path), ['CNV', 'DME'], 64)
    assert vgg16_transfer.load_spec(str(tmp_path)) == (['CNV', 'DME'], 64)


def test_resuming_a_training_of_other_classes_is_an_error(tmp_path):
    vgg16_transfer.record_spec(str(tmp_path), ['CNV', 'DME'], 64)
    with pytest.raises(towers.TowersError, match="holds a training of classes \\['CNV', 'DME'\\] "
                       "at image size 64; this run has classes \\['DME', 'CNV'\\]"):
        vgg16_transfer.record_spec(str(tmp_path), ['DME', 'CNV'], 64)


def test_evaluating_a_directory_without_a_training_record_is_an_error(tmp_path):
    with pytest.raises(towers.TowersError, match='--train_dir %s has no model.json' % tmp_path):
        vgg16_transfer.load_spec(str(tmp_path))
