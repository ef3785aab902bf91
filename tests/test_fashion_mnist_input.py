"""Specification of the Fashion-MNIST reader: IDX files as shipped (gzip or not), every error
naming its file, the reference's training input, and the generated set."""
import gzip
import struct

import numpy as np
import pytest

from models.datasets.fashion_mnist import reader, synthetic
from towers import TowersError
from towers.compat import tf


def examples(num, seed=0):
    rs = np.random.RandomState(seed)
    return (rs.randint(0, 256, [num, 28, 28]).astype(np.uint8),
            rs.randint(0, 10, num).astype(np.uint8))


@pytest.mark.parametrize('compress', [True, False])
def test_idx_files_round_trip_gzipped_or_not(tmp_path, compress):
    images, labels = examples(5)
    reader.write_split(str(tmp_path), 'test', images, labels, compress=compress)
    split = reader.load_split(str(tmp_path), 'test')
    np.testing.assert_array_equal(split.images, images)
    np.testing.assert_array_equal(split.labels, labels)
    assert split.image_file.endswith('t10k-images-idx3-ubyte' + ('.gz' if compress else ''))


def test_headers_are_big_endian_with_the_idx_magic_numbers():
    images, labels = examples(3)
    assert reader.encode_images(images)[:16] == struct.pack('>4I', 2051, 3, 28, 28)
    assert reader.encode_labels(labels)[:8] == struct.pack('>2I', 2049, 3)


def write_raw(path, data):
    path.write_bytes(data)
    return str(path)


def test_wrong_magic_number_is_an_error_naming_the_file_and_the_expected_magic(tmp_path):
    path = write_raw(tmp_path / 'train-images-idx3-ubyte', reader.encode_labels([1, 2]))
    with pytest.raises(TowersError, match=r'%s is not an IDX image file: magic number 2049, '
                                          r'expected 2051' % path):
        reader.read_images(path)


def test_file_shorter_than_its_header_is_truncated(tmp_path):
    path = write_raw(tmp_path / 'labels', struct.pack('>I', 2049))
    with pytest.raises(TowersError, match='truncated IDX label file %s: 4 bytes, shorter than '
                                          'its 8-byte header' % path):
        reader.read_labels(path)


def test_file_with_fewer_pixels_than_its_header_counts_is_truncated(tmp_path):
    images, _ = examples(2)
    path = write_raw(tmp_path / 'images', reader.encode_images(images)[:-1])
    with pytest.raises(TowersError, match=r'truncated IDX image file %s: its header says '
                                          r'2 x 28 x 28, 1584 bytes with the header, but the '
                                          r'file has 1583 bytes' % path):
        reader.read_images(path)


def test_file_with_more_bytes_than_its_header_counts_is_an_error(tmp_path):
    path = write_raw(tmp_path / 'labels', reader.encode_labels([1, 2]) + b'\x03')
    with pytest.raises(TowersError, match='oversized IDX label file %s' % path):
        reader.read_labels(path)


def test_truncated_gzip_file_is_an_error_naming_it(tmp_path):
    images, _ = examples(4)
    path = write_raw(tmp_path / 'images.gz', gzip.compress(reader.encode_images(images))[:-20])
    with pytest.raises(TowersError, match='truncated gzip file %s' % path):
        reader.read_images(path)


def test_gz_file_that_is_not_gzip_is_an_error_naming_it(tmp_path):
    path = write_raw(tmp_path / 'labels.gz', reader.encode_labels([1, 2]))
    with pytest.raises(TowersError, match='%s is not a valid gzip file' % path):
        reader.read_labels(path)


def test_images_of_another_size_are_an_error(tmp_path):
    data = struct.pack('>4I', 2051, 1, 32, 32) + bytes(32 * 32)
    path = write_raw(tmp_path / 'images', data)
    with pytest.raises(TowersError, match="%s holds 32x32 images; expected Fashion-MNIST's 28x28"
                                          % path):
        reader.read_images(path)


def test_label_out_of_range_is_an_error_naming_the_record(tmp_path):
    path = write_raw(tmp_path / 'labels', reader.encode_labels([3, 1, 10, 2]))
    with pytest.raises(TowersError, match=r'%s: label 10 of record 2 is not a class 0..9'
                                          % path):
        reader.read_labels(path)


