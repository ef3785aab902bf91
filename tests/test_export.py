"""Specification of the export (`towers.export`, `scripts/export_saved_model.py`): each
workload's checkpoint, trained two steps, becomes a SavedModel that a program of plain
TensorFlow 2 loads in a process of its own (tests/eager_client.py: eager, no `towers`) and that
serves what the project's own graph-mode evaluation of that checkpoint computes; the Keras
models' weights and TF2 checkpoints load into plain tf_keras; bad input is one line."""
import glob
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import towers
from models.cifar10 import model as cifar10
from models.cifar10.recipe import Cifar10Recipe
from models.datasets.cifar10 import reader as cifar10_input, synthetic as cifar10_synthetic
from models.datasets.fashion_mnist import reader as fashion_mnist_input
from models.datasets.image_folder import reader as folder_input, synthetic as folder_synthetic
from models.datasets.imagenet import (reader as imagenet_input, sources as imagenet_sources,
                                      synthetic as imagenet_synthetic)
from models.fashion_mnist import model as fashion_mnist
from models.fashion_mnist.recipe import FashionMnistRecipe
from models.image_folder import model as vgg16_transfer
from models.image_folder.recipe import Vgg16TransferRecipe
from models.imagenet import model as resnet
from models.imagenet.recipe import ResNetRecipe
from models.segdec import model as segdec
from models.segdec.recipe import SegDecRecipe
from models.side_by_side import model as segmentation, recipe as segmentation_recipe
from models import registry
from towers import cli, evaluation, export
from towers.benchmarks.measure import in_memory_batch
from towers.cluster.roles import SingleProcess
from towers.compat import tf
from towers.training import side_by_side

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLIENT = os.path.join(ROOT, 'tests', 'eager_client.py')
# The largest deviation allowed, relative to the largest value of the output.
TOLERANCE = 1e-5
STEPS = 2
FOLDER_CLASSES = ['CNV', 'DME', 'DRUSEN', 'NORMAL']
FOLDER_SIZE, RESNET_SIZE, SEGDEC_SIZE, SIDE_BY_SIDE_SIZE = 32, 32, 128, 32
SIDE_BY_SIDE_MODELS = ('linknet', 'fpn')


def _script():
    """scripts/export_saved_model.py as a module, its `main` run in this process."""
    spec = importlib.util.spec_from_file_location(
        'export_saved_model', os.path.join(ROOT, 'scripts', 'export_saved_model.py'))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run_script(capsys, *args):
    """(exit status, stdout, stderr) of the export script run with `args`."""
    with pytest.raises(SystemExit) as exit_info:
        cli.run(_script().main, list(args))
    captured = capsys.readouterr()
    return exit_info.value.code, captured.out, captured.err


def _random(name, shape, maximum=1.0, dtype=tf.float32):
    return (name, shape, dtype, tf.random_uniform_initializer(0, maximum))


def _fit(recipe, batch, train_dir, objective=None, steps=STEPS):
    """The newest checkpoint of `recipe` trained `steps` steps on the in-memory `batch`."""
    towers.fit(recipe, lambda: in_memory_batch(*batch), towers.configure_devices(1),
               SingleProcess(), train_dir, steps, examples_per_step=1, objective=objective,
               printer=lambda *args, **kwargs: None)
    return tf.train.latest_checkpoint(train_dir)


def _uint8_images(shape, seed):
    return np.random.RandomState(seed).randint(0, 256, shape).astype(np.uint8)


def _cifar10(root):
    """CIFAR-10: the evaluation reads the generated test file (central crops, moving averages)."""
    batches_dir = os.path.join(root, 'data')
    cifar10_synthetic.generate(batches_dir, records_per_file=6)
    checkpoint = _fit(Cifar10Recipe(), [_random('images', [2, 24, 24, 3]),
                                        _random('labels', [2], 10, tf.int32)],
                      os.path.join(root, 'train'))

    def network():
        images, labels = cifar10_input.inputs(True, batches_dir, 6)
        logits = cifar10.evaluation(images, labels)[0]
        return {'logits': logits, 'probabilities': tf.nn.softmax(logits)}

    with evaluation.Restored(network, checkpoint, var_list=cifar10.variables_to_restore) as net:
        expected = net.run()
    records = np.fromfile(os.path.join(batches_dir, 'test_batch.bin'), np.uint8)
    images = records.reshape([-1, cifar10_input.RECORD_BYTES])[:, 1:].reshape(
        [-1, 3, 32, 32]).transpose([0, 2, 3, 1])
    return checkpoint, {}, {'images': images}, expected


