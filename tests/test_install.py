"""Specification of the install: requirements.txt holds what a user's run needs and no test
tool; requirements-test.txt adds the test tools to it; CI installs the latter."""
import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def requirements(name):
    with open(os.path.join(REPO, name)) as f:
        lines = [line.split('#')[0].strip() for line in f]
    return [line for line in lines if line]


def names(lines):
    return {re.split(r'[<>=!~\[ ]', line)[0].lower() for line in lines
            if not line.startswith('-')}


def test_a_users_install_declares_what_runs_import_and_no_test_tool():
    installed = names(requirements('requirements.txt'))
    assert {'tensorflow', 'tf-keras', 'tf-slim', 'absl-py', 'numpy'} <= installed
    assert not installed & {'pytest', 'scikit-learn'}
    assert '-e .' in requirements('requirements.txt')


def test_the_tests_install_adds_their_tools_to_a_users_install_and_ci_uses_it():
    lines = requirements('requirements-test.txt')
    assert '-r requirements.txt' in lines
    assert {'pytest', 'scikit-learn'} <= names(lines)
    with open(os.path.join(REPO, '.ci', 'run')) as f:
        assert 'pip install -r requirements-test.txt' in f.read()
