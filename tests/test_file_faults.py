"""The fault battery, in files: damaged checkpoints, a checkpoint rotated away under an
evaluation, bad records and flags, errors raised inside the graph, a full disk. Each gives one
`error:` line naming what is at fault, or is skipped with a line naming it; the processes'
faults are in tests/test_faults.py.
"""
import errno
import logging
import os
import re

import pytest

import cluster_train_program
import towers
from models.datasets.cifar10 import synthetic as cifar10_synthetic
from models.datasets.kolektor import synthetic as kolektor_synthetic
from script_runs import assert_one_error_line, run_cli, script_main, train_program
from towers import evaluation
from towers.compat import tf
from towers.files import write_file_atomically, write_json
from towers.training import checkpoints


def test_a_truncated_newest_data_file_is_skipped_with_a_line_naming_it(tmp_path, caplog):
    assert train_program(tmp_path, 20, '--save_checkpoint_steps', '10') == 0
    data = tmp_path / 'model.ckpt-20.data-00000-of-00001'
    data.write_bytes(data.read_bytes()[:-8])
    with caplog.at_level(logging.INFO):
        assert train_program(tmp_path, 21) == 0
    assert re.search(r'skipping checkpoint \S+/model\.ckpt-20: its data \S+/model\.ckpt-20\.'
                     r'data-\* cannot be read \(tensor \S+: ', caplog.text), caplog.text
    assert 'resuming from step 10 in' in caplog.text


def test_a_garbage_newest_index_is_skipped_with_a_line_naming_it(tmp_path, caplog):
    assert train_program(tmp_path, 20, '--save_checkpoint_steps', '10') == 0
    (tmp_path / 'model.ckpt-20.index').write_bytes(b'garbage' * 20)
    with caplog.at_level(logging.INFO):
        assert train_program(tmp_path, 21) == 0
    assert re.search(r'skipping checkpoint \S+/model\.ckpt-20: its index \S+/model\.ckpt-20\.'
                     r'index cannot be read \(not an sstable', caplog.text), caplog.text
    assert 'resuming from step 10 in' in caplog.text


def test_with_no_checkpoint_readable_training_stops_with_one_line_naming_the_directory(
        tmp_path, capsys):
    assert train_program(tmp_path, 20, '--save_checkpoint_steps', '10') == 0
    for index in tmp_path.glob('*.index'):
        index.write_bytes(b'garbage')
    status, stderr = run_cli(capsys, cluster_train_program.main, '--train_dir', str(tmp_path),
                             '--max_steps', '30', '--num_gpus', '1')
    assert_one_error_line(status, stderr, r'error: no readable checkpoint in %s: all 2 are '
                                          r'damaged \(newest model\.ckpt-20: .*; move them '
                                          r'away to start from scratch' % re.escape(str(tmp_path)))


def test_evaluation_moves_on_when_the_checkpoint_it_reads_is_rotated_away(tmp_path, caplog):
    assert train_program(tmp_path, 20, '--save_checkpoint_steps', '10') == 0
    read = []

    def evaluate(checkpoint):
        read.append(os.path.basename(checkpoint))
        if len(read) == 1:
            # The training rotates it away meanwhile, as its saver does past max_to_keep.
            tf.train.remove_checkpoint(checkpoint)
        tf.train.load_checkpoint(checkpoint).get_tensor('global_step')

    with caplog.at_level(logging.WARNING):
        evaluation.poll_checkpoints(str(tmp_path), evaluate, run_once=True, interval_secs=60)
    assert read == ['model.ckpt-20', 'model.ckpt-10']
    assert re.search(r'checkpoint \S+/model\.ckpt-20 was deleted while it was read',
                     caplog.text)


def test_a_cifar10_label_out_of_range_is_one_line_naming_file_and_record(tmp_path, capsys):
    batches_dir = tmp_path / cifar10_synthetic.GENERATED_DIR
    cifar10_synthetic.generate(str(batches_dir), records_per_file=5)
    path = batches_dir / 'data_batch_3.bin'
    records = bytearray(path.read_bytes())
    records[2 * 3073] = 200
    path.write_bytes(bytes(records))
    status, stderr = run_cli(capsys, script_main('train_cifar10_multi_gpu.py'), '--data_dir',
                             str(tmp_path), '--train_dir', str(tmp_path / 'train'),
                             '--max_steps', '1', '--batch_size', '2')
    assert_one_error_line(status, stderr, re.escape(
        'error: bad CIFAR-10 record in %s: record 2 (byte 6146) has label 200, expected a '
        'class 0..9' % path))


def test_a_truncated_kolektor_image_is_one_line_naming_it(tmp_path, capsys):
    data_dir = tmp_path / 'kolektor'
    kolektor_synthetic.write_dataset(str(data_dir), num_items=2, parts_per_item=2, height=64,
                                     width=32, defect_fraction=0.5)
    image = data_dir / 'kos01' / 'Part1.jpg'
    image.write_bytes(image.read_bytes()[:200])
    status, stderr = run_cli(capsys, script_main('train_segdec.py'), '--data_dir',
                             str(data_dir), '--train_dir', str(tmp_path / 'train'),
                             '--image_height', '64', '--image_width', '32', '--max_steps', '1')
    assert_one_error_line(status, stderr, r'error: cannot read image %s: .+' % re.escape(
        str(image)))