def _fashion_mnist(root):
    checkpoint = _fit(FashionMnistRecipe(), [_random('images', [2, 28, 28, 1]),
                                             _random('labels', [2, 10])],
                      os.path.join(root, 'train'))
    images = _uint8_images([5, 28, 28], 0)
    expected = evaluation.predict(
        lambda batch: {'probabilities': fashion_mnist.build_model()(
            fashion_mnist_input.scale_images(batch), training=False)}, checkpoint, images, 4)
    return checkpoint, {}, {'images': images}, expected


def _image_folder(root):
    """VGG16 transfer at 32x32; the evaluation decodes and resizes 40x40 test JPEGs."""
    train_dir, data_dir = os.path.join(root, 'train'), os.path.join(root, 'data')
    vgg16_transfer.record_spec(train_dir, FOLDER_CLASSES, FOLDER_SIZE)
    checkpoint = _fit(Vgg16TransferRecipe(vgg16_transfer.Vgg16Transfer(4, FOLDER_SIZE)),
                      [_random('images', [2, FOLDER_SIZE, FOLDER_SIZE, 3]),
                       _random('labels', [2], 4, tf.int32)], train_dir)
    folder_synthetic.write_dataset(data_dir, train_per_class=1, test_per_class=1, size=40)
    paths = folder_input.list_split(data_dir, 'test', FOLDER_CLASSES).paths
    network = vgg16_transfer.Vgg16Transfer(4, FOLDER_SIZE)
    expected = evaluation.predict(
        lambda batch: {'probabilities': network(folder_input.evaluation_input(
            batch, FOLDER_SIZE), training=False)},
        checkpoint, np.array([path.encode() for path in paths]), 4)
    return checkpoint, {}, {'jpegs': paths}, expected


def _imagenet(root):
    """ResNet-50 on 32x32 crops; the evaluation reads the generated validation shards."""
    data_dir = os.path.join(root, 'data')
    imagenet_synthetic.generate(data_dir, train_per_class=1, validation_per_class=1)
    # The moving statistics of an untrained ResNet would let 50 layers' activations overflow:
    # here they are the last training batch's, of the generated images themselves.
    train_dir = os.path.join(root, 'train')
    towers.fit(ResNetRecipe(resnet.ResNet(50, batch_norm_decay=0.0), 8, 16),
               lambda: imagenet_input.training_input(
                   imagenet_sources.Shards(data_dir, imagenet_sources.TRAIN), 8, RESNET_SIZE),
               towers.configure_devices(1), SingleProcess(), train_dir, STEPS,
               examples_per_step=8, printer=lambda *args, **kwargs: None)
    checkpoint = tf.train.latest_checkpoint(train_dir)
    source = imagenet_sources.Shards(data_dir, imagenet_sources.VALIDATION)
    net = resnet.ResNet(50)

    def network():
        crops, _, _ = imagenet_input.evaluation_input(source, source.num_examples, RESNET_SIZE,
                                                      ten_crop=False)
        logits = net(crops[:, imagenet_input.CENTRE_CROP], is_training=False)
        return {'logits': logits, 'probabilities': tf.nn.softmax(logits)}

    with evaluation.Restored(network, checkpoint) as restored:
        expected = restored.run()
    # The JPEGs in the order the evaluation reads them.
    records = source.records(training=False).batch(source.num_examples)
    with tf.Session() as sess:
        encoded = sess.run(tf.data.make_one_shot_iterator(records).get_next().encoded)
    jpegs = [os.path.join(root, '%d.jpeg' % index) for index in range(len(encoded))]
    for path, data in zip(jpegs, encoded):
        with open(path, 'wb') as f:
            f.write(data)
    return checkpoint, {'image_size': RESNET_SIZE}, {'jpegs': jpegs}, expected


