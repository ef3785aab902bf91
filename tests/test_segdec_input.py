"""Specification of the KolektorSDD reader, its splits, the training order and the generator."""
import os
import re

import numpy as np
import pytest
from PIL import Image

from models.datasets.kolektor import reader as kolektor_input, synthetic as kolektor_synthetic
from towers import TowersError, datasets
from towers.compat import tf


def _write_part(folder, part, image, mask):
    os.makedirs(folder, exist_ok=True)
    Image.fromarray(image).save(os.path.join(folder, 'Part%d.jpg' % part), quality=95)
    Image.fromarray(mask).save(os.path.join(folder, 'Part%d_label.bmp' % part))


def _grey(height, width, value=128):
    return np.full([height, width], value, np.uint8)


def test_unreadable_image_is_an_error_naming_the_file(tmp_path):
    folder = tmp_path / 'kos01'
    _write_part(str(folder), 0, _grey(64, 32), _grey(64, 32, 0))
    (folder / 'Part0.jpg').write_bytes(b'not a jpeg')
    with pytest.raises(TowersError, match='cannot read image .*kos01/Part0.jpg'):
        kolektor_input.read_part(str(folder / 'Part0.jpg'), 64, 32)


def test_mask_of_another_size_is_an_error_naming_mask_and_image(tmp_path):
    folder = str(tmp_path / 'kos01')
    _write_part(folder, 0, _grey(64, 32), _grey(60, 32, 0))
    with pytest.raises(TowersError, match=r'mask .*Part0_label.bmp is 32x60 but its image '
                                          r'.*Part0.jpg is 32x64'):
        kolektor_input.read_part(os.path.join(folder, 'Part0.jpg'), 64, 32)


def test_missing_mask_is_an_error_naming_the_expected_file(tmp_path):
    folder = tmp_path / 'kos01'
    _write_part(str(folder), 0, _grey(64, 32), _grey(64, 32, 0))
    (folder / 'Part0_label.bmp').unlink()
    with pytest.raises(TowersError, match='mask is missing: .*kos01/Part0_label.bmp'):
        kolektor_input.read_part(str(folder / 'Part0.jpg'), 64, 32)


def test_data_dir_without_item_folders_is_an_error_naming_it(tmp_path):
    with pytest.raises(TowersError, match=re.escape('%s holds no item folders' % tmp_path)):
        kolektor_input.load_split(str(tmp_path), 'train', 64, 32)


def test_item_folder_without_images_is_an_error_naming_it(tmp_path):
    (tmp_path / 'kos01').mkdir()
    with pytest.raises(TowersError, match='item folder .*kos01 holds no images'):
        kolektor_input.load_split(str(tmp_path), 'train', 64, 32)


def test_items_are_folders_of_parts_and_other_folders_are_not_the_sets(tmp_path):
    _write_part(str(tmp_path / 'kos01'), 0, _grey(64, 32), _grey(64, 32, 0))
    _write_part(str(tmp_path / 'sample_b'), 0, _grey(64, 32), _grey(64, 32, 0))
    (tmp_path / '__MACOSX').mkdir()
    (tmp_path / 'notes').mkdir()
    (tmp_path / 'notes' / 'readme.txt').write_text('not an item')
    assert kolektor_input.item_folders(str(tmp_path)) == ['kos01', 'sample_b']


def test_a_folder_of_folders_without_parts_is_an_error_naming_them_and_the_layout(tmp_path):
    (tmp_path / 'photos').mkdir()
    (tmp_path / 'photos' / 'a.png').write_bytes(b'')
    (tmp_path / 'scans').mkdir()
    with pytest.raises(TowersError, match='^%s$' % re.escape(
            '%s holds no item folders (none of photos, scans holds a Part*.jpg); expected '
            'KolektorSDD: folders kos01..kos50 with Part0.jpg, Part0_label.bmp, ...'
            % tmp_path)):
        kolektor_input.load_split(str(tmp_path), 'train', 64, 32)


