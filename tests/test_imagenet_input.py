"""Specification of the ImageNet input: both on-disk forms, the reference's preprocessing, the
generated set, and bad input named by file and record."""
import os

import numpy as np
import pytest
from PIL import Image

import towers
from models.datasets.imagenet import reader, sources, synthetic
from towers.compat import tf

SIZE = 32


@pytest.fixture(scope='module')
def generated(tmp_path_factory):
    directory = str(tmp_path_factory.mktemp('imagenet') / synthetic.GENERATED_DIR)
    synthetic.generate(directory, train_per_class=2, validation_per_class=1)
    return directory


def run_all(tensors, num_batches):
    with tf.Session() as sess:
        return [sess.run(tensors) for _ in range(num_batches)]


def eval_batches(source, ten_crop=False):
    """Every image of `source` once, as (crops [n, k, S, S, 3], labels [n])."""
    crops, labels, num_batches = reader.evaluation_input(source, 4, SIZE, ten_crop)
    batches = run_all([crops, labels], num_batches)
    return (np.concatenate([b[0] for b in batches]), np.concatenate([b[1] for b in batches]))


def jpeg_of_size(height, width, seed=0):
    """A textured JPEG of the given size and its decoded pixels [h, w, 3] uint8."""
    image = synthetic.make_image(2, np.random.RandomState(seed))
    encoded = synthetic.encode_jpeg(np.asarray(Image.fromarray(image).resize((width, height))))
    with tf.Graph().as_default(), tf.Session() as sess:
        return encoded, sess.run(tf.io.decode_jpeg(encoded, channels=3))


def example(encoded=b'', label=1, drop=()):
    """A serialized record of the standard conversion, without the features in `drop`."""
    proto = synthetic.make_example(encoded, label, 'n01440764', 'x.JPEG', 10, 10)
    for name in drop:
        del proto.features.feature[name]
    return proto.SerializeToString()


def shard_dir(tmp_path, records, split=sources.TRAIN):
    """A data directory of one shard holding `records`; returns (directory, shard path)."""
    path = str(tmp_path / (sources.SHARD_FORMAT % (split, 0, 1)))
    synthetic.write_records(path, records)
    return str(tmp_path), path


def read_through(source, training=False):
    """Runs a pipeline over `source` as the scripts do: to its end, or for training 10
    batches of 2 (shuffled, so that every record of a tiny source is surely among them)."""
    with reader.naming_bad_input(source):
        if training:
            run_all(reader.training_input(source, 2, SIZE), 10)
        else:
            crops, labels, num_batches = reader.evaluation_input(source, 2, SIZE, False)
            run_all([crops, labels], num_batches)


def open_generated(directory, form, split=sources.TRAIN):
    """A split of the generated set in `directory`, as 'shards' or as a 'list file'."""
    if form == 'shards':
        return sources.Shards(directory, split)
    return sources.ListFile(os.path.join(directory, synthetic.LIST_FILES[split]),
                           os.path.join(directory, synthetic.IMAGE_DIRS[split]))


def test_generated_set_has_the_standard_shards_and_the_reference_list_files(generated):
    names = sorted(os.listdir(generated))
    assert [n for n in names if n.startswith('train-')] == [
        'train-%05d-of-00004' % i for i in range(4)]
    assert [n for n in names if n.startswith('validation-')] == [
        'validation-00000-of-00002', 'validation-00001-of-00002']
    with open(os.path.join(generated, 'validation_label.txt')) as f:
        lines = f.read().splitlines()
    assert len(lines) == len(synthetic.CLASSES)
    path, label = lines[0].split()
    assert path == 'ILSVRC2012_val_00000001.JPEG' and 0 <= int(label) < len(synthetic.CLASSES)


def test_generated_set_depends_only_on_seed_and_size(tmp_path):
    for name, seed in (('a', 0), ('b', 0), ('c', 1)):
        synthetic.generate(str(tmp_path / name), train_per_class=1, validation_per_class=1,
                           seed=seed)
    contents = {name: (tmp_path / name / 'validation-00000-of-00002').read_bytes()
                for name in 'abc'}
    assert contents['a'] == contents['b'] != contents['c']


def test_shards_and_list_file_of_the_generated_set_give_the_same_images_and_labels(generated):
    shards = open_generated(generated, 'shards', sources.VALIDATION)
    listed = open_generated(generated, 'list file', sources.VALIDATION)
    assert shards.num_examples == listed.num_examples == len(synthetic.CLASSES)
    from_shards, from_list = eval_batches(shards), eval_batches(listed)
    # The shards interleave the list's images; TFRecord labels 1..8 and list labels 0..7 both
    # become class indices 0..7.
    order = [np.lexsort((crops.reshape(len(crops), -1).sum(1), labels))
             for crops, labels in (from_shards, from_list)]
    np.testing.assert_array_equal(from_shards[1][order[0]], from_list[1][order[1]])
    np.testing.assert_array_equal(from_shards[0][order[0]], from_list[0][order[1]])
    assert sorted(from_list[1]) == list(range(len(synthetic.CLASSES)))