def _segdec(root):
    # Gently (SegDecNet's rate is 0.1), so that the scores stay between 0 and 1.
    checkpoint = _fit(SegDecRecipe(segdec.SegDecNet(), learning_rate=1e-3),
                      [_random('images', [1, SEGDEC_SIZE, SEGDEC_SIZE, 1]),
                       _random('pixel_labels', [1, SEGDEC_SIZE // 8, SEGDEC_SIZE // 8, 1]),
                       _random('labels', [1], 2, tf.int32)], os.path.join(root, 'train'),
                      objective='total')
    images = _uint8_images([3, SEGDEC_SIZE, SEGDEC_SIZE], 1)
    net = segdec.SegDecNet()
    expected = evaluation.predict(
        lambda batch: net(tf.cast(batch[..., None], tf.float32) / 255.0, is_training=False),
        checkpoint, images, 2, names=['score', 'mask'])
    return (checkpoint, {'image_height': SEGDEC_SIZE, 'image_width': SEGDEC_SIZE},
            {'images': images}, expected)


def _side_by_side(root):
    """Two models side by side; the evaluation restores each alone."""
    train_dir = os.path.join(root, 'train')
    size = SIDE_BY_SIDE_SIZE
    side_by_side.fit(segmentation_recipe.side_by_side(SIDE_BY_SIDE_MODELS),
                     lambda: in_memory_batch(_random('images', [1, size, size, 3]),
                                             _random('masks', [1, size, size, 1])),
                     towers.configure_devices(1), train_dir, STEPS, 1,
                     printer=lambda *args, **kwargs: None)
    checkpoint = tf.train.latest_checkpoint(train_dir)
    images = _uint8_images([3, size, size, 3], 2)
    expected = {}
    for name in SIDE_BY_SIDE_MODELS:
        def build(batch, name=name):
            with side_by_side.model_scope(name):
                return segmentation.SegmentationNet(name)(tf.cast(batch, tf.float32) / 255.0,
                                                          is_training=False)
        expected[name + '_mask'] = evaluation.predict(build, checkpoint, images, 2,
                                                      names=['mask'])['mask']
    return checkpoint, {'image_size': size}, {'images': images}, expected


WORKLOADS = {'cifar10': _cifar10, 'fashion_mnist': _fashion_mnist,
             'image_folder': _image_folder, 'imagenet': _imagenet, 'segdec': _segdec,
             'side_by_side': _side_by_side}
KERAS_MODELS = {'fashion_mnist': ('fashion_mnist', 10, 28),
                'image_folder': ('vgg16_transfer', 4, FOLDER_SIZE)}


@pytest.fixture(scope='module')
def exported(tmp_path_factory):
    """Every workload trained, evaluated, exported (the Keras ones with their weights and TF2
    checkpoints), then run by one client process: name -> (expected, served), the client's
    report."""
    root = tmp_path_factory.mktemp('export')
    jobs, expected = [], {}
    for name, workload in WORKLOADS.items():
        folder = str(root / name)
        with tf.Graph().as_default():
            checkpoint, options, images, expected[name] = workload(folder)
        if 'images' in images:
            np.savez(os.path.join(folder, 'images.npz'), images=images.pop('images'))
            images['images'] = os.path.join(folder, 'images.npz')
        keras = {}
        if name in KERAS_MODELS:
            keras = {'keras_out': os.path.join(folder, 'model.weights.h5'),
                     'tf2_checkpoint_dir': os.path.join(folder, 'tf2')}
        export.save(registry.serving(name).serving(checkpoint, **options), checkpoint,
                    os.path.join(folder, 'saved_model'), **keras)
        jobs.append(dict(images, saved_model=os.path.join(folder, 'saved_model'),
                         out=os.path.join(folder, 'served.npz')))
        if keras:
            architecture, classes, size = KERAS_MODELS[name]
            for source, key in (('keras_out', 'weights'), ('tf2_checkpoint_dir',
                                                           'tf2_checkpoint_dir')):
                jobs.append(dict(images, keras=architecture, classes=classes, image_size=size,
                                 out=os.path.join(folder, '%s.npz' % source),
                                 **{key: keras[source]}))
    with open(str(root / 'jobs.json'), 'w') as f:
        json.dump(jobs, f)
    client = subprocess.run([sys.executable, CLIENT, str(root / 'jobs.json')],
                            capture_output=True, text=True, timeout=600)
    assert client.returncode == 0, client.stderr
    return {name: (expected[name], dict(np.load(str(root / name / 'served.npz'))))
            for name in WORKLOADS}, json.loads(client.stdout.strip().splitlines()[-1]), root


def relative_deviation(served, expected):
    """The largest difference, relative to the largest magnitude of `expected` (or absolute,
    where `expected` is all zeros)."""
    return float(np.max(np.abs(served - expected)) / (np.max(np.abs(expected)) or 1.0))


def log_probabilities(probabilities):
    """Where a softmax saturates (an untrained VGG16 gives 1 - 1e-9 and 1e-15), its logarithm
    still shows each value to its float precision."""
    return np.log(np.maximum(probabilities, np.finfo(np.float32).tiny))


def assert_serves(served, expected):
    for name, values in expected.items():
        assert served[name].shape == values.shape, name
        # Probabilities below, as log-probabilities: where the logits reach 1e4, rounding them
        # (1e-6 relative) moves a near tie's probability by percents.
        if name != 'probabilities':
            assert relative_deviation(served[name], values) <= TOLERANCE, name
    if 'probabilities' in expected:
        served_log, expected_log = (log_probabilities(outputs['probabilities'])
                                    for outputs in (served, expected))
        # A log-probability is a logit less the log-sum-exp of all: its error is at most twice
        # the logits' largest, and untrained ResNet logits (moving statistics still at their
        # start) reach 1e4.
        scale = max(np.max(np.abs(expected_log)), 2 * np.max(np.abs(expected.get('logits', 0))))
        assert np.max(np.abs(served_log - expected_log)) <= TOLERANCE * scale


def test_the_client_runs_eagerly_without_towers(exported):
    _, report, _ = exported
    assert report == {'executing_eagerly': True, 'towers_imported': False}


@pytest.mark.parametrize('name', sorted(WORKLOADS))
def test_each_workload_serves_what_its_evaluation_computes(exported, name):
    expected, served = exported[0][name]
    assert_serves(served, expected)


def test_classifiers_serve_the_most_probable_class_and_the_image_folder_its_name(exported):
    for name in ('cifar10', 'fashion_mnist', 'image_folder', 'imagenet'):
        expected, served = exported[0][name]
        np.testing.assert_array_equal(served['classes'],
                                      expected['probabilities'].argmax(axis=1))
    folder = exported[0]['image_folder'][1]
    np.testing.assert_array_equal(folder['class_names'].astype(str),
                                  np.array(FOLDER_CLASSES)[folder['classes']])


def test_side_by_side_serves_one_mask_per_model(exported):
    assert sorted(exported[0]['side_by_side'][1]) == ['fpn_mask', 'linknet_mask']


@pytest.mark.parametrize('name', sorted(KERAS_MODELS))
@pytest.mark.parametrize('source', ['keras_out', 'tf2_checkpoint_dir'])
def test_keras_weights_and_tf2_checkpoints_load_into_plain_tf_keras(exported, name, source):
    expected, _ = exported[0][name]
    with np.load(str(exported[2] / name / ('%s.npz' % source))) as served:
        assert_serves(served, {'probabilities': expected['probabilities']})


def test_a_checkpoint_of_another_model_is_one_error_line_naming_what_it_lacks(
        exported, capsys, tmp_path):
    checkpoint = glob.glob(str(exported[2] / 'fashion_mnist' / 'train' / 'model.ckpt-*.index'))
    status, out, err = _run_script(capsys, '--model', 'cifar10', '--checkpoint_path',
                                   checkpoint[0][:-len('.index')], '--export_dir',
                                   str(tmp_path / 'out'))
    assert status == 1 and not out
    assert err.startswith('error: checkpoint %s is not one of the CIFAR-10 model: it lacks '
                          'conv1/biases/ExponentialMovingAverage, ' % checkpoint[0][:-6])
    assert len(err.splitlines()) == 1
    assert not os.path.exists(str(tmp_path / 'out'))


def test_the_script_exports_the_newest_checkpoint_and_prints_one_line(exported, capsys,
                                                                        tmp_path):
    train_dir = str(exported[2] / 'segdec' / 'train')
    status, out, _ = _run_script(capsys, '--model', 'segdec', '--checkpoint_dir', train_dir,
                                 '--image_height', '128', '--image_width', '128',
                                 '--export_dir', str(tmp_path / 'out'))
    assert status == 0
    assert out == ('model.ckpt-%d: wrote the SavedModel %s; serving_default: images uint8 '
                   '[?, 128, 128] -> mask float32 [?, 16, 16, 1], score float32 [?]\n'
                   % (STEPS, tmp_path / 'out'))
    assert sorted(os.listdir(str(tmp_path / 'out'))) == ['saved_model.pb', 'variables']


def test_a_non_empty_export_dir_is_refused_and_left_as_it_was(exported, capsys):
    export_dir = str(exported[2] / 'cifar10' / 'saved_model')
    before = sorted(os.listdir(export_dir))
    status, _, err = _run_script(capsys, '--model', 'cifar10', '--checkpoint_dir',
                                 str(exported[2] / 'cifar10' / 'train'), '--export_dir',
                                 export_dir)
    assert status == 1
    assert err == ('error: --export_dir %s already exists and is not empty: give a new '
                   'directory (or remove that one)\n' % export_dir)
    assert sorted(os.listdir(export_dir)) == before


def test_a_size_flag_the_model_does_not_take_is_one_error_line(capsys, tmp_path):
    status, _, err = _run_script(capsys, '--model', 'cifar10', '--checkpoint_dir',
                                 str(tmp_path), '--image_size', '64', '--export_dir',
                                 str(tmp_path / 'out'))
    assert status == 1
    assert err == 'error: --model cifar10 does not take --image_size (it takes none of them)\n'


def test_keras_outputs_of_a_model_without_keras_counterpart_are_refused(exported, capsys,
                                                                        tmp_path):
    status, _, err = _run_script(capsys, '--model', 'segdec', '--checkpoint_dir',
                                 str(exported[2] / 'segdec' / 'train'), '--image_height', '128',
                                 '--image_width', '128', '--export_dir', str(tmp_path / 'out'),
                                 '--keras_out', str(tmp_path / 'segdec.weights.h5'))
    assert status == 1
    assert err.startswith('error: a SegDecNet (tower variant) is no Keras model: ')
    assert not os.path.exists(str(tmp_path / 'out'))
