"""The ImageNet scripts end to end on tiny settings: train ResNet-50 on 2 towers, resume,
evaluate; bad input as one error line."""
import json
import math
import os
import re

import numpy as np
import pytest

from checkpoint_bytes import differing
from models.datasets.imagenet import sources, synthetic
from script_runs import (DETERMINISTIC, copy_with_damaged_newest, evaluation_events,
                         run_in_process, run_script, skipped_line)
from towers.compat import tf

LOG_LINE = re.compile(r'^\S+ \S+: step (\d+), loss = \d+\.\d\d ', re.MULTILINE)
# 16 training images in global batches of 4: 4 steps per epoch; a warmup of 2 steps, then a
# cosine to step 8.
TRAIN_FLAGS = ['--image_size', '32', '--epochs', '2', '--warmup_epochs', '0.5',
               '--learning_rate', '0.01']


@pytest.fixture(scope='module')
def data_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp('imagenet_data')
    synthetic.generate(str(path / synthetic.GENERATED_DIR), train_per_class=2,
                       validation_per_class=1)
    return str(path)


def train_first_steps(data_dir, train_dir):
    """3 steps on 2 towers, validated after the last, deterministic with seed 1."""
    return run_script('train_imagenet.py', '--num_gpus', '2', '--batch_size', '2', *TRAIN_FLAGS,
                      '--max_steps', '3', '--data_dir', data_dir, '--train_dir', train_dir,
                      '--nonesterov', '--eval_every_steps', '3', *DETERMINISTIC)


@pytest.fixture(scope='module')
def trained(data_dir, tmp_path_factory):
    train_dir = str(tmp_path_factory.mktemp('imagenet_train'))
    first = train_first_steps(data_dir, train_dir)
    # The same global batch on one tower: the same schedule.
    resumed = run_script('train_imagenet.py', '--num_gpus', '1', '--batch_size', '4',
                         *TRAIN_FLAGS, '--max_steps', '4', '--data_dir', data_dir,
                         '--train_dir', train_dir)
    return train_dir, first, resumed


def learning_rates(train_dir):
    """{step: learning rate} from every event file of `train_dir`."""
    rates = {}
    for name in os.listdir(train_dir):
        if name.startswith('events.out.tfevents'):
            for event in tf.train.summary_iterator(os.path.join(train_dir, name)):
                for value in event.summary.value:
                    if value.tag == 'learning_rate':
                        rates[event.step] = value.simple_value
    return rates


def test_training_on_two_towers_logs_the_tutorials_line_and_saves_tf_slim_names(trained):
    train_dir, first, _ = trained
    assert first.returncode == 0, first.stderr
    assert LOG_LINE.findall(first.stdout) == ['0']
    assert '2 towers on 2 virtual CPU devices' in first.stderr
    assert 'using the GENERATED ImageNet-format data set' in first.stderr
    assert 'warmup 2 steps, cosine to step 8' in first.stderr
    assert re.search(r'step 3, validation top1 = [01]\.\d{4}, top5 = [01]\.\d{4} '
                     r'\(8 examples', first.stdout), first.stdout
    stored = dict(tf.train.list_variables(os.path.join(train_dir, 'model.ckpt-3')))
    assert stored['resnet_v1_50/conv1/weights'] == [7, 7, 3, 64]
    assert stored['resnet_v1_50/logits/biases'] == [1000]


