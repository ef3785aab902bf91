"""Specification of precise batch-norm statistics: the layers found in the graph of any
framework, population statistics re-estimated from training batches, the training checkpoint
left as it is, and which evaluation script re-estimates them by default."""
import os
import runpy

import numpy as np
import pytest

import bn_net
import towers
from towers import TowersError, evaluation
from towers.cluster.roles import SingleProcess
from towers.compat import keras, slim, tf, tf_layers
from towers.evaluation import batch_norm, precise_bn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAPE = [bn_net.IMAGE_SIZE, bn_net.IMAGE_SIZE, bn_net.CHANNELS]
WRONG = {'bn1/moving_mean': np.full(bn_net.FILTERS, 7.0),
         'bn1/moving_variance': np.full(bn_net.FILTERS, 0.01),
         'bn2/moving_mean': np.full(bn_net.FILTERS, -3.0),
         'bn2/moving_variance': np.full(bn_net.FILTERS, 50.0)}


def training_batches(count, size=4):
    return [bn_net.batch(size, seed=10 + index)[0] for index in range(count)]


def save_checkpoint(path, build_fn=bn_net.evaluated, values=None):
    """Writes a checkpoint of `build_fn`'s network at its initial values, but for `values`
    (variable name -> array). Returns (its prefix, every variable's value by name)."""
    with tf.Graph().as_default():
        build_fn(tf.zeros([1] + SHAPE))
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            variables = {v.op.name: v for v in tf.global_variables()}
            for name, value in (values or {}).items():
                variables[name].load(value, session)
            return (tf.train.Saver().save(session, path),
                    {name: session.run(v) for name, v in variables.items()})


def population(values, bessel):
    """The mean and variance over all rows of the list of [n, channels] `values`."""
    stacked = np.concatenate([np.reshape(v, [-1, np.shape(v)[-1]]) for v in values])
    return stacked.mean(axis=0), stacked.var(axis=0, ddof=1 if bessel else 0)


def test_deliberately_wrong_moving_statistics_evaluate_as_the_population_statistics(tmp_path):
    checkpoint, weights = save_checkpoint(str(tmp_path / 'wrong' / 'model.ckpt'), values=WRONG)
    batches = training_batches(5)
    inputs = bn_net.forward_in_training_mode(weights, batches)
    true_statistics = {}
    for layer in ('bn1', 'bn2'):
        mean, variance = population(inputs[layer], bessel=True)  # tf-slim's fused kernel
        true_statistics.update({layer + '/moving_mean': mean, layer + '/moving_variance': variance})
    true_checkpoint, _ = save_checkpoint(str(tmp_path / 'true' / 'model.ckpt'),
                                         values=true_statistics)
    test_images = bn_net.batch(6, seed=99)[0]
    precise = evaluation.PreciseBN(lambda: iter(batches), 5)

    logits = evaluation.predict(bn_net.evaluated, checkpoint, test_images, 4,
                                statistics=precise)['logits']
    expected = evaluation.predict(bn_net.evaluated, true_checkpoint, test_images, 4)['logits']
    moving = evaluation.predict(bn_net.evaluated, checkpoint, test_images, 4)['logits']
    assert np.abs(moving - expected).max() > 0.1
    np.testing.assert_allclose(logits, expected, rtol=0, atol=1e-5)
    for name, value in true_statistics.items():
        np.testing.assert_allclose(precise.estimated[name], value, rtol=1e-5, atol=1e-6)


def _slim(images, fused):
    return slim.batch_norm(images, is_training=False, fused=fused, scope='bn')


def _fused_batch_norm(images):
    with tf.variable_scope('bn'):
        mean = tf.get_variable('moving_mean', [bn_net.CHANNELS], trainable=False,
                               initializer=tf.zeros_initializer())
        variance = tf.get_variable('moving_variance', [bn_net.CHANNELS], trainable=False,
                                   initializer=tf.ones_initializer())
    return tf.nn.fused_batch_norm(images, tf.ones([bn_net.CHANNELS]),
                                  tf.zeros([bn_net.CHANNELS]), mean, variance,
                                  is_training=False)[0]


def _keras_channels_first(images):
    channels_first = tf.transpose(images, [0, 3, 1, 2])
    return keras.layers.BatchNormalization(axis=1, fused=False, name='bn')(channels_first,
                                                                         training=False)


# (build function of the images in inference mode, whether its moving variance has Bessel's
# correction): fused kernels have it, tf.nn.batch_normalization's callers do not.
FRAMEWORKS = {
    'tf-slim': (lambda images: _slim(images, None), True),
    'tf-slim, fused=False': (lambda images: _slim(images, False), False),
    'tf.layers': (lambda images: tf_layers.normalization.batch_normalization(
        images, training=False, name='bn'), True),
    'tf_keras': (lambda images: keras.layers.BatchNormalization(name='bn')(
        images, training=False), True),
    'tf_keras, channels first, fused=False': (_keras_channels_first, False),
    'tf.nn.fused_batch_norm': (_fused_batch_norm, True),
}


