"""Real TensorFlow 1.15 for `towers-legacy --compare_tf1`: a Python 3.7 (TF 1.15's last Python),
and TensorFlow 1.15.5 installed into a cached environment of it once.

The Python 3.7 is the one given (`--tf1_python` or `TOWERS_TF1_PYTHON`), else `python3.7` on
`PATH`, else pyenv's newest 3.7. One that already imports TensorFlow 1.15 is used as it is;
another gets a virtual environment in the cache (`TOWERS_TF1_ENV`, else
'~/.cache/towers/tf1.15.5-py3.7'), made in a folder beside it and renamed into place when whole,
holding `PACKAGES` from the package index pip is configured with.
"""
import glob
import json
import os
import shutil
import subprocess
import sys

from towers import files
from towers.errors import TowersError
from towers.legacy.compare import probe, sides

PYTHON_VARIABLE = 'TOWERS_TF1_PYTHON'
ENV_VARIABLE = 'TOWERS_TF1_ENV'
VERSION = '1.15.5'
PACKAGES = ('tensorflow==' + VERSION, 'protobuf==3.20.3', 'h5py<3')
_MARKER = 'towers-tf1.json'
_HOW = ('install one (e.g. `pyenv install 3.7.16`) and give it with --tf1_python PATH or %s'
        % PYTHON_VARIABLE)


def _version_of(python, code):
    """What `python -c code` prints, or None when it cannot run it."""
    try:
        done = subprocess.run([python, '-c', code], capture_output=True, text=True,
                              timeout=300)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _is_python37(python):
    return _version_of(python, 'import sys; print("%d.%d" % sys.version_info[:2])') == '3.7'


def _tensorflow_of(python):
    return _version_of(python, 'import tensorflow as tf; print(tf.__version__)')


def find_python(given=None):
    """The path of a Python 3.7: `given`, `TOWERS_TF1_PYTHON`, `python3.7` on PATH, pyenv's.

    Raises:
      TowersError: the one given is not a Python 3.7, or none was found; saying how to get one.
    """
    for source, python in (('--tf1_python', given),
                           (PYTHON_VARIABLE, os.environ.get(PYTHON_VARIABLE))):
        if python:
            if not _is_python37(python):
                raise TowersError('%s %s is not a Python 3.7 that runs (TensorFlow 1.15 needs '
                                  'one): %s' % (source, python, _HOW))
            return python
    pyenv = os.environ.get('PYENV_ROOT') or os.path.expanduser('~/.pyenv')
    candidates = [shutil.which('python3.7')] + sorted(
        glob.glob(os.path.join(pyenv, 'versions', '3.7*', 'bin', 'python3.7')), reverse=True)
    for python in candidates:
        if python and _is_python37(python):
            return python
    raise TowersError('no Python 3.7 found for TensorFlow 1.15 (not on PATH, not in pyenv): '
                      + _HOW)


def cache_folder():
    """Where the environment is kept: `TOWERS_TF1_ENV`, else in '~/.cache/towers'."""
    return os.environ.get(ENV_VARIABLE) or os.path.join(
        os.path.expanduser('~'), '.cache', 'towers', 'tf%s-py3.7' % VERSION)


def made_in(folder):
    """The Python of the whole environment in `folder` (made by `python`), else None."""
    made = os.path.join(folder, 'bin', 'python')
    return made if os.path.isfile(os.path.join(folder, _MARKER)) and os.path.isfile(made) else None


def python(given=None, cache=None, log=None):
    """The Python 3.7 that imports TensorFlow 1.15: `find_python(given)` when it does, else
    the cached environment's, made first if need be.

    Args:
      given: a Python 3.7 the user named, or None.
      cache: the environment's folder (default `cache_folder()`).
      log: where the making of the environment is told (default: stderr).

    Raises:
      TowersError: no Python 3.7, or the installation failed (pip's last line quoted).
    """
    base = find_python(given)
    version = _tensorflow_of(base)
    if version and version.startswith('1.15'):
        return base
    folder = cache or cache_folder()
    made = made_in(folder)
    if made:
        return made
    print('towers-legacy: installing TensorFlow %s into %s (once)' % (VERSION, folder),
          file=log or sys.stderr, flush=True)
    parent = os.path.dirname(os.path.abspath(folder))
    os.makedirs(parent, exist_ok=True)

    def install(staging):
        _step([base, '-m', 'venv', staging], folder)
        pip = [os.path.join(staging, 'bin', 'python'), '-m', 'pip', 'install', '--quiet']
        _step(pip + ['pip<24'], folder)
        _step(pip + list(PACKAGES), folder)
        files.write_json(os.path.join(staging, _MARKER),
                         {'python': base, 'packages': list(PACKAGES)})
    files.write_directory_atomically(folder, install)
    return made_in(folder)


def environment():
    """This process's environment for a TF 1.15 process, without TF2_BEHAVIOR (TensorFlow 2
    sets it in its process, and TensorFlow 1.15 turns eager execution on by it)."""
    return {key: value for key, value in os.environ.items() if key != 'TF2_BEHAVIOR'}


def run_job(python, job, spec, folder):
    """Runs `towers.legacy.compare.probe`'s `job` ('replay' or 'evaluate') of `spec` on TF 1.15
    and returns what it wrote.

    Args:
      python: a Python that imports TF 1.15 (`python()`).
      job: 'replay' or 'evaluate'.
      spec: the job's dict, without 'out'.
      folder: an existing folder for its specification, answer and output ('<job>*').

    Raises:
      TowersError: the job failed on TF 1.15 (its last line quoted, its output kept).
    """
    spec = dict(spec, out=os.path.join(folder, job + '.json'))
    files.write_json(os.path.join(folder, job + '_spec.json'), spec)
    log_path = os.path.join(folder, job + '.log')
    with open(log_path, 'w') as log:
        done = subprocess.run([python, probe.__file__, '--' + job,
                               os.path.join(folder, job + '_spec.json')],
                              stdout=log, stderr=subprocess.STDOUT, env=environment())
    if done.returncode != 0:
        with open(log_path, errors='replace') as log:
            last = sides.last_line(log.read())
        raise TowersError('the original failed on TensorFlow %s (exit status %d): %s (its '
                          'output: %s)' % (VERSION, done.returncode, last, log_path))
    with open(spec['out']) as f:
        return json.load(f)


def _step(command, folder):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise TowersError('cannot install TensorFlow %s into %s: `%s` failed: %s'
                          % (VERSION, folder, ' '.join(command[-3:]),
                             sides.last_line(done.stderr or done.stdout)))
