"""Runs tensorflow/estimator's own test files on TensorFlow 1.15 and under towers-legacy, and
prints how many of the tests TF 1.15 passes the runner passes, per file.

    git clone https://github.com/tensorflow/estimator && git -C estimator checkout v1.15.1
    python scripts/estimator_tests.py --checkout estimator [--files estimator_test ...]

Each file runs unchanged, as `python x_test.py` runs it (`towers.legacy.compare.suite`): on TF
1.15.5 (a Python 3.7 and the cached environment of `towers-legacy --compare_tf1`), then under
the runner. TF 1.15's outcomes are kept in `--output_dir` and reused (`--rerun_tf1` runs them
again). Tests of private internals are left out of the counts, each with why
(`towers.legacy.compare.estimator_suite.LEFT_OUT`). Prints per file: the tests TF 1.15 passes,
those left out, how many of the rest the runner passes; then each test it fails, with its last
line (`--show_failing`). Writes the figures as JSON (`--report`). Exits 1 when the runner passes
fewer than `--require` of the counted tests (default 0: report only).
"""
import json
import os
import sys

from towers import TowersError, cli, files
from towers.flag_types import non_negative_float
from towers.flags import FlagParser


def parse_args(argv):
    from towers.legacy.compare import estimator_suite

    parser = FlagParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--checkout', required=True,
                        help='A tensorflow/estimator checkout at v1.15.1.')
    parser.add_argument('--files', nargs='*', default=list(estimator_suite.FILES),
                        help='Test files, relative to tensorflow_estimator/python/estimator '
                             'and without .py (default: the %d of the measure).'
                             % len(estimator_suite.FILES))
    parser.add_argument('--output_dir', default='estimator_tests',
                        help='Where both sides\' XML reports and logs are kept.')
    parser.add_argument('--tf1_python', help='A Python 3.7 for TensorFlow 1.15 (default: '
                        'TOWERS_TF1_PYTHON, python3.7 on PATH, pyenv\'s).')
    parser.add_boolean('rerun_tf1', False, 'Run the TF 1.15 side again even when its '
                       'outcomes are in --output_dir.')
    parser.add_boolean('show_failing', True, 'List each counted test the runner fails.')
    parser.add_argument('--report', help='Write the figures as JSON here.')
    parser.add_argument('--require', type=non_negative_float, default=0.0,
                        help='Exit 1 when the runner passes fewer than this fraction of the '
                             'counted tests.')
    return parser.parse_args(argv)


def _file_figures(args, name, tf1_python):
    from towers.legacy.compare import estimator_suite, suite

    path = estimator_suite.path_of(name)
    stem = name.replace('/', '_')
    found = {}
    for side in ('tf1', 'runner'):
        folder = os.path.join(args.output_dir, side)
        os.makedirs(folder, exist_ok=True)
        xml_path = os.path.abspath(os.path.join(folder, stem + '.xml'))
        if side == 'tf1' and os.path.exists(xml_path) and not args.rerun_tf1:
            found[side] = suite.outcomes(xml_path)
            continue
        found[side] = suite.run_file(side, os.path.abspath(args.checkout), path, xml_path,
                                     os.path.join(folder, stem + '.log'), tf1_python)
        if side == 'tf1' and found[side] is None:
            raise TowersError('%s did not run on TensorFlow 1.15: see %s' % (
                path, os.path.join(folder, stem + '.log')))
    left_out = {test.split(':', 1)[1]: why for test, why in estimator_suite.LEFT_OUT.items()
                if test.split(':', 1)[0] == name}
    return suite.compare(found['tf1'], found['runner'], left_out)


def main(argv):
    args = parse_args(argv)
    from towers.legacy.compare import estimator_suite, tf1

    for name in args.files:
        if not os.path.isfile(os.path.join(args.checkout, estimator_suite.path_of(name))):
            raise TowersError('--checkout %s has no %s: give a tensorflow/estimator checkout '
                              'at v1.15.1' % (args.checkout, estimator_suite.path_of(name)))
    tf1_python = tf1.python(args.tf1_python)
    figures, total, passed = {}, 0, 0
    for name in args.files:
        figures[name] = result = _file_figures(args, name, tf1_python)
        total, passed = total + result['counted'], passed + result['runner_passed']
        print('%-28s TF 1.15 passes %3d, left out %2d; the runner passes %3d of %3d (%5.1f%%)'
              % (name, result['tf1_passed'], len(result['left_out']), result['runner_passed'],
                 result['counted'], 100.0 * result['runner_passed'] / max(result['counted'], 1)),
              flush=True)
        if args.show_failing:
            for test, line in sorted(result['runner_failing'].items()):
                print('    fails %s: %s' % (test, line[:160]))
            for test, why in sorted(result['left_out'].items()):
                print('    left out %s: %s' % (test, why))
    share = passed / max(total, 1)
    print('all %d files: the runner passes %d of the %d tests TF 1.15 passes that are counted '
          '(%.1f%%)' % (len(args.files), passed, total, 100.0 * share))
    if args.report:
        files.write_json(args.report, {'files': figures, 'counted': total,
                                       'runner_passed': passed, 'share': share})
    return 0 if share >= args.require else cli.EXIT_ERROR


if __name__ == '__main__':
    sys.exit(cli.run(main))