@pytest.mark.parametrize('framework', sorted(FRAMEWORKS))
def test_batch_norm_layers_are_found_without_the_model_declaring_them(framework, tmp_path):
    build, bessel = FRAMEWORKS[framework]

    def network(images):
        return {'output': build(images)}

    with tf.Graph().as_default() as graph:
        network(tf.zeros([1] + SHAPE))
        layers = batch_norm.find_layers(graph)
    assert [(layer.mean, layer.variance, layer.bessel) for layer in layers] == [
        ('bn/moving_mean', 'bn/moving_variance', bessel)]
    checkpoint, _ = save_checkpoint(str(tmp_path / 'model.ckpt'), network)
    batches = training_batches(3)
    precise = evaluation.PreciseBN(lambda: iter(batches), 3)
    evaluation.predict(network, checkpoint, batches[0], 4, statistics=precise)
    mean, variance = population(batches, bessel)
    np.testing.assert_allclose(precise.estimated['bn/moving_mean'], mean, rtol=1e-5)
    np.testing.assert_allclose(precise.estimated['bn/moving_variance'], variance, rtol=1e-5)


def test_the_training_checkpoint_is_unchanged_byte_for_byte_and_the_precise_one_written_apart(
        tmp_path):
    train_dir = tmp_path / 'train'
    checkpoint, weights = save_checkpoint(str(train_dir / 'model.ckpt-3'), values=WRONG)
    tf.train.update_checkpoint_state(str(train_dir), checkpoint)

    def files():
        return {path.name: path.read_bytes() for path in train_dir.iterdir()}

    before = files()
    precise = evaluation.PreciseBN(lambda: iter(training_batches(2)), 2)
    evaluation.predict(bn_net.evaluated, checkpoint, training_batches(1)[0], 4,
                       statistics=precise)
    with pytest.raises(TowersError, match='the training checkpoint is never rewritten'):
        precise_bn.save_checkpoint(checkpoint, precise.estimated, str(train_dir))
    written = precise_bn.save_checkpoint(checkpoint, precise.estimated,
                                         str(tmp_path / 'precise'))
    assert files() == before
    assert written == str(tmp_path / 'precise' / 'model.ckpt-3')
    assert tf.train.latest_checkpoint(str(tmp_path / 'precise')) == written
    for name, value in weights.items():
        stored = tf.train.load_variable(written, name)
        np.testing.assert_array_equal(stored, precise.estimated.get(name, value).astype(
            value.dtype))


def test_one_and_two_towers_give_the_same_statistics(tmp_path):
    # At learning rate 0 both trainings keep the same weights; their moving averages differ
    # (tower 0 alone updates them: the whole batch on one tower, half of it on two), the
    # re-estimated statistics do not.
    images, labels = bn_net.batch(8)
    moving, estimated = [], []
    for num_towers in (1, 2):
        train_dir = str(tmp_path / ('towers_%d' % num_towers))
        towers.fit(bn_net.BnRecipe(learning_rate=0.0),
                   lambda: (tf.constant(images), tf.constant(labels)),
                   towers.configure_devices(num_towers), SingleProcess(), train_dir, max_steps=2,
                   examples_per_step=8, printer=lambda *line, **flush: None)
        checkpoint = tf.train.latest_checkpoint(train_dir)
        moving.append(tf.train.load_variable(checkpoint, 'bn2/moving_mean'))
        precise = evaluation.PreciseBN(lambda: iter(training_batches(3)), 3)
        evaluation.predict(bn_net.evaluated, checkpoint, images, 4, statistics=precise)
        estimated.append(precise.estimated)
    assert np.abs(moving[0] - moving[1]).max() > 1e-3
    assert sorted(estimated[0]) == sorted(WRONG)
    for name in WRONG:
        np.testing.assert_allclose(estimated[0][name], estimated[1][name], rtol=1e-6)


def test_each_batch_normalised_with_its_own_statistics_is_the_network_as_trained(tmp_path):
    checkpoint, _ = save_checkpoint(str(tmp_path / 'model.ckpt'), values=WRONG)
    images = bn_net.batch(5, seed=3)[0]
    with tf.Graph().as_default():
        logits = bn_net.network(tf.constant(images), is_training=True)
        with tf.Session() as session:
            tf.train.Saver().restore(session, checkpoint)
            expected = session.run(logits)
    got = evaluation.predict(bn_net.evaluated, checkpoint, images, batch_size=5,
                             statistics=evaluation.EACH_BATCH)['logits']
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


def test_a_network_without_batch_norm_has_no_statistics_to_reestimate(tmp_path):
    def dense(images):
        return {'y': slim.fully_connected(tf.reshape(images, [-1, 18]), 2, scope='dense')}

    checkpoint, _ = save_checkpoint(str(tmp_path / 'model.ckpt'), dense)
    precise = evaluation.PreciseBN(lambda: iter(training_batches(1)), 1)
    with pytest.raises(TowersError, match='^the network has no batch-norm layer'):
        evaluation.predict(dense, checkpoint, training_batches(1)[0], 4, statistics=precise)


# The evaluation scripts of networks with batch norm, and their --precise_bn_batches default:
# on for the new workloads, off for SegDecNet (the original's evaluation).
PRECISE_BN_DEFAULTS = {'eval_side_by_side.py': 50, 'eval_imagenet.py': 50, 'eval_segdec.py': 0,
                       # no batch norm: the flag does not apply
                       'eval_fashion_mnist.py': None, 'eval_image_folder.py': None,
                       'cifar10_eval.py': None}


@pytest.mark.parametrize('script', sorted(PRECISE_BN_DEFAULTS))
def test_precise_statistics_are_on_for_the_new_workloads_and_off_for_the_classic_ports(script):
    module = runpy.run_path(os.path.join(ROOT, 'scripts', script))
    parse = module.get('parse_args') or module['_parse_args']
    args = parse([])
    assert getattr(args, 'precise_bn_batches', None) == PRECISE_BN_DEFAULTS[script]
