"""A TF1 sequence-to-sequence program of tensorflow/nmt's kind (tests/data/legacy/seq2seq: a
package with relative imports, run as `-m seq2seq.train`): 2 towers of a bidirectional
LSTMBlockCell encoder and a Luong-attention decoder trained with LazyAdam, greedy and beam-search
decoding; on the runner, checked by `--check`, and from a checkpoint TF 1.15.5 wrote."""
import json
import os
import subprocess
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEGACY = os.path.join(REPO, 'tests', 'data', 'legacy')
# The package is imported from the repository: no bytecode written beside it.
QUIET = {'PYTHONDONTWRITEBYTECODE': '1'}


def run(command, *args):
    result = subprocess.run(command + ['-m', 'seq2seq.train'] + list(args), cwd=LEGACY,
                            env=dict(os.environ, **QUIET), capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1]), result.stderr


def until_eos(row, eos=2):
    """The tokens before the first EOS; a row that never ends is marked so."""
    return row[:row.index(eos)] if eos in row else row + ['no EOS']


def runner(*options):
    return [sys.executable, '-m', 'towers.legacy'] + list(options)


def test_the_module_trains_on_two_towers_and_decodes_what_it_learned(tmp_path):
    found, err = run(runner('--legacy_devices', '2'), '--num_gpus', '2', '--steps', '40',
                     '--out_dir', str(tmp_path))
    assert found['loss'][-1] < 0.1 * found['loss'][0]
    # A decoded row is read up to its first EOS, as tensorflow/nmt trims it: dynamic_decode
    # without impute_finished goes on emitting tokens for a finished row while others run.
    targets, greedy, beam = ([until_eos(row) for row in found[key]]
                             for key in ('target', 'greedy', 'beam'))
    assert greedy == targets and beam == targets
    assert 'tf.contrib.seq2seq.BeamSearchDecoder' not in err
    assert os.path.exists(tmp_path / 'model.ckpt-40.index')


def test_check_reads_the_package_and_finds_everything_provided():
    result = subprocess.run(runner('--check', '-m', 'seq2seq.train'), cwd=LEGACY,
                            env=dict(os.environ, **QUIET), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout
    assert '2 files read' in result.stdout  # train.py and the model.py it imports
    assert 'unicode' not in result.stdout


def test_a_checkpoint_tf1_15_wrote_restores_and_decodes_the_same(tmp_path, tf1_python):
    from towers.legacy.compare import tf1
    result = subprocess.run([tf1_python, '-m', 'seq2seq.train', '--num_gpus', '2', '--steps',
                             '8', '--out_dir', str(tmp_path)], cwd=LEGACY,
                            env=dict(tf1.environment(), **QUIET),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    expected = json.loads(result.stdout.strip().splitlines()[-1])
    found, _ = run(runner(), '--steps', '0', '--restore', str(tmp_path / 'model.ckpt-8'))
    assert found['greedy'] == expected['greedy'] and found['beam'] == expected['beam']
    np.testing.assert_allclose(found['scores'], expected['scores'], rtol=1e-5, atol=1e-5)


def test_a_missing_module_is_one_line():
    result = subprocess.run(runner('-m', 'seq2seq.no_such_module'), cwd=LEGACY,
                            env=dict(os.environ, **QUIET), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1] == (
        'error: cannot run -m seq2seq.no_such_module: no module named seq2seq.no_such_module '
        'under %s or the installed packages' % LEGACY)
