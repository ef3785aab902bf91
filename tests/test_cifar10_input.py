"""Specification of the CIFAR-10 input: the binary format, the pipelines, the data set choice."""
import logging
import os
import tarfile

import numpy as np
import pytest

import towers
from models.datasets.cifar10 import reader as cifar10_input, synthetic as cifar10_synthetic
from towers.compat import tf


def random_examples(num, seed):
    rng = np.random.RandomState(seed)
    images = rng.randint(0, 256, size=[num, 32, 32, 3]).astype(np.uint8)
    return images, rng.randint(0, 10, size=num).astype(np.uint8)


def write_tiny_set(batches_dir, records_per_file=4):
    """A data set in the real layout with random images; returns its test part."""
    parts = [random_examples(records_per_file, seed) for seed in range(6)]
    cifar10_input.write_batches_dir(str(batches_dir), parts[:5], parts[5])
    return parts[5]


def standardized(images):
    """numpy per-image standardization, as `tf.image.per_image_standardization` defines it."""
    images = images.astype(np.float64)
    mean = images.mean(axis=(1, 2, 3), keepdims=True)
    stddev = np.maximum(images.std(axis=(1, 2, 3), keepdims=True),
                        1 / np.sqrt(images[0].size))
    return (images - mean) / stddev


def test_record_is_one_label_byte_then_the_image_depth_major():
    image = np.arange(32 * 32 * 3, dtype=np.int64).reshape([1, 32, 32, 3]) % 251
    record = cifar10_input.encode_records(image.astype(np.uint8), [7])
    assert len(record) == cifar10_input.RECORD_BYTES == 3073
    assert record[0] == 7
    red_plane = np.frombuffer(record[1:1025], np.uint8).reshape([32, 32])
    np.testing.assert_array_equal(red_plane, image[0, :, :, 0])


def test_evaluation_input_is_the_standardized_central_crop_in_file_order(tmp_path):
    images, labels = write_tiny_set(tmp_path)
    batch_images, batch_labels = cifar10_input.inputs(True, str(tmp_path), batch_size=4)
    with tf.Session() as sess:
        got_images, got_labels = sess.run([batch_images, batch_labels])
    np.testing.assert_array_equal(got_labels, labels)
    np.testing.assert_allclose(got_images, standardized(images[:, 4:28, 4:28, :]), atol=1e-5)


@pytest.mark.parametrize('use_fp16, dtype', [(False, tf.float32), (True, tf.float16)])
def test_pipelines_give_24x24_images_of_the_chosen_dtype_and_int32_labels(tmp_path, use_fp16,
                                                                         dtype):
    write_tiny_set(tmp_path)
    for images, labels in (cifar10_input.distorted_inputs(str(tmp_path), 6, use_fp16),
                           cifar10_input.inputs(False, str(tmp_path), 6, use_fp16)):
        assert images.shape.as_list() == [6, 24, 24, 3] and images.dtype == dtype
        assert labels.shape.as_list() == [6] and labels.dtype == tf.int32


def test_distorted_images_are_standardized_random_views_of_their_record(tmp_path):
    image, _ = random_examples(1, seed=3)
    cifar10_input.write_batches_dir(str(tmp_path), [(image, [3])] * 5, (image, [3]))
    images, labels = cifar10_input.distorted_inputs(str(tmp_path), batch_size=6)
    with tf.Session() as sess:
        views, view_labels = sess.run([images, labels])
    np.testing.assert_array_equal(view_labels, [3] * 6)
    np.testing.assert_allclose(views.mean(axis=(1, 2, 3)), 0, atol=1e-4)
    np.testing.assert_allclose(views.std(axis=(1, 2, 3)), 1, atol=1e-3)
    # Six views of one record: crops, flips and colour changes are drawn for each.
    assert len({view.tobytes() for view in views}) == 6


def test_missing_file_is_an_error_naming_it(tmp_path):
    write_tiny_set(tmp_path)
    os.remove(str(tmp_path / 'data_batch_3.bin'))
    with pytest.raises(towers.TowersError, match='Failed to find file: .*data_batch_3.bin'):
        cifar10_input.distorted_inputs(str(tmp_path), 4)


def test_truncated_file_is_an_error_naming_it_and_its_size(tmp_path):
    write_tiny_set(tmp_path)
    path = tmp_path / 'test_batch.bin'
    path.write_bytes(path.read_bytes()[:-100])
    with pytest.raises(towers.TowersError,
                       match=r'truncated CIFAR-10 file .*test_batch.bin: 12192 bytes'):
        cifar10_input.inputs(True, str(tmp_path), 4)


