"""Each test builds its graph in a fresh default graph; `timed_steps` makes step timers of given
step times; the slowest test files are collected first, so that `pytest -n 2 --dist loadfile`
(given files in collection order, pytest.ini's `--no-loadscope-reorder`) starts them first and
the two workers end together."""
import fcntl
import os

import pytest

from towers.compat import tf
from towers.training.hooks import StepTimerHook


# The slowest files, slowest first: minutes on a 2-core machine, from a suite run's
# `--durations` (their fixtures and tests together).
SLOWEST_FILES = [
    'test_legacy_contrib_tf1.py', 'test_default_paths.py', 'test_side_by_side_scripts.py',
    'test_segdec_scripts.py', 'test_benchmark.py', 'test_export.py', 'test_imagenet_scripts.py',
    'test_legacy_compare.py', 'test_horovod.py', 'test_cluster_scripts.py',
    'test_fashion_mnist_scripts.py', 'test_legacy_regression.py', 'test_estimator_cluster.py',
    'test_cifar10_scripts.py', 'test_legacy_contrib_cudnn_rnn.py']


def pytest_collection_modifyitems(items):
    """Puts the tests of `SLOWEST_FILES` first, in that order; the rest keep theirs."""
    rank = {name: number for number, name in enumerate(SLOWEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as graph:
        yield graph


@pytest.fixture
def timed_steps():
    """A function (step seconds, examples per step) -> a `StepTimerHook` that has timed steps
    of those seconds, one second apart, on a clock of its own."""
    def make(step_secs, examples_per_step):
        now = [0.0]
        timer = StepTimerHook(examples_per_step, clock=lambda: now[0])
        for seconds in step_secs:
            timer.before_run(None)
            now[0] += seconds
            timer.after_run(None, None)
            now[0] += 1.0
        return timer
    return make


@pytest.fixture(scope='session')
def tf1_python(tmp_path_factory):
    """A Python 3.7 with TensorFlow 1.15.5 (`towers.legacy.compare.tf1`): the environment
    towers-legacy keeps in '~/.cache/towers' when it is whole there (read, never written), else
    one made once for the whole run in a temporary folder (the workers of `pytest -n` share it:
    the first makes it, the others wait on a lock). Without a Python 3.7 the tests that need it
    skip, saying why; with TOWERS_REQUIRE_TF1 set (as `.ci/run` sets it) they fail instead."""
    from towers.errors import TowersError
    from towers.legacy.compare import tf1
    try:
        python = tf1.find_python()
    except TowersError as err:
        if os.environ.get('TOWERS_REQUIRE_TF1'):
            pytest.fail('TensorFlow 1.15 cannot run here: %s' % err)
        pytest.skip('TensorFlow 1.15 cannot run here: %s' % err)
    kept = tf1.made_in(os.path.join(os.path.expanduser('~'), '.cache', 'towers',
                                    'tf%s-py3.7' % tf1.VERSION))
    if kept:
        return kept
    root = tmp_path_factory.getbasetemp()
    if os.environ.get('PYTEST_XDIST_WORKER'):
        root = root.parent  # this run's folder, above each worker's own
    with open(root / 'tf1.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return tf1.python(python, cache=str(root / 'tf1' / 'env'))
