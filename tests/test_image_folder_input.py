"""Specification of the folder-of-JPEGs input: labels from folders, decoding, what is left out
and what is an error, and the generated OCT2017-format set."""
import logging
import os

import numpy as np
import pytest
from PIL import Image

import towers
from models.datasets.image_folder import reader, synthetic
from towers.compat import tf


def write_jpeg(path, value=128, size=(8, 8), mode='L'):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Image.new(mode, size, value).save(path, quality=95)
    return path


def write_folder_set(root, images_per_class, split='train'):
    """Writes `images_per_class` = {class: n} grey JPEGs under root/split/class/."""
    for name, count in images_per_class.items():
        for index in range(count):
            write_jpeg(os.path.join(str(root), split, name, '%s-%d-1.jpeg' % (name, index)))


def run(tensors):
    with tf.Session() as sess:
        return sess.run(tensors)


def test_classes_are_the_sorted_folder_names_and_each_label_is_the_images_parent_folder(
        tmp_path):
    write_folder_set(tmp_path, {'NORMAL': 1, 'CNV': 2, 'DME': 1})
    split = reader.list_split(str(tmp_path), 'train')
    assert split.classes == ['CNV', 'DME', 'NORMAL']
    folders = [os.path.basename(os.path.dirname(path)) for path in split.paths]
    assert [split.classes[label] for label in split.labels] == folders
    assert sorted(folders) == ['CNV', 'CNV', 'DME', 'NORMAL']


def test_labels_fix_the_class_order(tmp_path):
    write_folder_set(tmp_path, {'CNV': 1, 'DME': 1, 'NORMAL': 1})
    split = reader.list_split(str(tmp_path), 'train', ['NORMAL', 'CNV', 'DME'])
    assert split.classes == ['NORMAL', 'CNV', 'DME']
    assert {os.path.basename(os.path.dirname(path)): int(label)
            for path, label in zip(split.paths, split.labels)} == {
        'NORMAL': 0, 'CNV': 1, 'DME': 2}


def test_jpg_and_upper_case_extensions_are_images_too(tmp_path):
    for name in ('a.jpeg', 'b.jpg', 'c.JPEG', 'd.JPG'):
        write_jpeg(str(tmp_path / 'train' / 'CNV' / name))
    assert len(reader.list_split(str(tmp_path), 'train').paths) == 4


def test_a_grayscale_jpeg_decodes_to_three_equal_channels_in_unit_range_at_the_asked_size(
        tmp_path):
    path = write_jpeg(str(tmp_path / 'grey.jpeg'), value=204, size=(40, 24))
    image = run(reader.decode_image(tf.constant(path), 32))
    assert image.shape == (32, 32, 3) and image.dtype == np.float32
    np.testing.assert_allclose(image, 204 / 255.0, atol=2 / 255.0)


def test_a_colour_jpeg_keeps_its_channels_in_rgb_order(tmp_path):
    path = write_jpeg(str(tmp_path / 'red.jpg'), value=(250, 10, 10), size=(16, 16), mode='RGB')
    image = run(reader.decode_image(tf.constant(path), 32))
    np.testing.assert_allclose(image.mean(axis=(0, 1)), [250 / 255, 10 / 255, 10 / 255],
                               atol=6 / 255)


def test_a_training_batch_of_one_epochs_size_holds_every_image_once_with_its_label(tmp_path):
    for name, value in (('DARK', 30), ('LIGHT', 220)):
        for index in range(3):
            write_jpeg(str(tmp_path / 'train' / name / ('%d.jpeg' % index)), value=value)
    split = reader.list_split(str(tmp_path), 'train')
    images, labels = run(reader.training_input(split, 32, 6))
    assert images.shape == (6, 32, 32, 3) and labels.dtype == np.int32
    assert sorted(labels) == [0, 0, 0, 1, 1, 1]
    np.testing.assert_array_equal(images.mean(axis=(1, 2, 3)) > 0.5, labels == 1)