@pytest.mark.parametrize('script, flag, kind, expected', [
    ('train_cifar10_multi_gpu.py', '--data_dir', 'file', 'expected a directory, but {} is a '
                                                         'file'),
    ('train_cifar10_multi_gpu.py', '--train_dir', 'file', 'expected a directory, but {} is a '
                                                          'file'),
    ('cifar10_eval.py', '--checkpoint_dir', 'missing', 'expected an existing directory, but {} '
                                                       'does not exist'),
    ('eval_segdec.py', '--checkpoint_path', 'folder', 'expected a checkpoint prefix such as '
                                                      '{}/model.ckpt-<step>, but {} is a '
                                                      'directory'),
    ('eval_segdec.py', '--out_dir', 'under a file', 'expected a directory, but {} is a file'),
])
def test_a_path_flag_naming_the_wrong_kind_of_thing_is_one_line_naming_it(
        tmp_path, capsys, script, flag, kind, expected):
    path = tmp_path / 'thing'
    culprit = path
    if kind in ('file', 'under a file'):
        path.write_text('')
    elif kind == 'folder':
        path.mkdir()
    if kind == 'under a file':
        path = path / 'out'
    status, stderr = run_cli(capsys, script_main(script), flag, str(path))
    assert_one_error_line(status, stderr, re.escape('error: argument %s: %s' % (
        flag, expected.format(culprit, culprit))))


def test_a_reader_error_raised_inside_the_graph_is_one_line_naming_the_file(tmp_path, capsys):
    path = tmp_path / 'data_batch_1.bin'
    path.write_bytes(bytes(100))

    def main(argv):
        records = tf.data.FixedLengthRecordDataset([str(path)], 3073)
        with tf.Session() as sess:
            sess.run(tf.data.make_one_shot_iterator(records).get_next())

    status, stderr = run_cli(capsys, main)
    assert_one_error_line(status, stderr, r'error: reading the input data failed \(in '
                                          r'IteratorGetNext\): .*input file "%s".*'
                                          % re.escape(str(path)))


def test_a_label_out_of_range_inside_the_graph_is_one_line_calling_it_bad_input(capsys):
    def main(argv):
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.constant([3, 200]), logits=tf.zeros([2, 10]), name='cross_entropy')
        with tf.Session() as sess:
            sess.run(loss)

    status, stderr = run_cli(capsys, main)
    assert_one_error_line(status, stderr, r'error: bad input data \(in cross_entropy\S*\): '
                                          r'Received a label value of 200 which is outside the '
                                          r'valid range of \[0, 10\).*; check the labels of the '
                                          r'data set')


def test_any_other_os_error_is_one_line_naming_the_path(tmp_path, capsys):
    def main(argv):
        open(str(tmp_path), 'w')

    status, stderr = run_cli(capsys, main)
    assert_one_error_line(status, stderr, re.escape('error: cannot use %s: Is a directory'
                                                    % tmp_path))


class DiskFullSaver(tf.train.Saver):
    """A saver whose saves fail from a given step on as TensorFlow's fail on a full disk: part
    of the data file written under a temporary name, then ResourceExhaustedError."""

    def __init__(self, full_from_step, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._full_from = full_from_step

    def save(self, sess, save_path, global_step=None, **kwargs):
        if global_step < self._full_from:
            return super().save(sess, save_path, global_step=global_step, **kwargs)
        partial = '%s-%d.data-00000-of-00001.tempstate42' % (save_path, global_step)
        with open(partial, 'wb') as f:
            f.write(bytes(64))
        raise tf.errors.ResourceExhaustedError(None, None, '%s; No space left on device'
                                               % partial)


def train_linear(train_dir, max_steps, saver=None):
    """Trains y = w x to `max_steps` with checkpoints every 10 steps; returns the result."""
    with tf.Graph().as_default():
        global_step = tf.train.get_or_create_global_step()
        weight = tf.get_variable('w', [], initializer=tf.zeros_initializer())
        loss = tf.square(weight * 2.0 - 1.0)
        train_op = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step)
        return towers.train(train_op, loss, global_step, str(train_dir), max_steps,
                            examples_per_step=1, save_checkpoint_steps=10,
                            saver=saver and saver(tf.global_variables()),
                            printer=lambda *args, **kwargs: None)


def test_a_full_disk_while_checkpointing_says_so_and_the_previous_checkpoint_resumes(tmp_path):
    with pytest.raises(towers.TowersError) as raised:
        train_linear(tmp_path, 30, saver=lambda variables: DiskFullSaver(20, variables))
    assert re.fullmatch(r'the disk is full: cannot write checkpoint \S+/model\.ckpt-20 \(\S+'
                        r'; No space left on device\); the previous checkpoint \S+/model\.ckpt-'
                        r'10 is intact, and a restart resumes from it', str(raised.value))
    assert checkpoints.newest_readable(str(tmp_path)).endswith('model.ckpt-10')
    assert train_linear(tmp_path, 30).steps_done == 30


def test_a_full_disk_while_writing_a_report_says_so_and_the_previous_report_stays(tmp_path,
                                                                                  capsys):
    report = tmp_path / 'results.json'
    write_json(str(report), {'average_precision': 0.9})
    before = report.read_text()

    def fill_the_disk_half_way(temporary):
        with open(temporary, 'w') as f:
            f.write('{"average_prec')
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    status, stderr = run_cli(capsys, lambda argv: write_file_atomically(
        str(report), fill_the_disk_half_way))
    assert_one_error_line(status, stderr, re.escape(
        'error: the disk is full: cannot write %s (No space left on device)' % report))
    assert report.read_text() == before
    assert os.listdir(tmp_path) == ['results.json']
