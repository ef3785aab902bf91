"""Specification of what every data set shares (towers/datasets.py): finding the real set or
generating one in its format, opening images, and naming a bad input in one line."""
import importlib
import logging
import os

import numpy as np
import pytest
from PIL import Image

import towers
from towers import datasets
from towers.compat import tf

PACKAGES = ['cifar10', 'fashion_mnist', 'image_folder', 'imagenet', 'kolektor',
            'segmentation_folder']


def parse_number(text):
    return tf.strings.to_number(text, tf.int32)


def counting_format(generated):
    """A format whose set is a folder holding 'data.txt'; `generated` counts the sets made."""
    def find(directory):
        return directory if os.path.exists(os.path.join(directory, 'data.txt')) else None

    def generate(directory):
        generated.append(directory)
        os.makedirs(directory)
        open(os.path.join(directory, 'data.txt'), 'w').close()
    return datasets.Format('Toy', find, generate, 'toy-generated', 'data.txt', 'one file',
                           default_dir=None, own_folder=False)


def test_a_set_in_the_directory_is_used_as_it_is(tmp_path, caplog):
    (tmp_path / 'data.txt').write_text('real')
    made = []
    with caplog.at_level(logging.INFO):
        assert datasets.locate_or_generate(str(tmp_path), counting_format(made)) == str(tmp_path)
    assert not made and 'using Toy in %s' % tmp_path in caplog.text


def test_without_a_set_one_is_generated_once_beside_where_the_real_one_goes(tmp_path, caplog):
    made = []
    with caplog.at_level(logging.INFO):
        first = datasets.locate_or_generate(str(tmp_path / 'new'), counting_format(made))
        second = datasets.locate_or_generate(str(tmp_path / 'new'), counting_format(made))
    assert first == second == str(tmp_path / 'new' / 'toy-generated')
    assert made == [first]
    assert caplog.text.count('no Toy in %s: generated a set in the Toy format there (one file)'
                             % (tmp_path / 'new')) == 1
    assert caplog.text.count('using the GENERATED Toy-format data set in %s; put data.txt '
                             'into %s to use the real Toy' % (first, tmp_path / 'new')) == 2


def test_a_users_own_folder_is_read_as_it_is_and_only_the_default_place_gets_a_set(tmp_path):
    made = []
    own = counting_format(made)._replace(default_dir=str(tmp_path / 'default'), own_folder=True)
    assert datasets.locate_or_generate(str(tmp_path / 'mine'), own) == str(tmp_path / 'mine')
    assert not made
    assert datasets.locate_or_generate(None, own) == str(tmp_path / 'default' / 'toy-generated')
    assert made == [str(tmp_path / 'default' / 'toy-generated')]


@pytest.mark.parametrize('package', PACKAGES)
def test_every_data_set_package_offers_the_same_names(package):
    module = importlib.import_module('models.datasets.' + package)
    for name in ('locate_or_generate', 'training_input', 'evaluation_input',
                 'validation_input', 'DEFAULT_DATA_DIR'):
        assert hasattr(module, name), '%s lacks %s' % (package, name)


def test_an_unreadable_image_is_one_error_naming_what_and_the_file(tmp_path):
    path = tmp_path / 'Part0.jpg'
    path.write_bytes(b'not a jpeg')
    with pytest.raises(towers.TowersError, match=r'^cannot read the image %s: ' % path):
        datasets.open_image(str(path), 'L', 'the image')
    with pytest.raises(towers.TowersError, match=r'^the mask is missing: %s$'
                                                 % (tmp_path / 'none.bmp')):
        datasets.open_image(str(tmp_path / 'none.bmp'), 'L', 'the mask')
    Image.fromarray(np.zeros([2, 3, 3], np.uint8)).save(str(tmp_path / 'ok.png'))
    assert datasets.open_image(str(tmp_path / 'ok.png'), 'L', 'x').size == (3, 2)


def test_the_first_input_the_op_fails_on_is_named_with_tensorflows_cause():
    assert datasets.first_failing(['1', '2', 'three', 'four'], parse_number) == (
        'three', 'StringToNumberOp could not correctly convert string: three')
    assert datasets.first_failing(['1', '2'], parse_number) is None


def test_a_pipelines_failure_becomes_one_error_naming_the_input_it_failed_on():
    values = ['1', '2', 'x3']
    dataset = tf.data.Dataset.from_tensor_slices(values).map(parse_number).batch(3)
    batch = tf.data.make_one_shot_iterator(dataset).get_next()
    search = datasets.Search(values, parse_number, lambda err: True,
                             lambda value, cause: 'bad number %s: %s' % (value, cause))
    with pytest.raises(towers.TowersError, match=r'^bad number x3: StringToNumberOp'):
        with datasets.naming_bad_input(search):
            with tf.Session() as session:
                session.run(batch)


def test_a_failed_in_graph_check_becomes_one_error_with_its_own_words():
    records = tf.data.Dataset.from_tensor_slices(['a', 'bad', 'c'])

    def checked(record):
        with tf.control_dependencies([datasets.check(
                tf.not_equal(record, 'bad'), tf.strings.join(['shard-1: record ', record]))]):
            return tf.identity(record)

    batch = tf.data.make_one_shot_iterator(records.map(checked).batch(3)).get_next()
    with pytest.raises(towers.TowersError, match=r'^shard-1: record bad$'):
        with datasets.naming_bad_input():
            with tf.Session() as session:
                session.run(batch)


def test_a_corrupt_file_is_named_by_the_set_s_own_check_of_its_files():
    def check_files():
        raise towers.TowersError('train-00001-of-00004 is not a TFRecord file')

    with pytest.raises(towers.TowersError, match='is not a TFRecord file'):
        with datasets.naming_bad_input(check_files=check_files):
            raise tf.errors.DataLossError(None, None, 'corrupted record at 12')