def test_files_of_other_extensions_and_hidden_files_are_left_out_counted_and_logged(
        tmp_path, caplog):
    write_folder_set(tmp_path, {'CNV': 2})
    for name in ('.DS_Store', 'Thumbs.db', 'notes.txt', 'scan.png'):
        (tmp_path / 'train' / 'CNV' / name).write_bytes(b'not an image')
    with caplog.at_level(logging.WARNING):
        split = reader.list_split(str(tmp_path), 'train')
    assert len(split.paths) == 2
    assert sorted(split.skipped['not_an_image']) == [
        'CNV/.DS_Store', 'CNV/Thumbs.db', 'CNV/notes.txt', 'CNV/scan.png']
    assert 'left out 4 entries that are not .jpeg/.jpg images in %s' % split.directory in (
        caplog.text)


def test_corrupt_jpegs_are_left_out_counted_and_logged_with_the_reason(tmp_path, caplog):
    write_folder_set(tmp_path, {'DME': 1})
    folder = tmp_path / 'train' / 'DME'
    (folder / 'empty.jpeg').write_bytes(b'')
    (folder / 'page.jpeg').write_bytes(b'<html>404</html>')
    whole = (folder / 'DME-0-1.jpeg').read_bytes()
    (folder / 'cut.jpeg').write_bytes(whole[:len(whole) // 2])
    with caplog.at_level(logging.WARNING):
        split = reader.list_split(str(tmp_path), 'train')
    assert [os.path.basename(path) for path in split.paths] == ['DME-0-1.jpeg']
    assert sorted(split.skipped['corrupt']) == [
        'DME/cut.jpeg (truncated: no end-of-image marker ff d9 at its end)',
        'DME/empty.jpeg (empty file)',
        'DME/page.jpeg (not a JPEG: it starts with 3c 68 74, not the start-of-image marker '
        'ff d8 ff)']
    assert 'left out 3 corrupt JPEG(s) in %s' % split.directory in caplog.text


def test_a_jpeg_with_a_short_trailer_after_its_end_marker_is_whole(tmp_path):
    path = write_jpeg(str(tmp_path / 'trailer.jpeg'))
    with open(path, 'ab') as f:
        f.write(b'\x00' * 100)
    assert reader.jpeg_problem(path) is None


def damage_between_markers(path):
    """Overwrites the first Huffman table of the JPEG at `path`: its markers stay in place (the
    listing keeps it) and libjpeg refuses it ('Bogus Huffman table definition')."""
    data = bytearray(open(path, 'rb').read())
    table = data.index(b'\xff\xc4')
    data[table + 4:table + 20] = b'\xff' * 16
    with open(path, 'wb') as f:
        f.write(bytes(data))


def test_a_jpeg_damaged_between_its_markers_fails_training_with_an_error_naming_it(tmp_path):
    write_folder_set(tmp_path, {'CNV': 3, 'DME': 3})
    damaged = str(tmp_path / 'train' / 'DME' / 'DME-1-1.jpeg')
    damage_between_markers(damaged)
    split = reader.list_split(str(tmp_path), 'train')
    assert damaged in split.paths and not split.skipped['corrupt']
    batch = reader.training_input(split, 8, 6)
    with pytest.raises(towers.TowersError) as raised:
        with reader.naming_bad_input(split.paths):
            run(batch)
    assert str(raised.value) == (
        'cannot decode image %s: jpeg::Uncompress failed. Invalid JPEG data or crop window; '
        'the file is damaged between its JPEG markers: replace or remove it' % damaged)


def test_a_damaged_jpeg_among_evaluated_paths_is_an_error_naming_it(tmp_path):
    paths = [write_jpeg(str(tmp_path / ('%d.jpeg' % index))) for index in range(3)]
    damage_between_markers(paths[2])
    with pytest.raises(towers.TowersError, match='cannot decode image %s: ' % paths[2]):
        with reader.naming_bad_input(paths):
            run(reader.evaluation_input(tf.constant(paths), 8))


def test_other_errors_pass_through_the_report_of_undecodable_images(tmp_path):
    path = write_jpeg(str(tmp_path / 'whole.jpeg'))
    with pytest.raises(tf.errors.InvalidArgumentError, match='Invalid JPEG data'):
        with reader.naming_bad_input([path]):
            # A decode failure whose file is not among the paths: nothing to name.
            run(tf.io.decode_jpeg(tf.constant(b'\xff\xd8\xff\xc4\x00\x02\xff\xd9')))
    with pytest.raises(tf.errors.InvalidArgumentError, match='label'):
        with reader.naming_bad_input([path]):
            run(tf.debugging.assert_less(tf.constant(200), 10, message='label'))


def test_folders_not_in_labels_are_left_out_and_logged(tmp_path, caplog):
    write_folder_set(tmp_path, {'CNV': 1, 'DME': 1, 'NORMAL': 2})
    os.makedirs(str(tmp_path / 'train' / '.ipynb_checkpoints'))
    with caplog.at_level(logging.WARNING):
        split = reader.list_split(str(tmp_path), 'train', ['NORMAL', 'CNV'])
    assert len(split.paths) == 3
    assert split.skipped['other_folder'] == ['.ipynb_checkpoints/', 'DME/']
    assert 'left out 2 folder(s) that are not classes' in caplog.text


def test_hidden_folders_are_not_classes(tmp_path):
    write_folder_set(tmp_path, {'CNV': 1, 'NORMAL': 1})
    os.makedirs(str(tmp_path / 'train' / '.ipynb_checkpoints'))
    assert reader.list_split(str(tmp_path), 'train').classes == ['CNV', 'NORMAL']


def test_an_empty_class_folder_is_an_error_naming_it(tmp_path):
    write_folder_set(tmp_path, {'CNV': 1})
    os.makedirs(str(tmp_path / 'train' / 'DME'))
    with pytest.raises(towers.TowersError, match='class folder %s holds no readable JPEG'
                       % (tmp_path / 'train' / 'DME')):
        reader.list_split(str(tmp_path), 'train')


def test_a_class_folder_of_corrupt_jpegs_only_is_an_error_naming_what_was_left_out(tmp_path):
    write_folder_set(tmp_path, {'CNV': 1})
    os.makedirs(str(tmp_path / 'train' / 'DME'))
    (tmp_path / 'train' / 'DME' / 'empty.jpeg').write_bytes(b'')
    with pytest.raises(towers.TowersError, match='DME holds no readable JPEG image \\(expected '
                       '.jpeg or .jpg files; left out: DME/empty.jpeg \\(empty file\\)\\)'):
        reader.list_split(str(tmp_path), 'train')


def test_a_class_of_labels_without_a_folder_is_an_error_listing_the_folders(tmp_path):
    write_folder_set(tmp_path, {'CNV': 1, 'DRUSEN': 1})
    with pytest.raises(towers.TowersError,
                       match='has no folder for class\\(es\\) DRUSSEN of --labels; its folders '
                             'are CNV, DRUSEN'):
        reader.list_split(str(tmp_path), 'train', ['CNV', 'DRUSSEN'])


def test_a_root_without_the_split_folder_is_an_error_giving_the_layout(tmp_path):
    write_folder_set(tmp_path, {'CNV': 1})
    with pytest.raises(towers.TowersError, match='--data_dir %s has no test/ folder; expected '
                       '<root>/train/<class>/\\*.jpeg' % tmp_path):
        reader.list_split(str(tmp_path), 'test')


@pytest.mark.parametrize('text, message', [
    ('CNV,,DME', 'has an empty class name'),
    ('CNV,DME,CNV', 'names CNV more than once'),
])
def test_labels_with_an_empty_or_repeated_name_are_an_error(text, message):
    with pytest.raises(towers.TowersError, match=message):
        reader.parse_labels(text)


def test_generated_set_has_oct2017s_layout_of_grayscale_jpegs(tmp_path):
    root = str(tmp_path / 'generated')
    synthetic.write_dataset(root, train_per_class=3, test_per_class=2, size=40)
    for split_name, count in (('train', 3), ('test', 2)):
        split = reader.list_split(root, split_name)
        assert split.classes == list(synthetic.CLASSES)
        assert np.bincount(split.labels).tolist() == [count] * len(synthetic.CLASSES)
        assert not any(split.skipped.values())
    first = split.paths[0]
    assert os.path.basename(first).startswith('CNV-') and first.endswith('-1.jpeg')
    with Image.open(first) as image:
        assert (image.format, image.mode, image.size) == ('JPEG', 'L', (40, 40))