def small_kolektor_format(default_dir):
    """KolektorSDD's format with `default_dir` as its default folder and a small generated set."""
    return kolektor_synthetic.FORMAT._replace(
        default_dir=default_dir,
        generate=lambda directory: kolektor_synthetic.write_dataset(
            directory, num_items=5, parts_per_item=2, height=64, width=32))


def test_the_generated_set_is_found_again_and_never_taken_for_an_item(tmp_path):
    default_dir = str(tmp_path / 'kolektor')
    data_format = small_kolektor_format(default_dir)
    generated = os.path.join(default_dir, 'kolektor-generated')
    # A first run generates the set, every later one finds it: by default or given the folder.
    assert [datasets.locate_or_generate(data_dir, data_format)
            for data_dir in (None, None, default_dir)] == [generated] * 3
    assert os.listdir(default_dir) == ['kolektor-generated']
    assert data_format.find(default_dir) is None
    assert len(kolektor_input.load_split(generated, 'test', 64, 32).labels) == 4


def test_a_real_set_put_beside_the_generated_one_is_used_without_it(tmp_path):
    default_dir = str(tmp_path / 'kolektor')
    data_format = small_kolektor_format(default_dir)
    datasets.locate_or_generate(None, data_format)
    for item in range(1, 6):
        _write_part(os.path.join(default_dir, 'kos%02d' % item), 0, _grey(64, 32),
                    _grey(64, 32, 255 * (item % 2)))
    assert datasets.locate_or_generate(None, data_format) == default_dir
    assert kolektor_input.item_folders(default_dir) == ['kos%02d' % i for i in range(1, 6)]


def test_mask_is_shrunk_to_the_input_dilated_and_pooled_to_one_eighth(tmp_path):
    folder = str(tmp_path / 'kos01')
    mask = np.zeros([256, 128], np.uint8)
    mask[100, 60] = 255  # one pixel: (50, 30) at the 128x64 input, cell (6, 3) at 1/8
    _write_part(folder, 0, _grey(256, 128), mask)
    path = os.path.join(folder, 'Part0.jpg')
    image, pixels, label = kolektor_input.read_part(path, 128, 64, dilate=1, stride=8)
    assert image.shape == (128, 64) and pixels.shape == (16, 8) and label == 1
    assert np.argwhere(pixels).tolist() == [[6, 3]]
    # Dilated by 5 at input size, the mark reaches rows 48..52 and columns 28..32: the cells
    # of rows 6 and columns 3 and 4.
    dilated = kolektor_input.read_part(path, 128, 64, dilate=5, stride=8)[1]
    assert np.argwhere(dilated).tolist() == [[6, 3], [6, 4]]


def test_clean_mask_gives_label_zero_and_no_defect_pixel(tmp_path):
    folder = str(tmp_path / 'kos01')
    _write_part(folder, 0, _grey(128, 64), _grey(128, 64, 0))
    _, pixels, label = kolektor_input.read_part(os.path.join(folder, 'Part0.jpg'), 64, 32)
    assert label == 0 and not pixels.any()


def test_common_split_trains_on_the_first_thirty_of_fifty_items():
    items = ['kos%02d' % i for i in range(1, 51)]
    train, test = kolektor_input.split_items(items)
    assert train == items[:30] and test == items[30:]


def test_three_folds_test_every_item_exactly_once():
    items = ['kos%02d' % i for i in range(1, 51)]
    tested = []
    for fold in ('fold1', 'fold2', 'fold3'):
        train, test = kolektor_input.split_items(items, fold)
        assert sorted(train + test) == items and not set(train) & set(test)
        tested.append(test)
    assert sorted(sum(tested, [])) == items
    assert [len(test) for test in tested] == [17, 17, 16]


def _first(order, count):
    """The first `count` indices of the dataset `order`."""
    index = tf.data.make_one_shot_iterator(order).get_next()
    with tf.Session() as sess:
        return [int(sess.run(index)) for _ in range(count)]


def test_each_tower_alternates_defective_and_clean_images_out_of_phase():
    labels = np.array([1, 0, 0, 0, 0, 0, 1, 0])
    order = kolektor_input.alternating_order(labels, num_towers=2, batch_size=1)
    kinds = [int(labels[index]) for index in _first(order, 8)]
    assert [kinds[step:step + 2] for step in range(0, 8, 2)] == [[1, 0], [0, 1], [1, 0], [0, 1]]


