"""Specification of tf.contrib's small pieces (`summary`, `image`, `signal`, `stateless`,
`util`) beyond their numbers, which tests/data/legacy/contrib/case_small.py compares with TF
1.15: TF 1.x's import paths, and the errors TF 1.15 raised."""
import pytest

from towers.compat import tf
from towers.legacy import contrib
from towers.legacy.contrib import stateless, summary
from towers.legacy.contrib.image import dense_warp, splines, transforms
from towers.legacy.modules import RemovedAttributeError, Usage


def test_tf1_module_paths_give_the_pieces_modules():
    found = contrib.Contrib(Usage())
    ops = found.resolve('tensorflow.contrib.image.python.ops')
    assert ops.image_ops.rotate is transforms.rotate is found.root.image.rotate
    assert ops.dense_image_warp.dense_image_warp is dense_warp.dense_image_warp
    assert ops.sparse_image_warp.sparse_image_warp is splines.sparse_image_warp
    assert found.resolve('tensorflow.contrib.summary.summary').scalar is summary.scalar
    assert found.resolve('tensorflow.contrib.signal.python.ops.spectral_ops').stft is \
        tf.signal.stft


def test_an_image_op_without_a_kernel_in_tensorflow_2_stops_with_one_line():
    with pytest.raises(RemovedAttributeError, match=r'^tf\.contrib\.image\.connected_components '
                                                    r'is not available: .*tfa\.image'):
        contrib.Contrib(Usage()).root.image.connected_components


def test_transform_refuses_images_of_rank_5_and_strings():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match='rank between 2 and 4'):
            transforms.transform(tf.zeros([1, 2, 3, 4, 5]), [1, 0, 0, 0, 1, 0, 0, 0])
        with pytest.raises(TypeError, match='Invalid dtype'):
            transforms.rotate(tf.constant([['a']]), 0.5)


def test_a_transform_composed_with_its_inverse_is_the_identity():
    with tf.Graph().as_default(), tf.Session() as session:
        rotation = transforms.angles_to_projective_transforms(0.4, 5.0, 7.0)
        undo = transforms.angles_to_projective_transforms(-0.4, 5.0, 7.0)
        identity = session.run(transforms.compose_transforms(rotation, undo))
    assert identity[0] == pytest.approx([1, 0, 0, 0, 1, 0, 0, 0], abs=1e-6)


def test_stateless_uniform_integers_need_maxval():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match='must specify maxval'):
            stateless.stateless_random_uniform([2], seed=[1, 2], dtype=tf.int32)
        with pytest.raises(ValueError, match='invalid dtype'):
            stateless.stateless_random_uniform([2], seed=[1, 2], dtype=tf.int8)


def test_a_database_writer_refuses_a_user_name_that_is_no_linux_user_name():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match=r'user_name \(no user\) must match'):
            summary.create_db_writer('file:/nowhere.sqlite', user_name='no user')


def test_summaries_are_recorded_only_under_a_writer_and_a_recording_condition(tmp_path):
    with tf.Graph().as_default(), tf.Session() as session:
        outside = summary.scalar('loss', 1.0, step=0)
        writer = summary.create_file_writer(str(tmp_path))
        with writer.as_default():
            default_off = summary.should_record_summaries()
            with summary.always_record_summaries():
                recording = summary.should_record_summaries()
        assert isinstance(outside, tf.Operation) and outside.type == 'NoOp'
        assert session.run([default_off, recording]) == [False, True]
