"""The folder-of-JPEGs scripts end to end on tiny settings: train on 2 towers, evaluate, and
bad input stopping with one error line."""
import json
import os
import re

import pytest

from checkpoint_bytes import differing
from models.datasets.image_folder import synthetic
from script_runs import (DETERMINISTIC, copy_with_damaged_newest, evaluation_events,
                         run_in_process, run_script, skipped_line)

LABELS = ['NORMAL', 'CNV', 'DME', 'DRUSEN']
# The flags of the module's training run, deterministic.
TRAINED = ('--labels', ','.join(LABELS), '--eval_every_steps', '2') + DETERMINISTIC


def train(data_dir, train_dir, *flags, run=run_script):
    return run('train_image_folder.py', '--num_gpus', '2', '--batch_size', '2', '--image_size',
               '32', '--max_steps', '2', '--data_dir', data_dir, '--train_dir', train_dir, *flags)


@pytest.fixture(scope='module')
def data_dir(tmp_path_factory):
    root = str(tmp_path_factory.mktemp('image_folder') / 'OCT2017')
    synthetic.write_dataset(root, train_per_class=2, test_per_class=2, size=40)
    return root


@pytest.fixture(scope='module')
def trained(data_dir, tmp_path_factory):
    train_dir = str(tmp_path_factory.mktemp('image_folder_train'))
    return train_dir, train(data_dir, train_dir, *TRAINED)


def test_training_on_two_towers_from_random_vgg16_writes_a_checkpoint_and_its_classes(trained):
    train_dir, result = trained
    assert result.returncode == 0, result.stderr
    assert '2 towers on 2 virtual CPU devices' in result.stderr
    assert 'a new training starts VGG16 from RANDOM values' in result.stderr
    assert re.search(r'step 2, validation accuracy = [01]\.\d{4} \(8 examples',
                     result.stdout), result.stdout
    assert os.path.exists(os.path.join(train_dir, 'model.ckpt-2.index'))
    with open(os.path.join(train_dir, 'model.json')) as f:
        assert json.load(f) == {'classes': LABELS, 'image_size': 32}


def test_the_same_command_twice_trains_to_the_same_bytes(data_dir, trained, tmp_path):
    train_dir, _ = trained
    result = train(data_dir, str(tmp_path), *TRAINED)
    assert result.returncode == 0, result.stderr
    assert differing(str(tmp_path / 'model.ckpt-2'),
                     os.path.join(train_dir, 'model.ckpt-2')) == []


def test_evaluation_writes_accuracy_overall_and_per_class_and_a_confusion_matrix(
        data_dir, trained, tmp_path):
    train_dir, _ = trained
    result = run_script('eval_image_folder.py', '--train_dir', train_dir, '--data_dir',
                        data_dir, '--out_dir', str(tmp_path), '--batch_size', '3')
    assert result.returncode == 0, result.stderr
    with open(str(tmp_path / 'results.json')) as f:
        results = json.load(f)
    assert results['num_examples'] == 8 and 0 <= results['accuracy'] <= 1
    assert results['class_names'] == LABELS
    assert {name: figures['examples'] for name, figures in results['per_class'].items()} == {
        name: 2 for name in LABELS}
    assert sum(map(sum, results['confusion_matrix'])) == 8
    assert os.path.getsize(str(tmp_path / 'confusion_matrix.png')) > 0
    assert 'model.ckpt-2: accuracy %.4f on 8 test images; NORMAL' % results['accuracy'] in (
        result.stdout)
    events = evaluation_events(train_dir)
    assert events['accuracy'] == (2, pytest.approx(results['accuracy']))
    assert events['per_class/NORMAL/accuracy'][0] == 2
    assert events['confusion_matrix'] == (2, 'image')


def test_training_with_an_empty_class_folder_is_one_error_line_naming_it(tmp_path):
    root = str(tmp_path / 'data')
    synthetic.write_dataset(root, train_per_class=1, test_per_class=1, size=32)
    empty = os.path.join(root, 'train', 'EMPTY')
    os.makedirs(empty)
    result = train(root, str(tmp_path / 'train'), run=run_in_process)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        'error: class folder %s holds no readable JPEG image (expected .jpeg or .jpg files)'
        % empty)
    assert 'Traceback' not in result.stderr


def test_evaluation_skips_a_damaged_newest_checkpoint_with_a_line_naming_it(data_dir, trained,
                                                                           tmp_path):
    train_dir, _ = trained
    good, damaged = copy_with_damaged_newest(train_dir, str(tmp_path / 'train'))
    result = run_script('eval_image_folder.py', '--train_dir', str(tmp_path / 'train'),
                        '--data_dir', data_dir, '--out_dir', str(tmp_path / 'eval'))
    assert result.returncode == 0, result.stderr
    assert skipped_line(damaged).search(result.stderr), result.stderr
    with open(str(tmp_path / 'eval' / 'results.json')) as f:
        assert json.load(f)['checkpoint'] == good