def test_the_same_command_twice_trains_to_the_same_bytes(data_dir, trained, tmp_path):
    train_dir, _, _ = trained
    result = train_first_steps(data_dir, str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert differing(str(tmp_path / 'model.ckpt-3'),
                     os.path.join(train_dir, 'model.ckpt-3')) == []


def test_the_schedule_resumes_exactly_from_the_checkpoint(trained):
    train_dir, _, resumed = trained
    assert resumed.returncode == 0, resumed.stderr
    assert 'resuming from step 3' in resumed.stderr
    assert os.path.exists(os.path.join(train_dir, 'model.ckpt-4.index'))
    # Step 3 ran only in the resumed process: one step into the cosine of 6 steps from 0.01.
    cosine = 0.01 * ((1 - 1e-4) * 0.5 * (1 + math.cos(math.pi / 6)) + 1e-4)
    assert learning_rates(train_dir)[3] == pytest.approx(cosine, rel=1e-6)


def test_evaluation_writes_top1_and_top5_of_centre_crop_and_10_crop(trained, data_dir,
                                                                     tmp_path):
    train_dir, _, _ = trained
    out_dir = str(tmp_path / 'eval')
    result = run_script('eval_imagenet.py', '--train_dir', train_dir, '--data_dir', data_dir,
                        '--image_size', '32', '--batch_size', '3', '--out_dir', out_dir,
                        '--precise_bn_batches', '2')
    assert result.returncode == 0, result.stderr
    with open(os.path.join(out_dir, 'results.json')) as f:
        results = json.load(f)
    assert results['num_examples'] == len(synthetic.CLASSES)
    assert results['global_step'] == 4
    assert results['statistics'] == 'precise (2 training batches)'
    # 2 batches of the training's batch per tower (4, resumed on one tower)
    assert 'precise batch-norm statistics from 2 training batches of 4 example(s)' in result.stderr
    events = evaluation_events(train_dir)
    for key in ('top1', 'top5', 'top1_10crop', 'top5_10crop'):
        assert 0 <= results[key] <= 1
        assert events[key] == (4, pytest.approx(results[key]))
        assert results[key] * len(synthetic.CLASSES) == round(results[key]
                                                                * len(synthetic.CLASSES))
    assert results['top5'] >= results['top1']
    assert re.search(r'^resnet_v1_50 at step 4, 8 images, batch norm with precise \(2 training '
                     r'batches\): centre crop top-1 [01]\.\d{3}, top-5 [01]\.\d{3}; 10-crop '
                     r'top-1 [01]\.\d{3}, top-5 [01]\.\d{3}$', result.stdout, re.MULTILINE)


def test_a_corrupt_jpeg_stops_training_with_one_error_line_and_no_checkpoint(tmp_path):
    data_dir = tmp_path / 'data'
    os.makedirs(str(data_dir))
    image = synthetic.encode_jpeg(synthetic.make_image(0, np.random.RandomState(0)))
    records = [synthetic.make_example(encoded, 1, 'n0', 'x.JPEG', 1, 1).SerializeToString()
               for encoded in (image, image[:200], image, image)]
    shard = str(data_dir / (sources.SHARD_FORMAT % (sources.TRAIN, 0, 1)))
    synthetic.write_records(shard, records)
    train_dir = tmp_path / 'train'
    # Shuffled, the bad record comes within the first few of the 20 steps, not always the first.
    result = run_in_process('train_imagenet.py', '--num_gpus', '1', '--batch_size', '4',
                            '--image_size', '32', '--max_steps', '20', '--data_dir',
                            str(data_dir), '--train_dir', str(train_dir))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        'error: %s, record 1: image/encoded is not a JPEG that can be decoded' % shard)
    assert 'Traceback' not in result.stderr
    assert not [name for name in os.listdir(str(train_dir)) if name.startswith('model.ckpt')]


def test_evaluation_without_a_checkpoint_is_an_error(tmp_path):
    result = run_in_process('eval_imagenet.py', '--train_dir', str(tmp_path), '--out_dir',
                            str(tmp_path / 'eval'))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        'error: no checkpoint in --train_dir %s; train first with scripts/train_imagenet.py '
        '--train_dir %s (expected its model.ckpt-<step> files and `checkpoint` index)'
        % (tmp_path, tmp_path))
    assert not os.path.exists(str(tmp_path / 'eval'))


def test_evaluation_skips_a_damaged_newest_checkpoint_with_a_line_naming_it(trained, data_dir,
                                                                           tmp_path):
    train_dir, _, _ = trained
    good, damaged = copy_with_damaged_newest(train_dir, str(tmp_path / 'train'))
    result = run_script('eval_imagenet.py', '--train_dir', str(tmp_path / 'train'),
                        '--data_dir', data_dir, '--image_size', '32', '--noten_crop',
                        '--precise_bn_batches', '0', '--out_dir', str(tmp_path / 'eval'))
    assert result.returncode == 0, result.stderr
    assert skipped_line(damaged).search(result.stderr), result.stderr
    with open(str(tmp_path / 'eval' / 'results.json')) as f:
        results = json.load(f)
    assert results['checkpoint'] == good and results['statistics'] == 'moving averages'
