"""Compares this project's SegDecNet with figures measured on the TF1 multi-GPU original.

    python scripts/regress_segdec.py --golden tests/data/regression/segdec/golden_seed0.json

Rebuilds each run of the golden file (tower count, image size, seed, learning rate) with the
project's model, towers and three train ops, starts from the recipe's initial values, and
compares per train op: the variables it updates, their step-0 averaged gradient norms (1e-2
relative), the towers' losses on batch 0 (1e-4) and on batch 1 after one update (1e-2); and the
variables' names and shapes. Prints the largest deviations; exits 1 when any exceeds its
tolerance.

`--original_dir DIR`: DIR holds the user's copy of the TF1 multi-GPU SegDecNet
(`segdec_model.py`, `segdec_train.py`), imported through the legacy runner (`towers.legacy`):
its own `tower_loss`, `average_gradients` and `assign_to_device` build its three train ops in
its `build_model`'s tower loop beside the project (`--tower_counts`, `--image_height`,
`--image_width`, `--learning_rate`, seed 0), from the same initial values on the same batches,
compared as above (`--golden` then compares too only when given); then each side's checkpoint
(after its 'total' updates) is evaluated by the original's SegmentNet and DecisionNet in test
mode and by the port's evaluation (average precision, false positives and negatives, accuracy
exactly; scores 1e-5). `--write_golden FILE` writes the original's figures as a golden file. With
`--original_tf1` the original runs on real TensorFlow 1.15.5 instead (a Python 3.7 process,
`--tf1_python` or found as `towers-legacy --compare_tf1` finds it): each train op two steps from
the same initial values and batches, and its evaluation of both checkpoints.
"""
import functools
import os
import tempfile

from models.segdec import SIZE_MULTIPLE
from towers import TowersError, cli
from towers.evaluation.eval_flags import DEFAULT_SHOW
from towers.files import write_json
from towers.flags import FlagParser, positive_float, positive_int, positive_int_list

DEFAULT_GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                              'tests', 'data', 'regression', 'segdec', 'golden_seed0.json')


def parse_args(argv):
    parser = FlagParser(description=__doc__.split('\n')[0])
    parser.add_argument('--golden', help='The golden figures (JSON with "runs"; default %s '
                                         'without --original_dir).' % DEFAULT_GOLDEN)
    parser.add_argument('--runs', nargs='*', default=None,
                        help='Keys of the runs to compare (default: all).')
    parser.add_argument('--show', type=positive_int, default=DEFAULT_SHOW,
                        help='How many of the largest deviations to print.')
    parser.add_argument('--original_dir', help='Folder of the original\'s segdec_model.py '
                                               'and segdec_train.py.')
    parser.add_argument('--tower_counts', type=positive_int_list, default=[1, 2],
                        help='With --original_dir: comma-separated tower counts (default 1,2).')
    parser.add_argument('--image_height', type=positive_int, default=256,
                        help='With --original_dir: image height, a multiple of 64.')
    parser.add_argument('--image_width', type=positive_int, default=128,
                        help='With --original_dir: image width, a multiple of 64.')
    parser.add_argument('--learning_rate', type=positive_float, default=0.001,
                        help='With --original_dir: of gradient descent (default 0.001).')
    parser.add_argument('--write_golden', help='With --original_dir: write the original\'s '
                                               'figures to this golden file.')
    parser.add_boolean('original_tf1', False, 'With --original_dir: the original runs on real '
                       'TensorFlow 1.15 (a Python 3.7 process), not under the runner.')
    parser.add_argument('--tf1_python', help='With --original_tf1: a Python 3.7 for TensorFlow '
                        '1.15 (default: found, as towers-legacy --compare_tf1 finds it).')
    args = parser.parse_args(argv)
    if not args.original_dir:
        args.golden = args.golden or DEFAULT_GOLDEN
    for flag in ('image_height', 'image_width'):
        if getattr(args, flag) % SIZE_MULTIPLE:
            parser.error('--%s %d: SegDecNet needs a multiple of %d'
                         % (flag, getattr(args, flag), SIZE_MULTIPLE))
    for flag in ('write_golden', 'original_tf1'):
        if getattr(args, flag) and not args.original_dir:
            parser.error('--%s needs --original_dir' % flag)
    if args.write_golden and not os.path.isdir(os.path.dirname(os.path.abspath(
            args.write_golden))):
        parser.error('--write_golden %s: its folder does not exist' % args.write_golden)
    return args


def _check(key, run):
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.segdec import regression as segdec_regression

    return segdec_regression.compare_run(key, run, segdec_regression.measure_run(run))


def main(argv):
    args = parse_args(argv)
    from towers import legacy, regression
    from towers.compat import TF_VERSION

    checks = []
    if args.golden:
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
    if not args.original_dir:
        return 0 if regression.check_runs(checks, args.show) else cli.EXIT_ERROR
    from models.segdec import live_regression as segdec_live
    from towers.legacy.compare import tf1
    originals = legacy.import_originals(args.original_dir, segdec_live.ORIGINAL_MODULES,
                                        '--original_dir')
    python = tf1.python(args.tf1_python) if args.original_tf1 else None
    runtime = ('on real TensorFlow %s (Python 3.7), 1 intra/inter-op thread, towers on CPU '
               'devices' % tf1.VERSION if python else 'through towers.legacy (TF %s, 1 '
               'intra/inter-op thread, towers on virtual CPU devices)' % TF_VERSION)
    print('the original runs %s' % runtime)
    with tempfile.TemporaryDirectory() as workdir:
        live = segdec_live.LiveRegression(originals, workdir, python)
        ok = regression.check_runs(checks + live.checks(
            args.tower_counts, args.image_height, args.image_width, args.learning_rate),
            args.show)
    if args.write_golden:
        write_json(args.write_golden, live.golden(
            'original code in %s, measured live by scripts/regress_segdec.py --original_dir %s'
            % (os.path.abspath(args.original_dir), runtime)))
    return 0 if ok else cli.EXIT_ERROR


if __name__ == '__main__':
    cli.run(main)
