"""Specification of the SegDecNet command lines: regression, training and evaluation."""
import copy
import json
import os
import re
import subprocess
import sys

import pytest

from checkpoint_bytes import differing
from models.datasets.kolektor import synthetic as kolektor_synthetic
from models.segdec import regression as segdec_regression
from script_runs import (DETERMINISTIC, copy_with_damaged_newest, evaluation_events,
                         run_in_process, skipped_line)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, 'tests', 'data', 'regression', 'segdec', 'golden_seed0.json')


def _script(name, *args):
    return subprocess.run([sys.executable, os.path.join(ROOT, 'scripts', name)] + list(args),
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


def _golden_run(key):
    with open(GOLDEN) as f:
        return json.load(f)['runs'][key]


def test_regression_script_reproduces_the_golden_figures_of_the_original():
    result = _script('regress_segdec.py', '--golden', GOLDEN)
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'OK: all 290 figures within tolerance' in result.stdout


def test_comparison_flags_a_gradient_norm_beyond_one_percent():
    golden = _golden_run('1')
    measured = copy.deepcopy(golden)
    norms = measured['train_ops']['segment']['step0_averaged_grad_l2_norms']
    norms['segment/conv3/weights'] *= 1.011
    failed = [d for d in segdec_regression.compare_run('1', golden, measured) if d.failed]
    assert [d.what for d in failed] == ['segment: step-0 grad norm of segment/conv3/weights']


def test_comparison_flags_a_variable_of_another_shape_and_one_op_too_many():
    golden = _golden_run('2')
    measured = copy.deepcopy(golden)
    measured['global_variables']['decision/fully_connected/biases'] = [1]
    measured['train_ops']['decision']['step0_averaged_grad_l2_norms'][
        'segment/conv1/weights'] = 1.0
    failed = [d.what for d in segdec_regression.compare_run('2', golden, measured)
              if d.failed]
    assert failed == ['shape of variable decision/fully_connected/biases',
                      'decision: variables it updates']


def test_regression_script_exits_non_zero_when_a_figure_is_off(tmp_path):
    golden = json.load(open(GOLDEN))
    run = golden['runs']['1']
    run['train_ops']['decision']['tower_pixel_class_losses_batch0_before_update'][0][1] += 1e-3
    golden['runs'] = {'1': run}
    path = tmp_path / 'golden.json'
    path.write_text(json.dumps(golden))
    # In a process of its own: in the test's process, what earlier tests left in TensorFlow's
    # state (seen once: a second figure beyond tolerance) would be measured too.
    result = _script('regress_segdec.py', '--golden', str(path))
    assert result.returncode == 1
    assert 'FAILED: 1 of 139 figures beyond tolerance' in result.stdout
    assert 'decision: tower 0 class batch-0 loss' in result.stdout


SIZE = ['--image_height', '128', '--image_width', '64']


def train(data_dir, train_dir, *flags):
    """train_segdec.py on 2 towers at 128x64, deterministic with seed 1."""
    return _script('train_segdec.py', '--num_gpus', '2', '--data_dir', data_dir, '--train_dir',
                   train_dir, *SIZE, *DETERMINISTIC, *flags)


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    """(data_dir, train_dir, result): both stages, 3 segment steps and 2 decision steps."""
    data_dir = str(tmp_path_factory.mktemp('kolektor'))
    kolektor_synthetic.write_dataset(data_dir, num_items=5, parts_per_item=4, height=320,
                                     width=128, defect_fraction=0.3)
    train_dir = str(tmp_path_factory.mktemp('segdec_train'))
    return data_dir, train_dir, train(data_dir, train_dir, '--max_steps', '3',
                                      '--decision_steps', '2', '--log_device_placement=false',
                                      '--nolog_device_placement', '--eval_every_steps', '5')


def test_training_both_stages_then_evaluating_writes_checkpoint_results_and_figures(trained,
                                                                                   tmp_path):
    data_dir, train_dir, result = trained
    out_dir = str(tmp_path / 'eval')
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'stage segment: until global step 3' in result.stderr
    assert 'stage decision: until global step 5' in result.stderr
    assert os.path.exists(os.path.join(train_dir, 'model.ckpt-5.index'))
    # Validation after each stage's last step (3, 5).
    assert re.findall(r'step (\d+), validation average_precision = [01]\.\d{4} '
                      r'\(8 examples', result.stdout) == ['3', '5']

    # The flags in a file, as absl's --flagfile gave them.
    flagfile = tmp_path / 'eval.flags'
    flagfile.write_text('# evaluation at the training size\n' + '\n'.join(
        '%s=%s' % pair for pair in zip(SIZE[::2], SIZE[1::2])) + '\n')
    evaluated = _script('eval_segdec.py', '--train_dir', train_dir, '--data_dir', data_dir,
                        '--out_dir', out_dir, '--flagfile=%s' % flagfile)
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    with open(os.path.join(out_dir, 'results.json')) as f:
        results = json.load(f)
    assert results['num_images'] == 8 and results['checkpoint'].endswith('model.ckpt-5')
    assert results['statistics'] == 'moving averages'
    assert 0 <= results['average_precision'] <= 1
    assert results['false_positives'] + results['false_negatives'] <= 8
    assert os.path.exists(os.path.join(out_dir, 'pr_curve.png'))
    assert sorted(os.listdir(os.path.join(out_dir, 'panels')))[:2] == [
        'kos04_Part0.png', 'kos04_Part1.png']
    events = evaluation_events(train_dir)
    assert events['average_precision'] == (5, pytest.approx(results['average_precision']))
    assert events['pr_curve/pr_curves'] == (5, 'pr_curve')
    assert events['charts/pr_curve'] == events['panels/kos04/Part0'] == (5, 'image')

    good, damaged = copy_with_damaged_newest(train_dir, str(tmp_path / 'damaged'))
    skipping = _script('eval_segdec.py', '--train_dir', str(tmp_path / 'damaged'), '--data_dir',
                       data_dir, '--out_dir', str(tmp_path / 'eval_damaged'), *SIZE)
    assert skipping.returncode == 0, skipping.stdout + skipping.stderr
    assert skipped_line(damaged).search(skipping.stderr), skipping.stderr
    with open(str(tmp_path / 'eval_damaged' / 'results.json')) as f:
        assert json.load(f)['checkpoint'] == good


def test_a_run_stopped_in_the_segment_stage_and_resumed_through_both_trains_the_same_bytes(
        trained, tmp_path):
    data_dir, train_dir, _ = trained
    stopped = train(data_dir, str(tmp_path), '--train_mode', 'segment', '--max_steps', '2')
    assert stopped.returncode == 0, stopped.stderr
    # Segment steps 2 and 3, across the stage boundary, then 2 decision steps, as in one run.
    resumed = train(data_dir, str(tmp_path), '--max_steps', '3', '--decision_steps', '2')
    assert resumed.returncode == 0, resumed.stderr
    assert 'resuming from step 2' in resumed.stderr
    assert differing(str(tmp_path / 'model.ckpt-5'),
                     os.path.join(train_dir, 'model.ckpt-5')) == []


def test_evaluation_without_a_checkpoint_says_how_to_get_one(tmp_path):
    result = run_in_process('eval_segdec.py', '--train_dir', str(tmp_path), '--data_dir',
                            str(tmp_path))
    assert result.returncode == 1
    assert 'error: no checkpoint in --train_dir %s; train first' % tmp_path in result.stderr


def test_data_script_writes_a_small_generated_set_and_never_overwrites_one(tmp_path):
    data_dir = str(tmp_path / 'kolektor')
    made = run_in_process('make_kolektor_data.py', '--data_dir', data_dir, '--num_items', '2',
                          '--parts_per_item', '3', '--image_height', '160', '--image_width',
                          '64')
    assert made.returncode == 0, made.stdout + made.stderr
    assert 'wrote 6 images' in made.stdout
    assert sorted(os.listdir(os.path.join(data_dir, 'kos02')))[:2] == ['Part0.jpg',
                                                                       'Part0_label.bmp']
    again = run_in_process('make_kolektor_data.py', '--data_dir', data_dir)
    assert again.returncode == 1 and 'exists already' in again.stderr
