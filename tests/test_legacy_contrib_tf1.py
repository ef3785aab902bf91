"""The runner's `tf.contrib` pieces compute what TensorFlow 1.15 computed: every case of
tests/data/legacy/contrib/case_<piece>.py runs once on real TF 1.15.5 and once under the runner
(run_cases.py, one process each for the whole suite), from the same variable values and inputs;
each piece's outputs, trained values and variable names must agree."""
import glob
import os
import subprocess
import sys

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(REPO, 'tests', 'data', 'legacy', 'contrib')
PIECES = sorted(os.path.basename(path)[len('case_'):-len('.py')]
                for path in glob.glob(os.path.join(CASES, 'case_*.py')))
RTOL, ATOL = 2e-5, 2e-6


@pytest.fixture(scope='module')
def sides(tf1_python, tmp_path_factory):
    """{'tf1': folder, 'runner': folder} of the cases' records."""
    from towers.legacy.compare import tf1
    root = tmp_path_factory.mktemp('contrib_cases')
    commands = {'tf1': ([tf1_python], tf1.environment()),
                'runner': ([sys.executable, '-m', 'towers.legacy'], dict(os.environ))}
    folders = {}
    for side, (command, env) in commands.items():
        folders[side] = root / side
        result = subprocess.run(command + [os.path.join(CASES, 'run_cases.py'),
                                           str(folders[side])],
                                cwd=root, env=env, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, '%s side failed:\n%s' % (side, result.stderr[-4000:])
    return folders


def load(folder, piece):
    return {os.path.basename(path): dict(np.load(path))
            for path in sorted(glob.glob(os.path.join(str(folder), '%s.*.npz' % piece)))}


def compare_piece(tf1_folder, runner_folder, piece):
    """Asserts that the records of `piece`'s cases in the two folders agree."""
    tf1, runner = load(tf1_folder, piece), load(runner_folder, piece)
    assert tf1 and sorted(tf1) == sorted(runner)
    for case in tf1:
        expected, found = tf1[case], runner[case]
        assert list(found['names']) == list(expected['names']), case
        assert sorted(found) == sorted(expected), case
        for key in expected:
            if key == 'names':
                continue
            assert found[key].shape == expected[key].shape, (case, key)
            assert found[key].dtype == expected[key].dtype, (case, key)
            if expected[key].dtype.kind in 'biuSU':
                np.testing.assert_array_equal(found[key], expected[key], '%s %s' % (case, key))
            else:
                assert not np.isnan(expected[key]).any(), (
                    '%s %s: TF 1.15 computed NaN; the case compares nothing there' % (case, key))
                np.testing.assert_allclose(found[key], expected[key], RTOL, ATOL,
                                           err_msg='%s %s' % (case, key))


@pytest.mark.parametrize('piece', PIECES)
def test_the_piece_computes_what_tf1_15_computed(sides, piece):
    compare_piece(sides['tf1'], sides['runner'], piece)
