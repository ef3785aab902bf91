"""The project reproduces the original CIFAR-10 tutorial's golden figures (regress_cifar10.py)."""
import json
import os
import re

from script_runs import run_in_process, run_script

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN_DIR = os.path.join(REPO, 'tests', 'data', 'regression', 'cifar10')
TRAIN_GOLDEN = os.path.join(GOLDEN_DIR, 'golden_train_seed0.json')
EVAL_GOLDEN = os.path.join(GOLDEN_DIR, 'golden_eval_seed0.json')
CHECKPOINT = os.path.join(GOLDEN_DIR, 'original_n2_s0_300.ckpt')


def regress(*args, run=run_script):
    return run('regress_cifar10.py', *args)


def test_training_on_1_2_and_4_towers_reproduces_the_originals_losses_and_gradients():
    result = regress('--golden', TRAIN_GOLDEN)
    assert result.returncode == 0, result.stdout + result.stderr
    for num_towers in (1, 2, 4):
        assert '%d tower(s), seed 0, 20 steps' % num_towers in result.stdout
    assert result.stdout.count('tower losses: max |deviation|') == 3
    assert re.search(r'OK: all \d+ figures within tolerance', result.stdout)


def test_evaluating_the_originals_checkpoint_reproduces_its_precision_and_logits():
    result = regress('--eval_golden', EVAL_GOLDEN, '--checkpoint', CHECKPOINT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'precision @ 1 = 0.99375 (original 0.99375; exact)' in result.stdout
    assert 'true count = 1272 (original 1272; exact)' in result.stdout
    assert re.search(r'^progress: evaluation 10/10 batches \(100%\), \d+\.\d\d batches/sec, '
                     r'00:00 left$', result.stderr, re.MULTILINE), result.stderr


def test_a_figure_off_the_golden_fails_the_comparison(tmp_path):
    with open(EVAL_GOLDEN) as f:
        golden = json.load(f)
    golden['abs_logit_sums'][3] *= 1.001
    altered = tmp_path / 'golden_eval_altered.json'
    altered.write_text(json.dumps(golden))
    result = regress('--eval_golden', str(altered), '--checkpoint', CHECKPOINT, run=run_in_process)
    assert result.returncode == 1
    assert 'FAILED: 1 of' in result.stdout
    assert 'run evaluation  sum of |logits| of batch 3' in result.stdout


def test_a_missing_checkpoint_is_an_error_naming_it(tmp_path):
    missing = str(tmp_path / 'nothing.ckpt')
    result = regress('--eval_golden', EVAL_GOLDEN, '--checkpoint', missing, run=run_in_process)
    assert result.returncode == 1
    assert 'error: --checkpoint %s: no checkpoint' % missing in result.stderr