@pytest.mark.parametrize('form', ['shards', 'list file'])
def test_training_batches_are_normalised_crops_with_class_indices(generated, form):
    source = open_generated(generated, form)
    images, labels = reader.training_input(source, 6, SIZE)
    assert images.shape.as_list() == [6, SIZE, SIZE, 3] and images.dtype == tf.float32
    assert labels.shape.as_list() == [6] and labels.dtype == tf.int32
    batch_images, batch_labels = run_all([images, labels], 1)[0]
    assert set(batch_labels) <= set(range(len(synthetic.CLASSES)))
    lowest = (0 - np.array(reader.MEAN_RGB)) / reader.STDDEV_RGB
    highest = (255 - np.array(reader.MEAN_RGB)) / reader.STDDEV_RGB
    assert np.all(batch_images >= lowest - 1e-5) and np.all(batch_images <= highest + 1e-5)


def test_training_views_of_one_image_are_each_drawn_anew(tmp_path):
    encoded, _ = jpeg_of_size(60, 80)
    data_dir, _ = shard_dir(tmp_path, [example(encoded, 5)])
    images, labels = reader.training_input(sources.Shards(data_dir, sources.TRAIN), 6, SIZE)
    views, view_labels = run_all([images, labels], 1)[0]
    np.testing.assert_array_equal(view_labels, [4] * 6)
    assert len({view.tobytes() for view in views}) == 6


def test_evaluation_centre_crop_is_the_middle_of_the_image_scaled_to_the_eval_size(tmp_path):
    # An image whose shorter side already is 256 * 32 / 224 = 37 pixels is not resized.
    encoded, pixels = jpeg_of_size(reader.scaled_size(256, SIZE), 50)
    data_dir, _ = shard_dir(tmp_path, [example(encoded, 7)], sources.VALIDATION)
    crops, labels = eval_batches(sources.Shards(data_dir, sources.VALIDATION))
    top, left = (37 - SIZE) // 2, (50 - SIZE) // 2
    expected = (pixels[top:top + SIZE, left:left + SIZE] - np.array(reader.MEAN_RGB)) \
        / reader.STDDEV_RGB
    assert crops.shape == (1, 1, SIZE, SIZE, 3)
    np.testing.assert_allclose(crops[0, 0], expected, atol=1e-4)
    np.testing.assert_array_equal(labels, [6])


