"""Running the project's scripts as a user does, for the tests of the scripts."""
import contextlib
import glob
import io
import os
import re
import runpy
import shlex
import shutil
import subprocess
import sys

import pytest

import cluster_train_program
from towers import cli
from towers.compat import tf

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The training loop's line every --log_every_n_steps steps, as the tutorial printed it.
LOG_LINE = re.compile(r'^\S+ \S+: step (\d+), loss = \d+\.\d\d '
                      r'\(\d+\.\d examples/sec; \d+\.\d\d\d sec/batch\)$', re.MULTILINE)
# The flags of a bit-reproducible run.
DETERMINISTIC = ('--deterministic', '--seed', '1')


def run_in_process(name, *args):
    """Runs scripts/`name` with `args` inside this process, as its `cli.run` runs it; returns a
    `subprocess.CompletedProcess` of its exit status and what it printed. For the runs that stop
    at an error: they need not pay a new process's start of TensorFlow (about 6 s here). What it
    logs goes to the test's log capture, not to its stderr."""
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        with pytest.raises(SystemExit) as exited:
            cli.run(script_main(name), list(args))
    return subprocess.CompletedProcess([name] + list(args), exited.value.code or 0,
                                       stdout.getvalue(), stderr.getvalue())


def environment(**changes):
    """The caller's environment with `changes`: a value a variable's new value, None to unset
    it. For a process whose test depends on a variable the caller may have exported."""
    env = dict(os.environ)
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def run_script(name, *args, env=None):
    """Runs scripts/`name` with `args` from the repository's root, in `env` (default: the
    caller's environment); returns the `subprocess.CompletedProcess`, its output captured as
    text."""
    return subprocess.run([sys.executable, os.path.join(REPO, 'scripts', name)] + list(args),
                          cwd=REPO, capture_output=True, text=True, timeout=600, env=env)


def copy_with_damaged_newest(train_dir, copy_dir):
    """Copies the training directory `train_dir` to `copy_dir` and adds a checkpoint one step
    past its newest whose data file is truncated (its index whole), as a crash while writing
    leaves it.

    Returns:
      (the newest checkpoint that reads whole, the damaged one): prefixes in `copy_dir`.
    """
    shutil.copytree(train_dir, copy_dir)
    state = tf.train.get_checkpoint_state(copy_dir)
    good = os.path.join(copy_dir, os.path.basename(state.model_checkpoint_path))
    step = int(good.rsplit('-', 1)[1])
    damaged = '%s-%d' % (good.rsplit('-', 1)[0], step + 1)
    for path in glob.glob(good + '.*'):
        shutil.copyfile(path, damaged + path[len(good):])
    data = damaged + '.data-00000-of-00001'
    with open(data, 'r+b') as f:
        f.truncate(os.path.getsize(data) // 2)
    tf.train.update_checkpoint_state(copy_dir, damaged,
                                     list(state.all_model_checkpoint_paths) + [damaged])
    return good, damaged


def skipped_line(damaged):
    """The pattern of the warning naming the damaged checkpoint an evaluation skipped."""
    return re.compile(r'WARNING \S+: skipping checkpoint %s: its data %s\.data-\* cannot be '
                      r'read' % (re.escape(damaged), re.escape(damaged)))


def run_cli(capsys, main, *argv):
    """Runs `main` as a script runs, through `towers.cli.run`; returns (status, stderr)."""
    with pytest.raises(SystemExit) as exited:
        cli.run(main, list(argv))
    return exited.value.code, capsys.readouterr().err


def script_main(name):
    """The `main` of scripts/`name`, loaded as a module of its own."""
    return runpy.run_path(os.path.join(REPO, 'scripts', name))['main']


def assert_one_error_line(status, stderr, expected, statuses=(1,)):
    """A non-zero exit (one of `statuses`) whose stderr ends with the line `expected` (a regular
    expression) and holds no traceback."""
    assert status in statuses, stderr
    assert 'Traceback' not in stderr
    assert re.fullmatch(expected, stderr.strip().splitlines()[-1]), stderr


def train_program(train_dir, max_steps, *flags):
    """Runs tests/cluster_train_program.py in this process, one tower, to `max_steps`; returns
    its exit status."""
    return cluster_train_program.main(['--train_dir', str(train_dir), '--max_steps',
                                       str(max_steps), '--num_gpus', '1'] + list(flags))


def evaluation_events(train_dir):
    """What evaluations of the checkpoints of `train_dir` wrote to TensorBoard, in its run
    `eval`: {tag: (step, value)}, the value a scalar's number, 'image' for an image, 'pr_curve'
    for a PR-curve summary."""
    found = {}
    eval_dir = os.path.join(train_dir, 'eval')
    for name in os.listdir(eval_dir):
        if not name.startswith('events.out.tfevents'):
            continue
        for event in tf.train.summary_iterator(os.path.join(eval_dir, name)):
            for value in event.summary.value:
                kind = value.WhichOneof('value')
                if kind == 'simple_value':
                    found[value.tag] = (event.step, value.simple_value)
                elif kind == 'image':
                    found[value.tag] = (event.step, 'image')
                elif value.metadata.plugin_data.plugin_name == 'pr_curves':
                    found[value.tag] = (event.step, 'pr_curve')
    return found


class FreshCopy:
    """A copy of the repository as a fresh clone holds it (its files that git tracks or would
    commit, no `data/`), whose commands run as a newcomer types them, in a private /tmp.

    `root` is seen as /tmp by the commands (a bind mount in a mount namespace of their own),
    and the copy lies at `root/repo`, seen as /tmp/repo, their working directory and first
    import path: a script's defaults, `/tmp/...` and `<repository>/data/...`, are then the
    copy's alone, never the checkout's or the machine's.
    """

    def __init__(self, root):
        self.root = str(root)
        self.repo = os.path.join(self.root, 'repo')
        listed = subprocess.run(['git', 'ls-files', '-z', '--cached', '--others',
                                 '--exclude-standard'], cwd=REPO, capture_output=True,
                                check=True).stdout.decode().split('\0')
        for name in filter(None, listed):
            source = os.path.join(REPO, name)
            if os.path.isfile(source):   # a tracked file deleted in the work tree is not
                os.makedirs(os.path.dirname(os.path.join(self.repo, name)), exist_ok=True)
                shutil.copy2(source, os.path.join(self.repo, name))

    def run(self, command, timeout=600):
        """Runs `command`, a line as the docs show it ('python scripts/train_segdec.py ...',
        its `python` this interpreter), from the copy's root; returns the
        `subprocess.CompletedProcess`, its output captured as text.

        Its environment is the caller's, less the variables that would make it another run
        (`TF_CONFIG`: a cluster task), with the copy first on `PYTHONPATH`."""
        argv = shlex.split(command)
        if argv[0] == 'python':
            argv[0] = sys.executable
        env = environment(TF_CONFIG=None, PYTHONPATH=os.pathsep.join(
            ['/tmp/repo'] + ([os.environ['PYTHONPATH']] if os.environ.get('PYTHONPATH') else [])))
        private = ['unshare', '--mount'] + ([] if os.geteuid() == 0 else ['--map-root-user'])
        return subprocess.run(
            private + ['sh', '-c', 'mount --bind "$0" /tmp && cd /tmp/repo && exec "$@"',
                       self.root] + argv,
            env=env, capture_output=True, text=True, timeout=timeout)
