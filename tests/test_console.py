"""A quiet start: TensorFlow's C++ start-up lines and harmless errors hidden, everything else
shown, `--verbose` and the user's TF_CPP_MIN_LOG_LEVEL obeyed (towers.console)."""
import os
import subprocess
import sys

from towers.console import BANNER, NativeLogFilter

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

INFO = b'I0000 00:00:1795704620.077327    7131 port.cc:153] oneDNN custom operations are on.'
WARNING = b'W0000 00:00:1795704620.077327    7131 grappler.cc:10] a warning'
NO_GPU = (b'E0000 00:00:1795704623.327092    7131 cuda_platform.cc:52] failed call to cuInit: '
          b'INTERNAL: CUDA error: Failed call to cuInit: UNKNOWN ERROR (303)')
ERROR = b'E1126 14:50:26.148856    7189 session.cc:131] a real error'
FATAL = b'F1126 14:50:26.148856    7189 tensor.cc:1] Check failed: boom'
PYTHON_ABSL = b'I1126 14:50:26.148856  7189 train.py:12] a Python absl line'


def test_by_default_the_startup_lines_and_the_harmless_errors_are_hidden():
    rules = NativeLogFilter(None)
    assert [rules.keeps(line) for line in (BANNER, INFO, NO_GPU)] == [False] * 3
    assert [rules.keeps(line) for line in (WARNING, ERROR, FATAL, PYTHON_ABSL, b'text')] == \
        [True] * 5


def test_a_level_the_user_set_decides_and_shows_the_cuda_error_below_three():
    assert [NativeLogFilter('0').keeps(line) for line in (BANNER, INFO, NO_GPU)] == [True] * 3
    assert [NativeLogFilter('2').keeps(line) for line in (INFO, WARNING, NO_GPU, ERROR)] == \
        [False, False, True, True]
    assert [NativeLogFilter('3').keeps(line) for line in (NO_GPU, ERROR, FATAL)] == \
        [False, False, True]


def test_verbose_shows_everything():
    rules = NativeLogFilter(None)
    rules.verbose = True
    assert all(rules.keeps(line) for line in (BANNER, INFO, NO_GPU))


# A script (cli.run) whose "TensorFlow" writes start-up lines to fd 2 as the C++ library does,
# among the script's own lines, then exits or aborts as a failed CHECK does.
PROGRAM = r'''
import logging, os, sys
from towers import cli, flags

def main(argv):
    parser = flags.FlagParser()
    parser.add_boolean('abort', False, 'abort')
    args = parser.parse_args(argv)
    print('python line', file=sys.stderr)
    os.write(2, b'\n'.join(%r) + b'\n')
    logging.getLogger('script').info('logged line')
    os.write(2, b'no newline at the end')
    if args.abort:
        os.abort()

cli.run(main)
''' % ([BANNER, INFO, NO_GPU, ERROR, FATAL],)


def run_program(tmp_path, *args, **environment):
    path = tmp_path / 'program.py'
    path.write_text(PROGRAM)
    env = dict(os.environ, PYTHONPATH=REPO, **environment)
    env.pop('TF_CPP_MIN_LOG_LEVEL', None)
    env.update(environment)
    return subprocess.run([sys.executable, str(path)] + list(args), capture_output=True,
                          env=env, timeout=60)


def lines(result):
    """The lines of `result`'s stderr, sorted: the script's own lines go straight to stderr, the
    C++ library's through the filter, so the two may interleave in either order."""
    return sorted(result.stderr.split(b'\n'))


def test_a_script_shows_its_own_lines_and_tensorflows_real_ones_only(tmp_path):
    result = run_program(tmp_path)
    assert result.returncode == 0, result.stderr
    assert lines(result) == sorted([b'python line', ERROR, FATAL, b'INFO script: logged line',
                                    b'no newline at the end'])


def test_verbose_and_the_users_level_show_the_startup_lines(tmp_path):
    shown = sorted([b'python line', BANNER, INFO, NO_GPU, ERROR, FATAL,
                    b'INFO script: logged line', b'no newline at the end'])
    assert lines(run_program(tmp_path, '--verbose')) == shown
    assert lines(run_program(tmp_path, TF_CPP_MIN_LOG_LEVEL='0')) == shown


def test_the_last_lines_of_a_crash_still_reach_the_terminal(tmp_path):
    result = run_program(tmp_path, '--abort')
    assert result.returncode == -6
    assert lines(result) == sorted([b'python line', ERROR, FATAL, b'INFO script: logged line',
                                    b'no newline at the end'])
