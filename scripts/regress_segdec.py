"""Compares this project's SegDecNet with figures measured on the TF1 multi-GPU original.

    python scripts/regress_segdec.py --golden tests/data/regression/segdec/golden_seed0.json

Rebuilds each run of the golden file (tower count, image size, seed, learning rate) with the
project's model, towers and three train ops, starts from the recipe's initial values, and
compares per train op: the variables it updates, their step-0 averaged gradient norms (1e-2
relative), the towers' losses on batch 0 (1e-4) and on batch 1 after one update (1e-2); and the
variables' names and shapes. Prints the largest deviations; exits 1 when any exceeds its
tolerance.
"""
import argparse
import os

from models import segdec_regression
from towers import TowersError, cli

DEFAULT_GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                              'tests', 'data', 'regression', 'segdec', 'golden_seed0.json')


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--golden', default=DEFAULT_GOLDEN,
                        help='The golden figures (JSON with "runs").')
    parser.add_argument('--runs', nargs='*', default=None,
                        help='Keys of the runs to compare (default: all).')
    parser.add_argument('--show', type=cli.positive_int, default=10,
                        help='How many of the largest deviations to print.')
    return parser.parse_args(argv)


def load_golden(path):
    golden = cli.read_json(path, '--golden')
    if not isinstance(golden, dict) or not golden.get('runs'):
        raise TowersError('the golden file %s has no "runs"' % path)
    return golden['runs']


def main(argv):
    args = parse_args(argv)
    runs = load_golden(args.golden)
    keys = args.runs or sorted(runs, key=lambda k: runs[k]['num_towers'])
    missing = [k for k in keys if k not in runs]
    if missing:
        raise TowersError('--runs %s are not in %s, which has %s'
                          % (' '.join(missing), args.golden, ' '.join(sorted(runs))))
    deviations = []
    for key in keys:
        run = runs[key]
        measured = segdec_regression.measure_run(run)
        found = segdec_regression.compare_run(key, run, measured)
        failed = [d for d in found if d.error > d.tolerance]
        print('run %s: %d towers, %dx%d, learning rate %g: %d figures compared, %d beyond '
              'tolerance' % (key, run['num_towers'], run['image_height'], run['image_width'],
                             run['learning_rate'], len(found), len(failed)), flush=True)
        deviations.extend(found)
    # Largest first, relative to each figure's tolerance (exact checks that failed lead).
    ranked = sorted(deviations, key=lambda d: d.error / d.tolerance if d.tolerance else
                    (float('inf') if d.error else 0.0), reverse=True)
    print('largest deviations (error / tolerance):')
    for d in ranked[:args.show]:
        ratio = d.error / d.tolerance if d.tolerance else d.error
        print('  run %s  %-62s expected %-12s got %-12s error %.3g (tolerance %g, ratio %.3g)'
              % (d.run, d.what, _short(d.expected), _short(d.actual), d.error, d.tolerance,
                 ratio))
    failed = [d for d in deviations if d.error > d.tolerance]
    if failed:
        print('FAILED: %d of %d figures beyond tolerance' % (len(failed), len(deviations)))
        return cli.EXIT_ERROR
    print('OK: all %d figures within tolerance' % len(deviations))
    return 0


def _short(value):
    return '%.6g' % value if isinstance(value, float) else str(value)[:40]


if __name__ == '__main__':
    cli.run(main)
