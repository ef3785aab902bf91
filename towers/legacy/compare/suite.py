"""A library's own test files as the measure: each file run on real TensorFlow 1.15 and under
the runner, unchanged, and the tests that pass on each side counted.

A test file runs as its author ran it (`python path/to/x_test.py`, which calls `tf.test.main`)
with absltest's `--xml_output_file`, from which the outcome of every test is read: on TF 1.15
with the checkout first on `sys.path` (its `tensorflow_estimator` is the one TF 1.15.5
installs), and under the runner, where the checkout's testing-utils modules (test code beside
the tests, e.g. `canned/v1/linear_testing_utils_v1.py`) are importable at their package paths
and nothing else of the checkout is: every other `tensorflow_estimator` name is the runner's.

`python -m towers.legacy.compare.suite CHECKOUT TEST_FILE [FLAGS...]` is the runner's side of
one file (what `run_file` starts).
"""
import importlib.abc
import importlib.util
import os
import re
import subprocess
import sys
import unittest
import xml.etree.ElementTree as ElementTree

from towers.legacy.compare import tf1
from towers.legacy.modules import PRIVATE

PASSED, FAILED, SKIPPED = 'passed', 'failed', 'skipped'
_TESTING_UTILS = 'testing_utils'
_PACKAGE = 'tensorflow_estimator.'
# How a test's last line reads when it read a private name of the runner's proxy of a TF 1
# module, by attribute (`modules.PRIVATE`) or through `mock.patch`.
_PRIVATE_READ = re.compile(
    r"(?P<module>(?:tensorflow_estimator|tensorflow)\.[\w.]+)\.(?P<name>_\w+): %s"
    r"|<module '(?P<patched>(?:tensorflow_estimator|tensorflow)\.[\w.]+)'.*> does not have "
    r"the attribute '(?P<patched_name>_\w+)'" % re.escape(PRIVATE))


class TestingUtilsFinder(importlib.abc.MetaPathFinder):
    """Imports the checkout's testing-utils modules (`tensorflow_estimator....*testing_utils*`)
    from their files; every other name is left to the finders after it."""

    def __init__(self, checkout):
        self._checkout = checkout

    def find_spec(self, name, path=None, target=None):
        if not name.startswith(_PACKAGE) or _TESTING_UTILS not in name.rsplit('.', 1)[-1]:
            return None
        location = os.path.join(self._checkout, *name.split('.')) + '.py'
        if not os.path.isfile(location):
            return None
        return importlib.util.spec_from_file_location(name, location)


def run_file(side, checkout, test_file, xml_path, log_path, tf1_python=None, timeout=3600):
    """Runs one test file on `side` ('tf1' or 'runner') and returns its outcomes (`outcomes`),
    or None when it wrote no report (it failed to import, or ran past `timeout` seconds; its
    output is in `log_path`)."""
    path = os.path.join(checkout, test_file)
    if side == 'tf1':
        command = [tf1_python, path]
        env = dict(tf1.environment(), PYTHONPATH=checkout)
    else:
        command = [sys.executable, '-m', __name__, checkout, path]
        env = dict(os.environ)
    env['TF_CPP_MIN_LOG_LEVEL'] = '2'
    if os.path.exists(xml_path):
        os.remove(xml_path)
    with open(log_path, 'w') as log:
        try:
            subprocess.run(command + ['--xml_output_file=' + xml_path], stdout=log,
                           stderr=subprocess.STDOUT, env=env, timeout=timeout,
                           cwd=os.path.dirname(xml_path))
        except subprocess.TimeoutExpired:
            print('\n(stopped after %d s)' % timeout, file=log)
            return None
    try:
        return outcomes(xml_path)
    except (OSError, ElementTree.ParseError):  # it stopped before writing a whole report
        return None


def outcomes(xml_path):
    """dict 'Class.test' -> (PASSED | FAILED | SKIPPED, the last line of its error or '') of
    absltest's XML report `xml_path`."""
    found = {}
    for case in ElementTree.parse(xml_path).getroot().iter('testcase'):
        name = '%s.%s' % (case.get('classname').rsplit('.', 1)[-1], case.get('name'))
        problem = case.find('failure')
        if problem is None:
            problem = case.find('error')
        if problem is not None:
            text = (problem.text or problem.get('message') or '').strip().splitlines()
            found[name] = (FAILED, text[-1] if text else '')
        elif case.get('result') in ('suppressed', 'skipped') or case.find('skipped') is not None:
            found[name] = (SKIPPED, '')
        else:
            found[name] = (PASSED, '')
    return found


def private_name(line):
    """The private name of TF 1.x's implementation (`training._TrainingExecutor`) whose absence
    under the runner failed a test with `line`, or None."""
    found = _PRIVATE_READ.search(line)
    if found is None:
        return None
    module = found.group('module') or found.group('patched')
    return '%s.%s' % (module.rsplit('.', 1)[-1], found.group('name') or found.group('patched_name'))


def compare(tf1_outcomes, runner_outcomes, left_out):
    """The figures of one file.

    Args:
      tf1_outcomes: `outcomes` on TF 1.15.
      runner_outcomes: `outcomes` under the runner, or None when the file did not run.
      left_out: dict test name -> why it is not counted.

    Returns:
      A dict: 'tf1_passed' (how many TF 1.15 passes), 'left_out' (those of them not counted,
      name -> why: `left_out`'s, and those that failed under the runner only by reading a
      private name of TF 1's implementation), 'counted', 'runner_passed' (of the counted) and
      'runner_failing' (name -> its last line).
    """
    runner_outcomes = runner_outcomes or {}
    counted, not_counted, failing = 0, {}, {}
    for name in sorted(name for name, (status, _) in tf1_outcomes.items() if status == PASSED):
        status, line = runner_outcomes.get(name, (FAILED, 'not run'))
        private = private_name(line) if status == FAILED else None
        if name in left_out or private:
            not_counted[name] = left_out.get(name) or (
                'reads %s, private to TF 1.15\'s implementation' % private)
        else:
            counted += 1
            if status != PASSED:
                failing[name] = line
    return {'tf1_passed': counted + len(not_counted), 'left_out': not_counted,
            'counted': counted, 'runner_passed': counted - len(failing),
            'runner_failing': failing}


def _class_failing_its_tests(load):
    """unittest's `loadTestsFromTestCase` (`load`), where a test class whose construction fails
    (reading a name the runner lacks in its `__init__`) fails each of its own tests with that
    error, instead of stopping the file's other classes from running, as absltest would."""
    def load_tests(loader, test_case_class):
        try:
            return load(loader, test_case_class)
        except Exception as err:  # the class's own constructor: its tests fail with it
            error = err

        def fail(test):
            raise error
        names = loader.getTestCaseNames(test_case_class) or ['runTest']
        failing = type(test_case_class.__name__, (unittest.TestCase,), dict(
            {name: fail for name in names}, __module__=test_case_class.__module__,
            __qualname__=test_case_class.__qualname__))
        return loader.suiteClass(map(failing, names))
    return load_tests


def _child(argv):
    """The runner's side of one file: the shim, the testing-utils finder, the file."""
    from towers.legacy import runner, shim
    checkout, test_file = argv[:2]
    usage = shim.install()
    sys.meta_path.insert(0, TestingUtilsFinder(os.path.abspath(checkout)))
    unittest.TestLoader.loadTestsFromTestCase = _class_failing_its_tests(
        unittest.TestLoader.loadTestsFromTestCase)
    sys.exit(runner.run_script(test_file, argv[2:], usage))


if __name__ == '__main__':
    _child(sys.argv[1:])