def test_generated_set_has_the_cifar10_binary_layout(tmp_path):
    batches_dir = str(tmp_path / 'generated')
    cifar10_synthetic.generate(batches_dir, records_per_file=30)
    assert sorted(os.listdir(batches_dir)) == sorted(
        cifar10_input.TRAIN_FILES + cifar10_input.TEST_FILES + ['batches.meta.txt'])
    for name in cifar10_input.TRAIN_FILES + cifar10_input.TEST_FILES:
        data = np.fromfile(os.path.join(batches_dir, name), np.uint8).reshape([30, 3073])
        assert data[:, 0].max() <= 9
    with open(os.path.join(batches_dir, 'batches.meta.txt')) as f:
        assert f.read().split() == cifar10_input.CLASS_NAMES


def test_generated_set_depends_only_on_seed_and_size(tmp_path):
    for name, seed in (('a', 0), ('b', 0), ('c', 1)):
        cifar10_synthetic.generate(str(tmp_path / name), records_per_file=10, seed=seed)
    contents = {name: (tmp_path / name / 'test_batch.bin').read_bytes() for name in 'abc'}
    assert contents['a'] == contents['b'] != contents['c']


def test_generated_classes_are_told_apart_by_their_patterns():
    patterns = cifar10_synthetic.class_patterns()
    images, labels = cifar10_synthetic.make_examples(500, patterns, np.random.RandomState(5))
    centred = images.astype(np.float64) - images.mean(axis=(1, 2, 3), keepdims=True)
    nearest = np.argmax(np.einsum('nhwc,khwc->nk', centred, patterns), axis=1)
    assert np.mean(nearest == labels) > 0.9


def test_without_data_a_set_is_generated_once_and_announced(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger='towers.datasets')
    first = cifar10_synthetic.locate_or_generate(str(tmp_path), download=False)
    assert first == str(tmp_path / cifar10_synthetic.GENERATED_DIR)
    assert 'generated a set in the CIFAR-10 format' in caplog.text
    caplog.clear()
    assert cifar10_synthetic.locate_or_generate(str(tmp_path), download=False) == first
    assert 'generated a' not in caplog.text and 'using the GENERATED' in caplog.text


def test_real_cifar10_takes_precedence_over_a_generated_set(tmp_path):
    os.makedirs(str(tmp_path / cifar10_synthetic.GENERATED_DIR))
    write_tiny_set(tmp_path / cifar10_synthetic.GENERATED_DIR)
    write_tiny_set(tmp_path / 'cifar-10-batches-bin')
    assert cifar10_synthetic.locate_or_generate(str(tmp_path), download=False) == str(
        tmp_path / 'cifar-10-batches-bin')


def test_the_tutorials_archive_in_data_dir_is_extracted(tmp_path):
    write_tiny_set(tmp_path / 'staging' / 'cifar-10-batches-bin')
    data_dir = tmp_path / 'data'
    data_dir.mkdir()
    with tarfile.open(str(data_dir / 'cifar-10-binary.tar.gz'), 'w:gz') as tar:
        tar.add(str(tmp_path / 'staging' / 'cifar-10-batches-bin'), 'cifar-10-batches-bin')
    batches_dir = cifar10_synthetic.locate_or_generate(str(data_dir), download=False)
    assert batches_dir == str(data_dir / 'cifar-10-batches-bin')
    assert cifar10_input.count_records(cifar10_input.data_files(batches_dir, False)) == 20


def test_an_archive_member_outside_data_dir_is_an_error_and_nothing_is_written_there(tmp_path):
    data_dir = tmp_path / 'data'
    data_dir.mkdir()
    (tmp_path / 'escape').write_text('written from the archive')
    with tarfile.open(str(data_dir / 'cifar-10-binary.tar.gz'), 'w:gz') as tar:
        tar.add(str(tmp_path / 'escape'), '../escaped')
    (tmp_path / 'escape').unlink()
    with pytest.raises(towers.TowersError, match=r'^cannot extract \S+cifar-10-binary\.tar\.gz'):
        cifar10_input.maybe_download_and_extract(str(data_dir), download=False)
    assert sorted(os.listdir(str(tmp_path))) == ['data']
