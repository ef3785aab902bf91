"""Specification of the parts of TensorFlow 1 and SciPy the legacy runner provides (`tf.contrib`,
`scipy.misc`), and of the one line for every other part, built here without installing them."""
import os

import numpy as np
import pytest
from PIL import Image

from towers.compat import keras, slim, tf
from towers.legacy import contrib, scipy_misc
from towers.legacy.contrib import bucketing, lookup, nccl, tfprof
from towers.legacy.modules import LegacyError, RemovedAttributeError, Usage


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


def test_a_piece_the_runner_lacks_imports_and_its_names_fail_as_attribute_errors():
    found = contrib.Contrib(Usage())
    assert not hasattr(found.root.quantize, 'create_training_graph')
    with pytest.raises(RemovedAttributeError, match=r'^tf\.contrib\.quantize\.create_eval_graph '
                                                    r'is not available: .*use the TensorFlow '
                                                    r'Model Optimization Toolkit'):
        found.root.quantize.create_eval_graph
    assert found.resolve('tensorflow.contrib.quantize.python.ops') is not None


def test_a_name_from_imported_from_a_missing_piece_fails_where_it_is_called():
    estimator = contrib.Contrib(Usage()).resolve('tensorflow.contrib.learn.Estimator')
    with pytest.raises(LegacyError, match=r"^tf\.contrib\.learn\.Estimator is not available: "
                                          r"towers-legacy's tf\.contrib\.learn does not have "
                                          r"it; use tf\.estimator or tf\.keras$"):
        estimator(model_fn=None)


def test_subclassing_a_name_from_imported_from_a_missing_piece_fails_with_the_same_line():
    base = contrib.Contrib(Usage()).resolve('tensorflow.contrib.quantize.Helper')
    with pytest.raises(LegacyError, match=r"^tf\.contrib\.quantize\.Helper is not available: "
                                          r".*Model Optimization Toolkit"):
        class Subclass(base):  # pylint: disable=unused-variable
            pass


def test_framework_gives_tf1s_nest_and_the_name_scope_where_it_is_called():
    framework = contrib.Contrib(Usage()).root.framework
    assert framework.nest.is_sequence([1]) and not framework.nest.is_sequence(1)
    assert framework.nest.map_structure(lambda x: x * 2, (1, [2])) == (2, [4])
    with tf.Graph().as_default(), tf.name_scope('outer'), tf.name_scope('inner'):
        assert framework.get_name_scope() == 'outer/inner'


def test_tensorboards_projector_is_at_its_contrib_path():
    found = contrib.Contrib(Usage())
    projector = found.resolve('tensorflow.contrib.tensorboard.plugins.projector')
    config = projector.ProjectorConfig()
    config.embeddings.add().tensor_name = 'embedding'
    assert callable(projector.visualize_embeddings) and len(config.embeddings) == 1


def test_a_name_that_was_never_a_contrib_piece_is_an_attribute_error():
    assert not hasattr(contrib.Contrib(Usage()).root, 'no_such_piece')


def test_submodule_paths_give_the_pieces_names_and_tf1s_submodules():
    found = contrib.Contrib(Usage())
    ops = found.resolve('tensorflow.contrib.framework.python.ops')
    layers = found.resolve('tensorflow.contrib.layers.python.layers')
    assert ops.arg_scope is slim.arg_scope and ops.add_arg_scope is slim.add_arg_scope
    assert ops.variables.get_variables_to_restore is slim.get_variables_to_restore
    assert layers.conv2d is found.root.layers.conv2d is slim.conv2d
    assert layers.layers.conv2d is slim.conv2d
    assert layers.utils.collect_named_outputs is slim.utils.collect_named_outputs
    assert found.resolve('tensorflow.contrib.nccl.python.ops.nccl_ops').all_sum is \
        found.root.nccl.all_sum


def test_group_norm_is_in_contrib_layers_and_training_has_tf_slims_loops():
    root = contrib.Contrib(Usage()).root
    assert root.layers.group_norm is slim.group_norm
    assert root.training.multiply_gradients is slim.training.multiply_gradients
    assert root.training.evaluate_repeatedly is slim.evaluation.evaluate_repeatedly
    assert root.keras.layers.Dense is keras.layers.Dense


def test_nccl_all_sum_gives_each_virtual_cpu_device_the_sum():
    tensors = []
    for i in range(2):
        with tf.device('/cpu:%d' % i):
            tensors.append(tf.constant([1.0, 2.0]) * (i + 1))
    sums = nccl.all_sum(tensors)
    assert [total.device for total in sums] == ['/device:CPU:0', '/device:CPU:1']
    with tf.Session(config=tf.ConfigProto(device_count={'CPU': 2})) as sess:
        assert sess.run(sums)[1].tolist() == [3.0, 6.0]


def test_a_disabled_profile_context_does_nothing_and_an_enabled_one_stops():
    with tfprof.ProfileContext(enabled=False, profile_dir=None) as context:
        context.add_auto_profiling('op', None, [1])
    with pytest.raises(LegacyError, match=r'ProfileContext\(enabled=True\) is not available'):
        tfprof.ProfileContext('/tmp/profile')


def test_print_model_analysis_counts_the_trainable_parameters():
    tf.get_variable('weights', [3, 4])
    analysis = tfprof.print_model_analysis(tf.get_default_graph())
    assert analysis.total_parameters == 12


def test_vocabulary_file_tables_map_words_to_ids_and_back(tmp_path):
    vocabulary = tmp_path / 'vocabulary.txt'
    vocabulary.write_text('a\nb\nc\n')
    ids = lookup.index_table_from_file(str(vocabulary)).lookup(tf.constant(['c', 'zebra']))
    words = lookup.index_to_string_table_from_file(str(vocabulary)).lookup(
        tf.constant([0, 5], tf.int64))
    assert run(ids).tolist() == [2, -1]
    assert run(words).tolist() == [b'a', b'UNK']


def test_index_to_string_table_from_tensor_gives_each_id_its_word():
    words = lookup.index_to_string_table_from_tensor(['a', 'b']).lookup(
        tf.constant([1, 2], tf.int64))
    assert run(words).tolist() == [b'b', b'UNK']


def test_batch_and_drop_remainder_keeps_only_whole_batches():
    dataset = tf.data.Dataset.range(10).apply(lookup.batch_and_drop_remainder(4))
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


def test_bucket_by_sequence_length_batches_examples_of_one_bucket_padded_to_the_longest():
    lengths, = tf.train.slice_input_producer([tf.constant([1, 5, 2, 6, 1, 5, 2, 6])],
                                             shuffle=False)
    batch_lengths, (sequences,) = bucketing.bucket_by_sequence_length(
        lengths, [tf.range(lengths)], batch_size=2, bucket_boundaries=[3], dynamic_pad=True)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = tf.train.start_queue_runners(sess, coord)
        batches = [sess.run([batch_lengths, sequences]) for _ in range(4)]
        coord.request_stop()
        coord.join(threads)
    for length, sequence in batches:
        shorter, longer = sorted(length.tolist())
        assert (shorter, longer) in ((1, 2), (5, 6))
        assert sequence.shape == (2, longer)
        assert sequence[length.argmin()].tolist() == list(range(shorter)) + [0] * (
            longer - shorter)


def test_the_readme_shows_the_table_of_provided_pieces_as_the_runner_has_it():
    readme = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          'docs', 'legacy-runner.md')
    with open(readme, encoding='utf-8') as f:
        assert contrib.provided_markdown() in f.read()
