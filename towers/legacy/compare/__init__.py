"""`towers-legacy --compare_tf1 SCRIPT [FLAGS...]`: does the program compute on TensorFlow 2.21,
under the runner, what it computed on TensorFlow 1.15?

    towers-legacy --compare_tf1 [--tf1_python PATH] [--compare_report FILE] [--compare_dir DIR]
        [--compare_rtol R] [--compare_atol A] [--legacy_devices N] SCRIPT [FLAGS...]
    towers-legacy --compare_tf1 [...] -m package.module [FLAGS...]

The program runs twice, unchanged, with the same flags and working folder: first on real
TensorFlow 1.15.5 (`tf1`: a Python 3.7 and a cached environment), then under the runner, which
first loads the variables TF 1.15's run initialized, by name (`probe`). Random ops that take no
seed of their own draw from seeds keyed by their name scope on both sides. Each side's writes
stay its own (`sides`), also at fixed paths. Then `report` compares the scalar summaries step by
step, the final variables by name and the files each side wrote, prints them and the verdict,
and writes the JSON report (`--compare_report`, else 'report.json' in the comparison's folder,
which keeps both runs' files and output).

Exit status: 0 equal within the tolerances printed, 1 they differ, 2 no comparison (a bad
option, no Python 3.7, the program failed on TF 1.15, nothing to compare).
"""
import os
import sys

from towers.flags import MODULE_OPTION, FlagError, FlagParser, leading_options
from towers.flag_types import non_negative_float, positive_int

OPTION = '--compare_tf1'
EXIT_EQUAL, EXIT_DIFFER, EXIT_CANNOT = 0, 1, 2
_WITH_VALUE = ('--tf1_python', '--compare_report', '--compare_dir', '--compare_rtol',
               '--compare_atol', '--legacy_devices', '--precise_bn_batches')


def is_command(argv):
    """Whether the command line asks for a comparison (`--compare_tf1` before the script)."""
    for option in _options(argv)[0]:
        if option.split('=')[0].lstrip('-') == OPTION[2:]:
            return True
    return False


def _options(argv):
    """(options before the script, the rest)."""
    index = len(leading_options(argv, _WITH_VALUE))
    if index < len(argv) and argv[index] == '--':
        return argv[:index], argv[index + 1:]
    return argv[:index], argv[index:]


def parse(argv):
    """(options, script, script_argv, runner_options) of a `--compare_tf1` command line;
    `script` is the program's file, or ('-m', MODULE).

    Raises:
      FlagError: a bad option, or no script.
    """
    options_argv, rest = _options(argv)
    parser = FlagParser(prog='towers-legacy --compare_tf1', description=__doc__.split('\n\n')[0],
                        usage='%(prog)s [--tf1_python PATH] [--compare_report FILE] '
                              '[--legacy_devices N] SCRIPT [FLAGS...]')
    parser.add_argument(OPTION, action='store_true', help='Compare the program on TF 1.15 and '
                        'under the runner.')
    parser.add_argument('--tf1_python', help='A Python 3.7 for TensorFlow 1.15 (default: '
                        'TOWERS_TF1_PYTHON, python3.7 on PATH, pyenv\'s).')
    parser.add_argument('--compare_report', help='Write the JSON report here (default: '
                        'report.json in the comparison\'s folder).')
    parser.add_argument('--compare_dir', help='Keep both runs\' files and output here (a new '
                        'or empty folder; default: a new folder under the temporary folder).')
    parser.add_argument('--compare_rtol', type=non_negative_float, default=1e-4,
                        help='Relative tolerance of the comparison (default 1e-4).')
    parser.add_argument('--compare_atol', type=non_negative_float, default=1e-5,
                        help='Absolute tolerance of the comparison (default 1e-5).')
    parser.add_argument('--legacy_devices', type=positive_int,
                        help='The runner\'s side makes N tower devices (see towers-legacy).')
    parser.add_argument('--precise_bn_batches', type=positive_int,
                        help='The runner\'s side re-estimates batch-norm statistics (see '
                             'towers-legacy).')
    parser.add_boolean('deterministic', False, 'The runner\'s side turns op determinism on.')
    options = parser.parse_args(options_argv)
    if not rest:
        raise FlagError('give the script to compare: towers-legacy --compare_tf1 SCRIPT '
                        '[FLAGS...]')
    if rest[0] == MODULE_OPTION:
        return options, _module(rest[1:2]), rest[2:], runner_options(options)
    if not os.path.isfile(rest[0]):
        raise FlagError('cannot compare %s: no such file' % rest[0])
    return options, rest[0], rest[1:], runner_options(options)


def _module(given):
    """('-m', MODULE) of `-m MODULE`, its top package found from the working folder as
    `python -m` finds it (without running it).

    Raises:
      FlagError: no module given, or no such package here.
    """
    if not given:
        raise FlagError('-m needs the module to compare: towers-legacy --compare_tf1 -m '
                        'package.module [FLAGS...]')
    top = given[0].split('.')[0]
    if not any(os.path.isfile(os.path.join(os.getcwd(), top + ending))
               for ending in ('.py', os.sep + '__init__.py')):
        raise FlagError('cannot compare -m %s: no %s.py or %s/__init__.py in the working folder '
                        '%s' % (given[0], top, top, os.getcwd()))
    return MODULE_OPTION, given[0]


def runner_options(options):
    """The runner's options that `options` pass on to the runner's side."""
    passed = []
    for name in ('legacy_devices', 'precise_bn_batches'):
        if getattr(options, name):
            passed += ['--' + name, str(getattr(options, name))]
    if options.deterministic:
        passed.append('--deterministic')
    return passed


def main(argv):
    """The command; returns its exit status."""
    from towers import cli
    from towers.errors import TowersError
    from towers.legacy.compare import run
    try:
        options, script, script_argv, runner_options = parse(argv)
        return run.compare(options, script, script_argv, runner_options)
    except (TowersError, OSError) as err:
        print('error: %s' % (err if isinstance(err, TowersError) else cli.describe(err)),
              file=sys.stderr)
        return EXIT_CANNOT