def test_rare_defective_images_repeat_before_clean_ones_do():
    labels = np.array([1, 0, 0, 0, 0])
    indices = _first(kolektor_input.alternating_order(labels, num_towers=1, batch_size=1), 8)
    assert indices[0::2] == [0, 0, 0, 0] and sorted(indices[1::2]) == [1, 2, 3, 4]


def test_the_same_seed_gives_the_same_order_and_another_seed_another():
    labels = np.array([1, 1, 1, 0, 0, 0, 0, 0])
    first, again, other = (_first(kolektor_input.alternating_order(labels, 1, 1, seed), 16)
                           for seed in (0, 0, 1))
    assert first == again and first != other


def test_training_without_both_kinds_of_image_is_refused():
    with pytest.raises(TowersError, match='both defective and defect-free'):
        kolektor_input.alternating_order(np.zeros(4), 1, 1)


def test_training_input_gives_float_batches_of_every_tower():
    data = kolektor_input.KolektorSplit(
        images=np.stack([_grey(16, 8, 255), _grey(16, 8, 0)]),
        pixel_labels=np.stack([np.ones([2, 1], np.uint8), np.zeros([2, 1], np.uint8)]),
        labels=np.array([1, 0], np.int32), names=['kos01/Part0', 'kos01/Part1'])
    images, pixels, labels = kolektor_input.training_input(data, num_towers=2, batch_size=1)
    assert images.shape.as_list() == [2, 16, 8, 1] and pixels.shape.as_list() == [2, 2, 1, 1]
    with tf.Session() as sess:
        values = sess.run([images, pixels, labels])
    np.testing.assert_array_equal(values[0][:, 0, 0, 0], [1.0, 0.0])
    np.testing.assert_array_equal(values[1][:, 0, 0, 0], [1.0, 0.0])
    np.testing.assert_array_equal(values[2], [1, 0])


def test_generated_set_has_kolektor_layout_with_a_minority_of_defects(tmp_path):
    data_dir = str(tmp_path / 'generated')
    defective = kolektor_synthetic.write_dataset(data_dir, num_items=5, parts_per_item=4,
                                                 height=160, width=64, defect_fraction=0.25)
    assert sorted(os.listdir(data_dir)) == ['kos01', 'kos02', 'kos03', 'kos04', 'kos05']
    assert sorted(os.listdir(os.path.join(data_dir, 'kos03'))) == [
        'Part%d%s' % (p, suffix) for p in range(4) for suffix in ('.jpg', '_label.bmp')]
    train = kolektor_input.load_split(data_dir, 'train', 128, 64)
    test = kolektor_input.load_split(data_dir, 'test', 128, 64)
    assert len(train.labels) == 12 and len(test.labels) == 8
    assert defective == 5 == train.labels.sum() + test.labels.sum()
    assert (train.pixel_labels.any(axis=(1, 2)) == train.labels.astype(bool)).all()


def test_generated_set_is_the_same_for_the_same_seed(tmp_path):
    for name in ('a', 'b'):
        kolektor_synthetic.write_dataset(str(tmp_path / name), num_items=1, parts_per_item=2,
                                         height=80, width=32)
    for part in ('Part0.jpg', 'Part1_label.bmp'):
        assert ((tmp_path / 'a' / 'kos01' / part).read_bytes()
                == (tmp_path / 'b' / 'kos01' / part).read_bytes())


def test_writing_a_set_another_process_wrote_first_keeps_that_one_and_no_staging(tmp_path):
    data_dir = tmp_path / 'generated'
    kolektor_synthetic.write_dataset(str(data_dir), num_items=1, parts_per_item=2,
                                     height=80, width=32)
    first = (data_dir / 'kos01' / 'Part0.jpg').read_bytes()
    kolektor_synthetic.write_dataset(str(data_dir), num_items=1, parts_per_item=2,
                                     height=80, width=32)
    assert sorted(os.listdir(tmp_path)) == ['generated']
    assert (data_dir / 'kos01' / 'Part0.jpg').read_bytes() == first
