"""Specification of TensorFlow 1.x's MNIST reader and tutorial model under the legacy runner
(`tensorflow.examples.tutorials.mnist.input_data` and `.mnist`): local IDX files only, TF 1.x's
batches and epochs, and a tower program that reads them."""
import gzip
import os
import subprocess
import sys

import numpy as np
import pytest

from towers.compat import tf
from towers.legacy import input_data, mnist
from towers.legacy.modules import LegacyError

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(REPO, 'tests', 'data', 'legacy', 'mnist_program.py')


def run_program(*args):
    """`python -m towers.legacy ARGS` run from the repository, its output captured."""
    return subprocess.run([sys.executable, '-m', 'towers.legacy'] + list(args), cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def write_mnist_files(folder, num_train=300, num_test=100):
    """The four gzip IDX files of a learnable MNIST-format set: class k is a bright bar at
    row 2 + 2k over noise. Returns the training labels, in file order."""
    rng = np.random.RandomState(0)
    for images_name, labels_name, count in (
            (input_data.TRAIN_IMAGES, input_data.TRAIN_LABELS, num_train),
            (input_data.TEST_IMAGES, input_data.TEST_LABELS, num_test)):
        labels = rng.randint(10, size=count).astype(np.uint8)
        images = rng.randint(0, 60, size=[count, 28, 28]).astype(np.uint8)
        images[np.arange(count), 2 + 2 * labels, 4:24] = 255
        header = np.array([2051, count, 28, 28], '>u4').tobytes()
        with gzip.open(os.path.join(folder, images_name), 'wb') as f:
            f.write(header + images.tobytes())
        with gzip.open(os.path.join(folder, labels_name), 'wb') as f:
            f.write(np.array([2049, count], '>u4').tobytes() + labels.tobytes())
        if images_name == input_data.TRAIN_IMAGES:
            train_labels = labels
    return train_labels


@pytest.fixture(scope='module')
def mnist_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp('mnist')
    return str(folder), write_mnist_files(str(folder))


def test_read_data_sets_splits_scales_and_one_hot_encodes_as_tf1(mnist_dir):
    folder, train_labels = mnist_dir
    data = input_data.read_data_sets(folder, one_hot=True, validation_size=50, seed=1)
    assert (data.train.num_examples, data.validation.num_examples,
            data.test.num_examples) == (250, 50, 100)
    assert data.train.images.shape == (250, 784) and data.train.images.dtype == np.float32
    assert data.train.images.max() == 1.0 and data.train.images.min() >= 0.0
    np.testing.assert_array_equal(data.validation.labels.argmax(axis=1), train_labels[:50])
    assert data.train.labels.shape == (250, 10)


def test_uint8_images_unreshaped_keep_their_bytes(mnist_dir):
    folder, _ = mnist_dir
    data = input_data.read_data_sets(folder, dtype=tf.uint8, reshape=False, validation_size=0)
    assert data.test.images.shape == (100, 28, 28, 1) and data.test.images.dtype == np.uint8


def test_a_validation_size_beyond_the_training_set_is_tf1s_value_error(mnist_dir):
    with pytest.raises(ValueError, match='Validation size should be between 0 and 300'):
        input_data.read_data_sets(mnist_dir[0], validation_size=5000)


def test_next_batch_shuffles_once_per_epoch_and_a_batch_crosses_into_the_next_epoch():
    np.random.seed(3)
    first_order = np.random.permutation(10)
    second_order = first_order[np.random.permutation(10)]   # a shuffle of the shuffled set
    images = np.arange(10, dtype=np.uint8).reshape([10, 1, 1, 1])
    data = input_data.DataSet(images, np.arange(10), dtype=tf.uint8, seed=3)
    batches = [data.next_batch(4)[1] for _ in range(2)]
    assert data.epochs_completed == 0
    crossing = data.next_batch(4)[1]
    assert data.epochs_completed == 1
    np.testing.assert_array_equal(np.concatenate(batches), first_order[:8])
    np.testing.assert_array_equal(crossing, np.concatenate([first_order[8:], second_order[:2]]))
    np.testing.assert_array_equal(data.next_batch(8)[1], second_order[2:10])


def test_an_epoch_ends_only_when_a_batch_runs_past_its_last_example():
    data = input_data.DataSet(np.zeros([6, 1, 1, 1], np.uint8), np.arange(6), dtype=tf.uint8)
    data.next_batch(6, shuffle=False)
    assert data.epochs_completed == 0
    labels = data.next_batch(2, shuffle=False)[1]
    assert data.epochs_completed == 1 and labels.tolist() == [0, 1]


def test_fake_data_serves_ones_and_one_hot_labels_without_files(tmp_path):
    data = input_data.read_data_sets(str(tmp_path), fake_data=True, one_hot=True)
    images, labels = data.train.next_batch(3, fake_data=True)
    assert data.train.num_examples == 10000
    assert images == [[1] * 784] * 3 and labels == [[1] + [0] * 9] * 3


def test_a_missing_file_names_the_four_files_and_the_folder_and_that_nothing_downloads(
        mnist_dir, tmp_path):
    for name in input_data.FILES[:3]:
        os.link(os.path.join(mnist_dir[0], name), str(tmp_path / name))
    with pytest.raises(LegacyError) as error:
        input_data.read_data_sets(str(tmp_path))
    assert str(error.value) == (
        'read_data_sets: no t10k-labels-idx1-ubyte.gz in %s; it reads the four MNIST-format '
        'files train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz, '
        't10k-images-idx3-ubyte.gz, t10k-labels-idx1-ubyte.gz from there and nothing is '
        'downloaded (TF 1.x downloaded them): put them there' % tmp_path)


def test_a_truncated_file_is_named_with_its_header_and_size(mnist_dir, tmp_path):
    for name in input_data.FILES:
        os.link(os.path.join(mnist_dir[0], name), str(tmp_path / name))
    os.unlink(str(tmp_path / input_data.TEST_LABELS))
    with gzip.open(str(tmp_path / input_data.TEST_LABELS), 'wb') as f:
        f.write(np.array([2049, 100], '>u4').tobytes() + bytes(99))
    with pytest.raises(LegacyError, match=r't10k-labels-idx1-ubyte.gz: its header says 100, '
                                          r'100 bytes of data, but it holds 99'):
        input_data.read_data_sets(str(tmp_path))


def test_the_tutorial_model_names_its_variables_as_the_tutorial_did():
    images = tf.placeholder(tf.float32, [None, mnist.IMAGE_PIXELS])
    labels = tf.placeholder(tf.int32, [None])
    logits = mnist.inference(images, 16, 8)
    mnist.training(mnist.loss(logits, labels), 0.1)
    assert [v.op.name for v in tf.global_variables()] == [
        'hidden1/weights', 'hidden1/biases', 'hidden2/weights', 'hidden2/biases',
        'softmax_linear/weights', 'softmax_linear/biases', 'global_step']
    assert logits.shape.as_list() == [None, mnist.NUM_CLASSES]


def test_evaluation_counts_the_examples_whose_label_is_the_top_logit():
    correct = mnist.evaluation(tf.constant([[0.0, 1.0], [2.0, 1.0], [0.0, 3.0]]),
                               tf.constant([1, 1, 1]))
    with tf.Session() as sess:
        assert sess.run(correct) == 2


def test_an_mnist_tower_program_reads_its_files_and_trains_on_two_devices(mnist_dir):
    result = run_program('--legacy_devices', '2', PROGRAM, '--data_dir', mnist_dir[0],
                         '--max_steps', '12')
    assert result.returncode == 0, result.stderr
    assert 'train 200, validation 100, test 100' in result.stdout
    assert 'tower 1: loss on /device:CPU:1' in result.stdout
    assert 'step 11: loss = ' in result.stdout and 'epochs completed 3' in result.stdout
    accuracy = float(result.stdout.split('test accuracy = ')[1].split()[0])
    assert accuracy > 0.5
    assert 'tensorflow.examples.tutorials.mnist.input_data' in result.stderr.splitlines()[-1]


def test_an_mnist_program_without_its_files_stops_with_one_line_and_downloads_nothing(tmp_path):
    result = run_program(PROGRAM, '--data_dir', str(tmp_path))
    errors = [line for line in result.stderr.splitlines() if line.startswith('error:')]
    line = next(number for number, text in enumerate(open(PROGRAM), 1)
                if 'input_data.read_data_sets(' in text)
    assert result.returncode == 1 and 'Traceback' not in result.stderr
    assert errors == ['error: %s:%d: read_data_sets: no %s in %s; it reads the four MNIST-format '
                      'files %s from there and nothing is downloaded (TF 1.x downloaded them): '
                      'put them there' % (PROGRAM, line, ', '.join(input_data.FILES), tmp_path,
                                          ', '.join(input_data.FILES))]