def test_counts_that_disagree_between_images_and_labels_name_both_files(tmp_path):
    images, labels = examples(4)
    reader.write_split(str(tmp_path), 'train', images, labels[:3])
    image_file, label_file = reader.split_files(str(tmp_path), 'train')
    with pytest.raises(TowersError, match='%s holds 4 images but %s holds 3 labels'
                                          % (image_file, label_file)):
        reader.load_split(str(tmp_path), 'train')


def test_a_missing_file_of_the_split_is_named(tmp_path):
    images, labels = examples(2)
    reader.write_split(str(tmp_path), 'test', images, labels)
    (tmp_path / 't10k-labels-idx1-ubyte.gz').unlink()
    with pytest.raises(TowersError, match=r'no t10k-labels-idx1-ubyte or '
                                          r't10k-labels-idx1-ubyte.gz in %s' % tmp_path):
        reader.load_split(str(tmp_path), 'test')


def test_training_input_scales_pixels_and_one_hot_encodes_labels_in_static_shapes(tmp_path):
    images, labels = examples(6)
    reader.write_split(str(tmp_path), 'train', images, labels, compress=False)
    split = reader.load_split(str(tmp_path), 'train')
    batch_images, batch_labels = reader.training_input(split, 6, shuffle_buffer=1)
    assert batch_images.shape.as_list() == [6, 28, 28, 1]
    assert batch_labels.shape.as_list() == [6, 10]
    with tf.Session() as sess:
        image_values, label_values = sess.run([batch_images, batch_labels])
    np.testing.assert_allclose(image_values[..., 0], images / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(label_values, np.eye(10)[labels])


def test_training_batches_cross_epoch_boundaries_as_shuffle_repeat_batch_does(tmp_path):
    images, labels = examples(5)
    reader.write_split(str(tmp_path), 'train', images, labels)
    _, batch_labels = reader.training_input(reader.load_split(str(tmp_path), 'train'), 4,
                                         shuffle_buffer=1)
    with tf.Session() as sess:
        drawn = np.concatenate([sess.run(batch_labels).argmax(axis=1) for _ in range(5)])
    np.testing.assert_array_equal(drawn, np.tile(labels, 4))
    assert reader.steps_for_epochs(5, 4, 4) == 5


def test_epochs_that_fill_no_batch_are_an_error_naming_the_flags():
    with pytest.raises(TowersError, match='--batch_size or fewer --num_gpus'):
        reader.steps_for_epochs(6000, 1, 8192)


def test_generated_set_is_written_as_the_four_gzip_idx_files_and_reads_back(tmp_path):
    data_dir = synthetic.locate_or_generate(str(tmp_path))
    assert data_dir == str(tmp_path / synthetic.GENERATED_DIR)
    train, test = (reader.load_split(data_dir, split) for split in ('train', 'test'))
    assert len(train.labels) == synthetic.NUM_TRAIN and len(test.labels) == synthetic.NUM_TEST
    assert all(path.endswith('.gz') for path in (train.image_file, test.label_file))
    assert np.bincount(train.labels, minlength=10).min() > 0.08 * synthetic.NUM_TRAIN


def test_generated_set_depends_on_the_seed_alone(tmp_path):
    synthetic.generate(str(tmp_path / 'a'), num_train=20, num_test=10)
    synthetic.generate(str(tmp_path / 'b'), num_train=20, num_test=10)
    for name in ('train-images-idx3-ubyte.gz', 't10k-labels-idx1-ubyte.gz'):
        assert (tmp_path / 'a' / name).read_bytes() == (tmp_path / 'b' / name).read_bytes()


def test_generated_classes_are_told_apart_by_their_nearest_silhouette(tmp_path):
    silhouettes = synthetic.class_silhouettes()
    images, labels = synthetic.make_examples(500, silhouettes, np.random.RandomState(1))
    distances = ((images[:, None].astype(np.float64) - silhouettes[None]) ** 2).sum(axis=(2, 3))
    accuracy = np.mean(distances.argmin(axis=1) == labels)
    # Learnable, but not solved by the nearest silhouette alone (shifts, blends and noise).
    assert 0.3 < accuracy < 0.98


def test_real_files_in_the_data_dir_take_precedence_over_a_generated_set(tmp_path):
    images, labels = examples(2)
    for split in reader.SPLITS:
        reader.write_split(str(tmp_path), split, images, labels)
    assert synthetic.locate_or_generate(str(tmp_path)) == str(tmp_path)
    assert not (tmp_path / synthetic.GENERATED_DIR).exists()
