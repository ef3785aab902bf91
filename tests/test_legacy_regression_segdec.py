"""Specification of `regress_segdec.py --original_dir`: the TF1 multi-GPU SegDecNet's own code
(here a stand-in, tests/data/legacy/segdec_original/) built in its tower loop beside the port,
from the same weights on the same batches, compared as the goldens are; under the runner, or on
real TensorFlow 1.15 (`--original_tf1`)."""
import json
import os
import subprocess
import sys
import types

import pytest

import towers
from models.segdec import live_regression as segdec_live
from towers import legacy

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORIGINAL_DIR = os.path.join(REPO, 'tests', 'data', 'legacy', 'segdec_original')
GOLDEN = os.path.join(REPO, 'tests', 'data', 'regression', 'segdec', 'golden_seed0.json')


def test_regress_segdec_against_an_original_dir_passes_on_1_and_2_towers_and_writes_a_golden(
        tmp_path):
    golden = tmp_path / 'golden.json'
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, 'scripts', 'regress_segdec.py'), '--original_dir',
         ORIGINAL_DIR, '--tower_counts', '1,2', '--image_height', '64', '--image_width', '64',
         '--write_golden', str(golden)],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    for count in (1, 2):
        assert ('original vs project: %d tower(s), 64x64, seed 0, learning rate 0.001'
                % count) in result.stdout
    # 290 figures of training, 26 of each evaluation.
    assert 'OK: all 342 figures within tolerance' in result.stdout
    for side in ('original', 'project'):
        assert ("evaluation of the %s's checkpoint by the original and the project" % side
                in result.stdout)
    written = json.loads(golden.read_text())
    with open(GOLDEN) as f:
        committed = json.load(f)['runs']
    assert sorted(written['runs']) == ['1', '2']
    assert set(written['runs']['2']) == set(committed['2'])
    assert written['runs']['2']['global_variables'] == committed['2']['global_variables']
    assert 'through towers.legacy' in written['source']


def test_regress_segdec_against_the_original_on_tf1_15_is_within_the_goldens_tolerance(
        tmp_path, tf1_python):
    golden = tmp_path / 'golden.json'
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, 'scripts', 'regress_segdec.py'), '--original_dir',
         ORIGINAL_DIR, '--tower_counts', '1,2', '--image_height', '64', '--image_width', '64',
         '--original_tf1', '--tf1_python', tf1_python, '--write_golden', str(golden)],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'the original runs on real TensorFlow 1.15.5 (Python 3.7)' in result.stdout
    assert 'OK: all 342 figures within tolerance' in result.stdout
    # TF 1.15's checkpoint evaluated here, the project's on TF 1.15 by the original's network.
    for side in ('original', 'project'):
        assert ("evaluation of the %s's checkpoint by the original on TensorFlow 1.15 and the "
                "project\n  26 figures compared, 0 beyond tolerance" % side in result.stdout)
    written = json.loads(golden.read_text())['runs']
    # Each train op's two steps on TF 1.15: the figures of the golden file's shape.
    assert sorted(written['2']['train_ops']) == ['decision', 'segment', 'total']
    assert len(written['2']['train_ops']['total'][
        'tower_pixel_class_losses_batch1_after_update']) == 2


def test_original_tf1_without_an_original_dir_is_one_error_line():
    result = subprocess.run([sys.executable, os.path.join(REPO, 'scripts', 'regress_segdec.py'),
                             '--original_tf1'], cwd=REPO, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == ['error: --original_tf1 needs --original_dir']


def test_an_original_dir_without_segdec_model_and_segdec_train_is_an_error_naming_them(
        tmp_path):
    with pytest.raises(towers.TowersError, match='--original_dir %s has no segdec_model.py, '
                                                 'segdec_train.py' % tmp_path):
        legacy.import_originals(str(tmp_path), segdec_live.ORIGINAL_MODULES,
                                       '--original_dir')


def test_an_original_without_the_tower_versions_functions_is_an_error_naming_them():
    train = types.SimpleNamespace(__file__='segdec_train.py', average_gradients=None)
    with pytest.raises(towers.TowersError, match=r'segdec_train.py \(segdec_train.py\) is not '
                                                 r'the multi-GPU tower version: no tower_loss, '
                                                 r'assign_to_device, TOWER_NAME'):
        segdec_live.LiveRegression({'segdec_train': train}, 'unused')


def test_an_original_whose_tower_loss_takes_other_arguments_is_an_error_naming_them():
    train = types.SimpleNamespace(__file__='segdec_train.py', average_gradients=None,
                                  assign_to_device=None, TOWER_NAME='tower',
                                  tower_loss=lambda images, masks: None)
    with pytest.raises(towers.TowersError, match=r'its tower_loss takes \(images, masks\)'):
        segdec_live.LiveRegression({'segdec_train': train}, 'unused')


def test_an_image_size_the_model_cannot_take_is_one_error_line():
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, 'scripts', 'regress_segdec.py'), '--original_dir',
         ORIGINAL_DIR, '--image_height', '96'], cwd=REPO, capture_output=True, text=True,
        timeout=120)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1] == ('error: --image_height 96: SegDecNet '
                                                      'needs a multiple of 64')
