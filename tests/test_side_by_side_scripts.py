"""Specification of the side-by-side command lines: training, evaluation, their errors."""
import json
import os
import re
import subprocess
import sys

import pytest
from PIL import Image

from checkpoint_bytes import differing
from models.datasets.segmentation_folder import synthetic
from script_runs import (DETERMINISTIC, copy_with_damaged_newest, evaluation_events,
                         run_in_process, skipped_line)
from towers.compat import tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Two of the three, to keep the test short: any subset trains side by side.
MODELS = ('linknet', 'fpn')


def _script(name, *args):
    return subprocess.run([sys.executable, os.path.join(ROOT, 'scripts', name)] + list(args),
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def train(data_dir, train_dir):
    """Two models side by side on 2 towers, 2 steps, each validated, deterministic with seed
    1."""
    return _script('train_side_by_side.py', '--models', ','.join(MODELS), '--num_gpus', '2',
                   '--batch_size', '1', '--image_size', '64', '--max_steps', '2', '--data_dir',
                   data_dir, '--train_dir', train_dir, '--log_every_n_steps=1',
                   '--save_summaries_steps', '1', '--eval_every_steps', '1', *DETERMINISTIC)


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    """(data_dir, train_dir, result) of `train` on a generated set of 4 + 3 images."""
    data_dir = str(tmp_path_factory.mktemp('side_by_side_data'))
    synthetic.write_dataset(data_dir, num_train=4, num_test=3, size=64)
    train_dir = str(tmp_path_factory.mktemp('side_by_side_train'))
    return data_dir, train_dir, train(data_dir, train_dir)


def test_training_side_by_side_then_evaluating_writes_results_table_chart_and_panels(
        trained, tmp_path):
    data_dir, train_dir, result = trained
    out_dir = str(tmp_path / 'eval')
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.strip().split('\n')
    progress = [line for line in lines if not line.startswith('progress: ')]
    assert lines[-1].startswith('progress: 2/2 steps (100%)')
    assert len(progress) == 4 and re.search(
        r'step 1, loss linknet = \d\.\d{4}, fpn = \d\.\d{4} \(', progress[2])
    assert re.search(r'step 2, validation iou linknet = \d\.\d{4}, fpn = \d\.\d{4} '
                     r'\(3 examples, ', progress[3])
    assert os.path.exists(os.path.join(train_dir, 'model.ckpt-2.index'))
    assert all(os.listdir(os.path.join(train_dir, name)) for name in MODELS)

    evaluated = _script('eval_side_by_side.py', '--train_dir', train_dir, '--data_dir',
                        data_dir, '--image_size', '64', '--out_dir', out_dir,
                        '--num_panels', '2', '--precise_bn_batches', '2',
                        '--save_precise_bn', str(tmp_path / 'precise'))
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    with open(os.path.join(out_dir, 'results.json')) as f:
        results = json.load(f)
    assert sorted(results) == sorted(MODELS)
    assert all(sorted(r) == ['dice', 'iou', 'pixel_accuracy', 'statistics', 'steps_trained']
               and 0 <= r['iou'] <= r['dice'] <= 1 and r['steps_trained'] == 2
               and r['statistics'] == 'precise (2 training batches)' for r in results.values())
    with open(os.path.join(out_dir, 'comparison.md')) as f:
        table = f.read().split('\n')
    assert table[0] == ('| model | steps trained | batch-norm statistics | IoU | Dice (F1) | '
                        'pixel accuracy |')
    assert [row.split(' | ')[:3] for row in table[2:4]] == [
        ['| FPN', '2', 'precise (2 training batches)'],
        ['| Linknet', '2', 'precise (2 training batches)']]
    assert tf.train.latest_checkpoint(str(tmp_path / 'precise')).endswith('model.ckpt-2')
    assert os.path.getsize(os.path.join(out_dir, 'loss_curves.png')) > 0
    assert sorted(os.listdir(os.path.join(out_dir, 'panels'))) == ['test_0000.png',
                                                                   'test_0001.png']
    events = evaluation_events(train_dir)
    for name in MODELS:
        assert events['%s/iou' % name] == (2, pytest.approx(results[name]['iou']))
    assert events['panels/test_0000'] == (2, 'image')

    good, damaged = copy_with_damaged_newest(train_dir, str(tmp_path / 'damaged'))
    skipping = _script('eval_side_by_side.py', '--train_dir', str(tmp_path / 'damaged'),
                       '--data_dir', data_dir, '--image_size', '64', '--out_dir',
                       str(tmp_path / 'eval_damaged'), '--num_panels', '0',
                       '--precise_bn_batches', '0')
    assert skipping.returncode == 0, skipping.stdout + skipping.stderr
    assert skipped_line(damaged).search(skipping.stderr), skipping.stderr
    assert skipping.stdout.startswith('%s on 3 test images' % os.path.basename(good))


def test_the_same_command_twice_trains_to_the_same_bytes(trained, tmp_path):
    data_dir, train_dir, _ = trained
    result = train(data_dir, str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert differing(str(tmp_path / 'model.ckpt-2'),
                     os.path.join(train_dir, 'model.ckpt-2')) == []


def test_a_mask_of_another_size_stops_training_with_one_error_line(tmp_path):
    data_dir = str(tmp_path / 'data')
    synthetic.write_dataset(data_dir, num_train=2, num_test=1, size=64)
    mask = os.path.join(data_dir, 'train', 'masks', 'train_0001.png')
    Image.new('L', (32, 64)).save(mask)
    result = run_in_process('train_side_by_side.py', '--data_dir', data_dir, '--train_dir',
                            str(tmp_path / 'train'), '--image_size', '64')
    assert result.returncode == 1
    assert result.stderr.strip().split('\n')[-1] == (
        'error: mask %s is 32x64 but its image %s is 64x64 (width x height)'
        % (mask, os.path.join(data_dir, 'train', 'images', 'train_0001.png')))
    assert 'Traceback' not in result.stderr
    assert not os.path.exists(str(tmp_path / 'train'))


def test_an_unknown_model_is_one_error_line_naming_the_flag(tmp_path):
    result = run_in_process('train_side_by_side.py', '--models', 'unet,segnet', '--train_dir',
                            str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.strip().split('\n')[-1].startswith(
        "error: --models 'unet,segnet': expected a comma-separated list of distinct models")
