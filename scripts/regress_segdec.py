"""Compares this project's SegDecNet with figures measured on the TF1 multi-GPU original.

    python scripts/regress_segdec.py --golden tests/data/regression/segdec/golden_seed0.json

Rebuilds each run of the golden file (tower count, image size, seed, learning rate) with the
project's model, towers and three train ops, starts from the recipe's initial values, and
compares per train op: the variables it updates, their step-0 averaged gradient norms (1e-2
relative), the towers' losses on batch 0 (1e-4) and on batch 1 after one update (1e-2); and the
variables' names and shapes. Prints the largest deviations; exits 1 when any exceeds its
tolerance.
"""
import functools
import os

from towers import TowersError, cli
from towers.evaluation.eval_flags import DEFAULT_SHOW
from towers.flags import FlagParser, positive_int

DEFAULT_GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                              'tests', 'data', 'regression', 'segdec', 'golden_seed0.json')


def parse_args(argv):
    parser = FlagParser(description=__doc__.split('\n')[0])
    parser.add_argument('--golden', default=DEFAULT_GOLDEN,
                        help='The golden figures (JSON with "runs").')
    parser.add_argument('--runs', nargs='*', default=None,
                        help='Keys of the runs to compare (default: all).')
    parser.add_argument('--show', type=positive_int, default=DEFAULT_SHOW,
                        help='How many of the largest deviations to print.')
    return parser.parse_args(argv)


def _check(key, run):
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.segdec import regression as segdec_regression

    return segdec_regression.compare_run(key, run, segdec_regression.measure_run(run))


def main(argv):
    args = parse_args(argv)
    from towers import regression

    runs = regression.read_runs(args.golden, '--golden')
    keys = args.runs or sorted(runs, key=lambda k: runs[k]['num_towers'])
    missing = [k for k in keys if k not in runs]
    if missing:
        raise TowersError('--runs %s are not in %s, which has %s'
                          % (' '.join(missing), args.golden, ' '.join(sorted(runs))))
    checks = [('run %s: %d towers, %dx%d, learning rate %g'
               % (key, runs[key]['num_towers'], runs[key]['image_height'],
                  runs[key]['image_width'], runs[key]['learning_rate']),
               functools.partial(_check, key, runs[key]))
              for key in keys]
    return 0 if regression.check_runs(checks, args.show) else cli.EXIT_ERROR


if __name__ == '__main__':
    cli.run(main)
