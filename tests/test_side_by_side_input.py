"""Specification of the segmentation input: the folder layout, KolektorSDD, the training stream."""
import os

import numpy as np
import pytest
from PIL import Image

from models.datasets.kolektor import synthetic as kolektor_synthetic
from models.datasets.segmentation_folder import reader, synthetic
from models.side_by_side import data_flags, inputs
from towers import flags
from towers.compat import tf
from towers.errors import TowersError


def write_pair(data_dir, name, image_size, mask_size, subset='train', extension='.png'):
    for folder in ('images', 'masks'):
        os.makedirs(os.path.join(data_dir, subset, folder), exist_ok=True)
    image = np.zeros(image_size[::-1] + (3,), np.uint8)
    Image.fromarray(image).save(os.path.join(data_dir, subset, 'images', name + extension))
    if mask_size is not None:
        mask = np.zeros(mask_size[::-1], np.uint8)
        mask[:, : mask_size[0] // 2] = 255
        Image.fromarray(mask).save(os.path.join(data_dir, subset, 'masks', name + '.png'))


def test_generated_set_reads_back_with_png_and_jpg_images(tmp_path):
    synthetic.write_dataset(str(tmp_path / 'data'), num_train=4, num_test=2, size=64)
    data = inputs.load_split('folder', str(tmp_path / 'data'), 'train', 32)
    assert data.images.shape == (4, 32, 32, 3) and data.images.dtype == np.uint8
    assert data.masks.shape == (4, 32, 32) and set(np.unique(data.masks)) <= {0, 1}
    assert data.names == ['train_0000', 'train_0001', 'train_0002', 'train_0003']
    assert os.path.exists(str(tmp_path / 'data' / 'train' / 'images' / 'train_0003.jpg'))
    assert data.masks.any()


def test_mask_keeps_the_pixels_most_of_whose_area_is_foreground(tmp_path):
    write_pair(str(tmp_path), 'half', (64, 64), (64, 64))
    data = reader.load_split(str(tmp_path), 'train', 32)
    np.testing.assert_array_equal(data.masks[0].sum(axis=0), [32] * 16 + [0] * 16)


def test_mask_of_another_size_than_its_image_is_an_error_naming_both(tmp_path):
    write_pair(str(tmp_path), 'a', (64, 64), (64, 48))
    with pytest.raises(TowersError, match=r'mask .*masks/a.png is 64x48 but its image '
                                          r'.*images/a.png is 64x64'):
        reader.load_split(str(tmp_path), 'train', 32)


def test_missing_mask_is_an_error_naming_the_file(tmp_path):
    write_pair(str(tmp_path), 'b', (64, 64), None, extension='.jpg')
    with pytest.raises(TowersError, match=r'the mask of b.jpg is missing: .*masks/b.png'):
        reader.load_split(str(tmp_path), 'train', 32)


def test_image_size_not_divisible_by_32_is_an_error_naming_the_flag(tmp_path):
    write_pair(str(tmp_path), 'c', (64, 64), (64, 64))
    with pytest.raises(TowersError, match=r'--image_size is 100x100.*divisible by 32'):
        inputs.load_split('folder', str(tmp_path), 'train', 100)


def test_folder_without_the_layout_is_an_error_saying_which_layout(tmp_path):
    with pytest.raises(TowersError, match=r'test/images is not a directory; expected the '
                                          r'layout'):
        reader.load_split(str(tmp_path), 'test', 32)


def write_one_folder(data_dir, count):
    """`count` pairs in one images/ + masks/ folder, each image's first pixel its index."""
    for index in range(count):
        write_pair(data_dir, 'pair_%02d' % index, (32, 32), (32, 32), subset='')
        image = np.zeros([32, 32, 3], np.uint8)
        image[0, 0] = index
        Image.fromarray(image).save(os.path.join(data_dir, 'images', 'pair_%02d.png' % index))


def test_one_folder_of_pairs_holds_out_a_fixed_fraction_for_testing(tmp_path):
    write_one_folder(str(tmp_path), 10)
    train = reader.load_split(str(tmp_path), 'train', 32, test_fraction=0.3)
    test = reader.load_split(str(tmp_path), 'test', 32, test_fraction=0.3)
    assert len(test.names) == 3 and len(train.names) == 7
    assert sorted(train.names + test.names) == ['pair_%02d' % i for i in range(10)]
    assert reader.load_split(str(tmp_path), 'test', 32, test_fraction=0.3).names == test.names
    assert [int(image[0, 0, 0]) for image in test.images] == [int(name[-2:])
                                                             for name in test.names]


def test_the_held_out_pairs_do_not_depend_on_the_order_files_are_listed_in(tmp_path):
    write_one_folder(str(tmp_path / 'a'), 6)
    write_one_folder(str(tmp_path / 'b'), 6)
    names = ['pair_%02d' % i for i in range(6)]
    assert reader.held_out(names, 0.5) == reader.held_out(names[::-1], 0.5)
    assert (reader.load_split(str(tmp_path / 'a'), 'test', 32, 0.5).names
            == reader.load_split(str(tmp_path / 'b'), 'test', 32, 0.5).names)


def test_a_held_out_fraction_leaves_at_least_one_pair_on_each_side(tmp_path):
    assert len(reader.held_out(['a', 'b', 'c'], 0.01)) == 1
    assert len(reader.held_out(['a', 'b', 'c'], 0.99)) == 2
    with pytest.raises(TowersError, match='needs at least 2'):
        reader.held_out(['a'], 0.5)


def test_the_scripts_data_flags_name_the_held_out_fraction_of_one_folder(tmp_path):
    write_one_folder(str(tmp_path), 8)
    parser = flags.FlagParser()
    data_flags.add_data_flags(parser, 'side')
    args = parser.parse_args(['--data_dir', str(tmp_path), '--image_size', '32',
                              '--test_fraction', '0.25'])
    data_dir, test = inputs.load_flagged_split(args, 'test')
    assert data_dir == str(tmp_path) and len(test.names) == 2
    with pytest.raises(flags.FlagError, match='expected a fraction between 0 and 1, got 1.5'):
        parser.parse_args(['--test_fraction', '1.5'])


def test_kolektor_gives_full_resolution_masks_and_three_channel_images(tmp_path):
    data_dir = str(tmp_path / 'kolektor')
    kolektor_synthetic.write_dataset(data_dir, num_items=2, parts_per_item=2, height=128,
                                     width=64, defect_fraction=1.0)
    data = inputs.load_split('kolektor', data_dir, 'train', 64)
    assert data.images.shape == (2, 64, 64, 3) and data.masks.shape == (2, 64, 64)
    np.testing.assert_array_equal(data.images[..., 0], data.images[..., 2])
    assert data.masks.any() and data.names == ['kos01/Part0', 'kos01/Part1']


def test_training_stream_flips_image_and_mask_alike():
    images = np.zeros([2, 32, 32, 3], np.uint8)
    images[:, :8, :16, 0] = 255     # a red patch in the top-left corner
    masks = (images[..., 0] > 0).astype(np.uint8)
    data = reader.SegmentationSet(images, masks, ['a', 'b'])
    batch = inputs.training_input(data, global_batch=2)
    with tf.Session() as sess:
        batches = [sess.run(batch) for _ in range(8)]
    corners = set()
    for batch_images, batch_masks in batches:
        assert batch_images.shape == (2, 32, 32, 3) and batch_masks.shape == (2, 32, 32, 1)
        np.testing.assert_array_equal(batch_masks[..., 0], batch_images[..., 0])
        corners |= {(bool(m[0, 0, 0]), bool(m[0, -1, 0]), bool(m[-1, 0, 0]))
                    for m in batch_masks}
    assert len(corners) == 4   # each of the four flips came up
