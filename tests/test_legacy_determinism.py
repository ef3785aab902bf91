"""Specification of `towers-legacy --deterministic --seed N`: a TF1 script's runs repeated."""
import os
import subprocess
import sys

from checkpoint_bytes import differing

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(REPO, 'tests', 'data', 'legacy', 'tower_program.py')
DATA_PROGRAM = os.path.join(REPO, 'tests', 'data', 'legacy', 'data_program.py')


def run_legacy(*args):
    result = subprocess.run([sys.executable, '-m', 'towers.legacy', '--legacy_devices', '2']
                            + list(args), cwd=REPO, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


def test_a_tf1_program_on_tf_data_with_dropout_trains_to_the_same_bytes_twice(tmp_path):
    runs = [str(tmp_path / name / 'model.ckpt') for name in ('first', 'second')]
    for checkpoint in runs:
        result = run_legacy('--deterministic', '--seed', '1', DATA_PROGRAM, checkpoint)
    assert differing(*runs) == []
    assert 'op determinism, graph seed 1' in result.stderr


def test_the_tower_program_starts_from_the_same_weights_twice(tmp_path):
    """Its queue runner's shuffle samples what its thread has enqueued so far, which timing
    decides: its training is not repeatable, its initial weights (random without a seed) are."""
    def initial(name):
        run_legacy('--deterministic', '--seed', '1', PROGRAM, '--num_gpus', '2',
                   '--train_dir', str(tmp_path / name), '--data_file',
                   str(tmp_path / 'data' / 'train.bin'), '--max_steps', '0')
        return str(tmp_path / name / 'model.ckpt-0')
    assert differing(initial('first'), initial('second')) == []
