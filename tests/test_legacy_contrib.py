"""Specification of the parts of TensorFlow 1 and SciPy the legacy runner provides (`tf.contrib`,
`scipy.misc`), and of the one line for every other part, built here without installing them."""
import numpy as np
import pytest
from PIL import Image

from towers.compat import slim, tf
from towers.legacy import contrib, scipy_misc
from towers.legacy.modules import RemovedAttributeError, RemovedModuleError, Usage


def run(fetches):
    with tf.Session() as sess:
        sess.run(tf.tables_initializer())
        return sess.run(fetches)


def test_contrib_parts_provided_come_from_tf_slim_and_tf():
    usage = Usage()
    root = contrib.Contrib(usage).root
    assert root.layers.xavier_initializer is slim.xavier_initializer
    assert root.framework.arg_scope is slim.arg_scope
    assert root.data.shuffle_and_repeat is tf.data.experimental.shuffle_and_repeat
    assert usage.pieces == ['tf.contrib.layers', 'tf.contrib.framework', 'tf.contrib.data']


def test_a_removed_contrib_part_is_an_attribute_and_import_error_for_code_that_probes():
    found = contrib.Contrib(Usage())
    assert not hasattr(found.root, 'seq2seq')
    with pytest.raises(RemovedAttributeError, match=r'^tf\.contrib\.layers\.embed_sequence is '
                                                    r'not available: towers-legacy'):
        found.root.layers.embed_sequence
    with pytest.raises(RemovedModuleError, match=r'^tf\.contrib\.nccl\.ops is not available: '
                                                 r'.*use tf\.distribute\.NcclAllReduce'):
        found.resolve('tensorflow.contrib.nccl.ops')


def test_slim_submodules_import_as_contrib_slim_submodules():
    nets = contrib.Contrib(Usage()).resolve('tensorflow.contrib.slim.nets')
    assert nets.resnet_v1 is slim.nets.resnet_v1


def test_vocabulary_file_tables_map_words_to_ids_and_back(tmp_path):
    vocabulary = tmp_path / 'vocabulary.txt'
    vocabulary.write_text('a\nb\nc\n')
    ids = contrib.index_table_from_file(str(vocabulary)).lookup(tf.constant(['c', 'zebra']))
    words = contrib.index_to_string_table_from_file(str(vocabulary)).lookup(
        tf.constant([0, 5], tf.int64))
    assert run(ids).tolist() == [2, -1]
    assert run(words).tolist() == [b'a', b'UNK']


def test_index_to_string_table_from_tensor_gives_each_id_its_word():
    words = contrib.index_to_string_table_from_tensor(['a', 'b']).lookup(
        tf.constant([1, 2], tf.int64))
    assert run(words).tolist() == [b'b', b'UNK']


def test_batch_and_drop_remainder_keeps_only_whole_batches():
    dataset = tf.data.Dataset.range(10).apply(contrib.batch_and_drop_remainder(4))
    next_batch = tf.data.make_one_shot_iterator(dataset).get_next()
    with tf.Session() as sess:
        assert [sess.run(next_batch).tolist() for _ in range(2)] == [[0, 1, 2, 3], [4, 5, 6, 7]]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(next_batch)


def test_imresize_of_a_uint8_image_resizes_as_pillow_does():
    image = np.random.RandomState(0).randint(0, 256, [6, 8, 3]).astype(np.uint8)
    expected = Image.fromarray(image).resize((4, 3), Image.Resampling.BILINEAR)
    np.testing.assert_array_equal(scipy_misc.imresize(image, (3, 4)), np.array(expected))


def test_imresize_scales_a_float_image_onto_0_255_as_scipy_did():
    resized = scipy_misc.imresize(np.array([[0.0, 0.5], [1.0, 1.0]]), 100, interp='nearest')
    np.testing.assert_array_equal(resized, [[0, 128], [255, 255]])


def test_imsave_then_imread_gives_the_image_back(tmp_path):
    image = np.random.RandomState(0).randint(0, 256, [5, 7, 3]).astype(np.uint8)
    scipy_misc.imsave(str(tmp_path / 'image.png'), image)
    np.testing.assert_array_equal(scipy_misc.imread(str(tmp_path / 'image.png')), image)
    assert scipy_misc.imread(str(tmp_path / 'image.png'), flatten=True).dtype == np.float32


def test_other_scipy_misc_names_stop_with_one_line():
    misc = scipy_misc.resolve(Usage())('scipy.misc')
    with pytest.raises(RemovedAttributeError, match=r'^scipy\.misc\.face is not available: '
                                                    r'SciPy removed scipy\.misc'):
        misc.face
