"""The Fashion-MNIST scripts end to end on tiny settings: train on 2 towers, evaluate."""
import json
import os
import re

import numpy as np
import pytest

from checkpoint_bytes import differing
from models.datasets.fashion_mnist import reader
from script_runs import (DETERMINISTIC, LOG_LINE, copy_with_damaged_newest, evaluation_events,
                         run_in_process, run_script, skipped_line)


def train(data_dir, train_dir, *flags, run=run_script):
    return run('train_fashion_mnist.py', '--num_gpus', '2', '--batch_size', '4', '--data_dir',
               data_dir, '--train_dir', train_dir, *flags)


def write_tiny_set(data_dir, num_train, compress=True):
    rs = np.random.RandomState(0)
    for split, num in (('train', num_train), ('test', 8)):
        reader.write_split(data_dir, split, rs.randint(0, 256, [num, 28, 28]),
                           rs.randint(0, 10, num), compress=compress)


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    data_dir = str(tmp_path_factory.mktemp('fashion_mnist_data'))
    train_dir = str(tmp_path_factory.mktemp('fashion_mnist_train'))
    return data_dir, train_dir, train(data_dir, train_dir, '--max_steps', '11',
                                      '--log_device_placement=false', '--eval_every_steps', '10',
                                      *DETERMINISTIC)


def test_training_without_data_generates_a_set_and_says_so(trained):
    data_dir, _, result = trained
    assert result.returncode == 0, result.stderr
    assert 'using the GENERATED Fashion-MNIST-format data set in %s' % os.path.join(
        data_dir, 'fashion-mnist-generated') in result.stderr
    assert '2 towers on 2 virtual CPU devices' in result.stderr


def test_training_logs_the_tutorials_line_and_writes_a_checkpoint_and_its_timing(trained):
    _, train_dir, result = trained
    assert [int(step) for step in LOG_LINE.findall(result.stdout)] == [0, 10]
    assert re.findall(r'step (\d+), validation accuracy = [01]\.\d{4} \(1000 examples',
                      result.stdout) == ['10', '11']
    assert os.path.exists(os.path.join(train_dir, 'model.ckpt-11.index'))
    with open(os.path.join(train_dir, 'timing.json')) as f:
        timing = json.load(f)
    assert len(timing['step_secs']) == 11 and timing['examples_per_step'] == 8
    assert re.search(r'11 steps in .*; mean \d+\.\d{3} s/step', result.stderr)


def test_five_steps_then_resumed_to_eleven_train_the_bytes_of_eleven_in_one_run(trained,
                                                                              tmp_path):
    data_dir, train_dir, _ = trained
    for steps in ('5', '11'):
        result = train(data_dir, str(tmp_path), '--max_steps', steps, *DETERMINISTIC)
        assert result.returncode == 0, result.stderr
    assert differing(str(tmp_path / 'model.ckpt-11'),
                     os.path.join(train_dir, 'model.ckpt-11')) == []


def test_evaluation_writes_accuracy_and_a_confusion_matrix(trained, tmp_path):
    data_dir, train_dir, _ = trained
    out_dir = tmp_path / 'eval'
    result = run_script('eval_fashion_mnist.py', '--train_dir', train_dir, '--data_dir',
                        data_dir, '--out_dir', str(out_dir), '--batch_size', '250')
    assert result.returncode == 0, result.stderr
    results = json.loads((out_dir / 'results.json').read_text())
    assert 0.0 <= results['accuracy'] <= 1.0
    assert results['num_examples'] == 1000
    assert np.sum(results['confusion_matrix']) == 1000
    assert (out_dir / 'confusion_matrix.png').read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
    assert re.search(r'model\.ckpt-11: accuracy [01]\.\d{4} on 1000 test images', result.stdout)
    assert re.search(r'^progress: evaluation 4/4 batches \(100%\), \d+\.\d\d batches/sec, '
                     r'00:00 left$', result.stderr, re.MULTILINE), result.stderr
    events = evaluation_events(train_dir)
    assert events['accuracy'] == (11, pytest.approx(results['accuracy']))
    assert events['confusion_matrix'] == (11, 'image')


def test_epochs_of_real_unpacked_files_make_the_steps(tmp_path):
    write_tiny_set(str(tmp_path), num_train=24, compress=False)
    result = train(str(tmp_path), str(tmp_path / 'train'), '--epochs', '2')
    assert result.returncode == 0, result.stderr
    assert 'using Fashion-MNIST in %s' % tmp_path in result.stderr
    # 2 epochs of 24 images in global batches of 2 towers x 4.
    assert os.path.exists(str(tmp_path / 'train' / 'model.ckpt-6.index'))


def test_a_truncated_file_is_one_error_line_naming_it(tmp_path):
    write_tiny_set(str(tmp_path), num_train=8)
    path = tmp_path / 'train-images-idx3-ubyte.gz'
    path.write_bytes(path.read_bytes()[:-30])
    result = train(str(tmp_path), str(tmp_path / 'train'), run=run_in_process)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        'error: truncated gzip file %s: it ends before its compressed data does (expected a '
        'whole IDX file compressed with gzip)' % path)
    assert 'Traceback' not in result.stderr
    assert not (tmp_path / 'train').exists()


def test_evaluation_skips_a_damaged_newest_checkpoint_with_a_line_naming_it(trained, tmp_path):
    data_dir, train_dir, _ = trained
    good, damaged = copy_with_damaged_newest(train_dir, str(tmp_path / 'train'))
    result = run_script('eval_fashion_mnist.py', '--train_dir', str(tmp_path / 'train'),
                        '--data_dir', data_dir, '--out_dir', str(tmp_path / 'eval'))
    assert result.returncode == 0, result.stderr
    assert skipped_line(damaged).search(result.stderr), result.stderr
    results = json.loads((tmp_path / 'eval' / 'results.json').read_text())
    assert results['checkpoint'] == good