def test_ten_crops_are_centre_and_corners_then_the_same_of_the_mirror_image(tmp_path):
    encoded, pixels = jpeg_of_size(reader.scaled_size(256, SIZE), 50)
    data_dir, _ = shard_dir(tmp_path, [example(encoded, 7)], sources.VALIDATION)
    crops, _ = eval_batches(sources.Shards(data_dir, sources.VALIDATION), ten_crop=True)
    crops = crops[0] * reader.STDDEV_RGB + reader.MEAN_RGB
    assert crops.shape == (reader.NUM_TEN_CROPS, SIZE, SIZE, 3)
    height, width = pixels.shape[:2]
    corners = [((height - SIZE) // 2, (width - SIZE) // 2), (0, 0), (0, width - SIZE),
               (height - SIZE, 0), (height - SIZE, width - SIZE)]
    for view, image in enumerate([pixels, pixels[:, ::-1]]):
        for index, (top, left) in enumerate(corners):
            np.testing.assert_allclose(crops[5 * view + index],
                                       image[top:top + SIZE, left:left + SIZE], atol=1e-3)


def test_without_shards_a_set_is_generated_once_and_announced(tmp_path, caplog, monkeypatch):
    caplog.set_level('INFO', logger='towers.datasets')
    monkeypatch.setattr(synthetic, 'TRAIN_PER_CLASS', 1)
    monkeypatch.setattr(synthetic, 'VALIDATION_PER_CLASS', 1)
    first = synthetic.locate_or_generate(str(tmp_path), sources.TRAIN)
    assert first == str(tmp_path / synthetic.GENERATED_DIR)
    assert 'generated a set in the ImageNet format' in caplog.text
    caplog.clear()
    assert synthetic.locate_or_generate(str(tmp_path), sources.VALIDATION) == first
    assert 'generated a' not in caplog.text and 'using the GENERATED' in caplog.text


def test_shards_in_the_data_dir_take_precedence_over_a_generated_set(tmp_path):
    os.makedirs(str(tmp_path / synthetic.GENERATED_DIR))
    shard_dir(tmp_path, [example(jpeg_of_size(40, 40)[0])])
    assert synthetic.locate_or_generate(str(tmp_path), sources.TRAIN) == str(tmp_path)


def test_a_shard_that_is_not_a_tfrecord_file_is_an_error_naming_it_and_its_record(tmp_path):
    path = tmp_path / 'train-00000-of-00001'
    path.write_bytes(b'relative/path.JPEG 3\n' * 10)
    with pytest.raises(towers.TowersError,
                       match=r'%s, record 0: not a TFRecord record' % path):
        sources.Shards(str(tmp_path), sources.TRAIN)


def test_a_missing_shard_is_an_error_naming_it(tmp_path):
    for index in (0, 2):
        synthetic.write_records(str(tmp_path / ('train-%05d-of-00003' % index)), [])
    with pytest.raises(towers.TowersError, match='train shard train-00001-of-00003 is missing'):
        sources.Shards(str(tmp_path), sources.TRAIN)


def test_a_record_without_image_encoded_is_an_error_naming_the_shard_and_record(tmp_path):
    encoded, _ = jpeg_of_size(40, 40)
    data_dir, path = shard_dir(tmp_path, [example(encoded), example(encoded, 3,
                                                                    drop=['image/encoded'])])
    with pytest.raises(towers.TowersError,
                       match='^%s, record 1: the record has no image/encoded$' % path):
        read_through(sources.Shards(data_dir, sources.TRAIN), training=True)


@pytest.mark.parametrize('label', [0, 1001])
def test_a_label_outside_1_to_1000_is_an_error_naming_the_shard_and_record(tmp_path, label):
    encoded, _ = jpeg_of_size(40, 40)
    data_dir, path = shard_dir(tmp_path, [example(encoded, 1000), example(encoded, label)],
                               sources.VALIDATION)
    with pytest.raises(towers.TowersError, match='^%s, record 1: image/class/label is %d, '
                                                 'expected 1..1000$' % (path, label)):
        read_through(sources.Shards(data_dir, sources.VALIDATION))


def test_a_corrupt_jpeg_is_an_error_naming_the_shard_and_record(tmp_path):
    encoded, _ = jpeg_of_size(40, 40)
    data_dir, path = shard_dir(tmp_path, [example(encoded), example(encoded),
                                          example(encoded[:len(encoded) // 3])])
    with pytest.raises(towers.TowersError, match='^%s, record 2: image/encoded is not a JPEG '
                                                 'that can be decoded$' % path):
        read_through(sources.Shards(data_dir, sources.TRAIN), training=True)


def test_a_shard_corrupt_after_its_first_record_is_found_when_read_and_named(tmp_path,
                                                                          monkeypatch):
    # A complete standard split is not read through when opened (its size is known).
    monkeypatch.setitem(sources.STANDARD_SHARDS, sources.VALIDATION, (2, 6))
    encoded, _ = jpeg_of_size(40, 40)
    for index in range(2):
        synthetic.write_records(str(tmp_path / ('validation-%05d-of-00002' % index)),
                                [example(encoded)] * 3)
    path = tmp_path / 'validation-00001-of-00002'
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2] + b'\0' * (len(data) - len(data) // 2))
    source = sources.Shards(str(tmp_path), sources.VALIDATION)
    assert source.num_examples == 6
    with pytest.raises(towers.TowersError, match='%s, record 1: not a TFRecord record' % path):
        read_through(source)


def write_list(tmp_path, lines):
    images = tmp_path / 'images'
    os.makedirs(str(images / 'n01'), exist_ok=True)
    (images / 'n01' / 'a.JPEG').write_bytes(jpeg_of_size(40, 40)[0])
    list_file = tmp_path / 'list.txt'
    list_file.write_text(''.join(line + '\n' for line in lines))
    return str(list_file), str(images)


def test_a_list_file_naming_a_missing_image_is_an_error_naming_the_line(tmp_path):
    list_file, images = write_list(tmp_path, ['n01/a.JPEG 0', '', 'n01/b.JPEG 1'])
    with pytest.raises(towers.TowersError, match='^%s, line 3: the image %s does not exist$'
                                                 % (list_file, os.path.join(images,
                                                                            'n01/b.JPEG'))):
        sources.ListFile(list_file, images)


@pytest.mark.parametrize('line, message', [
    ('n01/a.JPEG 1000', 'label 1000 is outside the classes 0..999 of a list file'),
    ('n01/a.JPEG', "expected `relative/path.JPEG label`, got 'n01/a.JPEG'"),
])
def test_a_bad_list_line_is_an_error_naming_the_line(tmp_path, line, message):
    list_file, images = write_list(tmp_path, ['n01/a.JPEG 0', line])
    with pytest.raises(towers.TowersError) as raised:
        sources.ListFile(list_file, images)
    assert str(raised.value) == '%s, line 2: %s' % (list_file, message)


def test_a_corrupt_jpeg_in_a_list_is_an_error_naming_the_line_and_image(tmp_path):
    list_file, images = write_list(tmp_path, ['n01/a.JPEG 0', 'n01/bad.JPEG 1'])
    with open(os.path.join(images, 'n01', 'bad.JPEG'), 'wb') as f:
        f.write(b'\xff\xd8 not really a JPEG')
    with pytest.raises(towers.TowersError, match=r'^%s, line 2 \(%s\): image/encoded is not a '
                                                 r'JPEG' % (list_file, os.path.join(
                                                     images, 'n01/bad.JPEG'))):
        read_through(sources.ListFile(list_file, images))
