"""`tf.contrib.cudnn_rnn`'s layers under the runner (no GPU: the compatible cells' steps on
their parameters) keep TF 1.15's checkpoint format: a checkpoint of TF 1.15's compatible cells
restores into them and they compute what the cells computed, and theirs restores into TF
1.15's cells, which compute what the layers computed (tests/data/legacy/cudnn_rnn_program.py,
for LSTM, GRU, tanh and relu RNNs, unidirectional and bidirectional, with sequence lengths).
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data', 'legacy',
                       'cudnn_rnn_program.py')
NAMES = ['%s%s' % (kind, suffix) for kind in ('gru', 'lstm', 'relu', 'tanh')
         for suffix in ('', '_bidirectional')]


def run(command, env, *args):
    """The JSON line `PROGRAM args` printed, run by `command`."""
    result = subprocess.run(command + [PROGRAM] + list(args), env=env, capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture(scope='module')
def checkpoints(tf1_python, tmp_path_factory):
    """{'cells': what TF 1.15's compatible cells computed from the weights they saved,
    'layers': what the runner's layers computed from them, before and after a step,
    'cells_of_layers': what TF 1.15's cells computed from the checkpoint the layers saved}."""
    from towers.legacy.compare import tf1
    folder = tmp_path_factory.mktemp('cudnn_rnn')
    cells_ckpt, layers_ckpt = str(folder / 'cells.ckpt'), str(folder / 'layers.ckpt')
    cells = run([tf1_python], tf1.environment(), 'cells', cells_ckpt)
    layers = run([sys.executable, '-m', 'towers.legacy'], dict(os.environ), 'layers',
                 cells_ckpt, layers_ckpt)
    return {'cells': cells, 'layers': layers,
            'cells_of_layers': run([tf1_python], tf1.environment(), 'cells', layers_ckpt,
                                   '--restore')}


def assert_same(found, expected):
    assert sorted(found) == sorted(expected) == NAMES
    for name in NAMES:
        for key in ('outputs', 'h'):
            np.testing.assert_allclose(found[name][key], expected[name][key], rtol=1e-5,
                                       atol=1e-6, err_msg='%s %s' % (name, key))


def test_the_layers_compute_what_tf1_cells_computed_from_the_cells_checkpoint(checkpoints):
    assert_same(checkpoints['layers']['before'], checkpoints['cells'])


def test_tf1_cells_compute_what_the_layers_computed_from_the_layers_checkpoint(checkpoints):
    assert checkpoints['layers']['after'] != checkpoints['layers']['before']
    assert_same(checkpoints['cells_of_layers'], checkpoints['layers']['after'])
