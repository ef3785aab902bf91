"""Replays the original CIFAR-10 tutorial's regression figures with this project's code.

    python scripts/regress_cifar10.py --golden tests/data/regression/cifar10/golden_train_seed0.json
    python scripts/regress_cifar10.py \\
        --eval_golden tests/data/regression/cifar10/golden_eval_seed0.json \\
        --checkpoint tests/data/regression/cifar10/original_n2_s0_300.ckpt

`--golden`: every run of the file (its tower count, seed and steps) is trained again with the
project's recipe on towers of virtual CPU devices, from the recipe's initial weights on its
batches (`models.cifar10.regression`), and compared with the original: the learning-rate decay
steps (exactly), the tower losses (1e-3 absolute), the step-0 averaged gradient norms (1e-4
relative) and the final sums of |value| of the variables (reported only).

`--eval_golden` with `--checkpoint`: the checkpoint's moving averages are restored into the
project's evaluation graph, which must reproduce the original's precision @ 1, true count
(exactly) and per-batch sums of |logits| (1e-4 relative).

`--original_dir DIR`: no golden file; DIR holds the user's copy of the original tutorial
(`cifar10.py`, `cifar10_multi_gpu_train.py`, `cifar10_input.py`), imported through the legacy
runner (`towers.legacy`). Its own `tower_loss`, `average_gradients` and `inference` train beside
the project on the same weights and batches (`--tower_counts`, `--steps`), compared as above,
and the checkpoint each side writes is evaluated by both. `--write_golden FILE` writes the
original's training figures as a golden file for `--golden`. With `--original_tf1` the original
trains on real TensorFlow 1.15.5 instead (a Python 3.7 process, found as `towers-legacy
--compare_tf1` finds it, or `--tf1_python`), from the same weights on the same batches, and its
checkpoint, written by TF 1.15, is evaluated by both here.

Both run TensorFlow with one intra-op and one inter-op thread, as the goldens were measured.
Prints the largest deviation of each figure and the largest overall; the exit status is 1 when
any figure is out of its tolerance.
"""
import functools
import os
import tempfile

from towers import TowersError, cli, legacy
from towers.files import read_json, write_json
from towers.flags import FlagParser, positive_int, positive_int_list


def parse_args(argv):
    parser = FlagParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--golden', help='JSON of training runs of the original tutorial '
                                         '(golden_train_seed0.json).')
    parser.add_argument('--eval_golden', help='JSON of the original evaluation of a checkpoint '
                                              '(golden_eval_seed0.json).')
    parser.add_argument('--checkpoint', help='Prefix of the checkpoint the original wrote, '
                                             'for --eval_golden.')
    parser.add_argument('--original_dir', help='Folder of the original tutorial\'s cifar10.py, '
                                               'cifar10_multi_gpu_train.py, cifar10_input.py.')
    parser.add_argument('--tower_counts', type=positive_int_list, default=[1, 2, 4],
                        help='With --original_dir: comma-separated tower counts (default '
                             '1,2,4).')
    parser.add_argument('--steps', type=positive_int, default=20,
                        help='With --original_dir: training steps of each run (default 20).')
    parser.add_argument('--write_golden', help='With --original_dir: write the original\'s '
                                               'training figures to this golden file.')
    parser.add_boolean('original_tf1', False, 'With --original_dir: the original trains on '
                       'real TensorFlow 1.15 (a Python 3.7 process), not under the runner.')
    parser.add_argument('--tf1_python', help='With --original_tf1: a Python 3.7 for TensorFlow '
                        '1.15 (default: found, as towers-legacy --compare_tf1 finds it).')
    args = parser.parse_args(argv)
    if not (args.golden or args.eval_golden or args.original_dir):
        parser.error('give --golden, --eval_golden, --original_dir or several')
    if args.eval_golden and not args.checkpoint:
        parser.error('--eval_golden needs --checkpoint')
    for flag in ('write_golden', 'original_tf1'):
        if getattr(args, flag) and not args.original_dir:
            parser.error('--%s needs --original_dir' % flag)
    if args.write_golden and not os.path.isdir(os.path.dirname(os.path.abspath(
            args.write_golden))):
        parser.error('--write_golden %s: its folder does not exist' % args.write_golden)
    return args


def _check_training(key, run):
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.cifar10 import regression as cifar10_regression

    return cifar10_regression.compare_run(key, run, cifar10_regression.measure_run(run))


def _check_evaluation(golden, checkpoint):
    from models.cifar10 import regression as cifar10_regression

    return cifar10_regression.compare_evaluation(
        golden, cifar10_regression.measure_evaluation(golden, checkpoint))


def main(argv):
    args = parse_args(argv)
    from models.cifar10 import live_regression as cifar10_live
    from towers import regression
    from towers.compat import TF_VERSION, tf
    from towers.legacy.compare import tf1

    checks = []
    if args.golden:
        runs = regression.read_runs(args.golden, '--golden')
        checks += [('%s: %d tower(s), seed %d, %d steps'
                    % (os.path.basename(args.golden), run['num_towers'], run['seed'],
                       run['steps']), functools.partial(_check_training, key, run))
                   for key, run in runs.items()]
    if args.eval_golden:
        golden = read_json(args.eval_golden, '--eval_golden')
        if not tf.train.checkpoint_exists(args.checkpoint):
            raise TowersError('--checkpoint %s: no checkpoint with that prefix (expected '
                              '%s.index and its data files)' % (args.checkpoint, args.checkpoint))
        checks.append(('%s on %s' % (os.path.basename(args.eval_golden),
                                     os.path.basename(args.checkpoint)),
                       functools.partial(_check_evaluation, golden, args.checkpoint)))
    if not args.original_dir:
        return 0 if regression.check_runs(checks) else cli.EXIT_ERROR
    originals = legacy.import_originals(args.original_dir, cifar10_live.ORIGINAL_MODULES,
                                        '--original_dir')
    python = tf1.python(args.tf1_python) if args.original_tf1 else None
    runtime = ('on real TensorFlow %s (Python 3.7), 1 intra/inter-op thread, towers on CPU '
               'devices' % tf1.VERSION if python else 'through towers.legacy (TF %s, 1 '
               'intra/inter-op thread, towers on virtual CPU devices)' % TF_VERSION)
    print('the original trains %s' % runtime)
    with tempfile.TemporaryDirectory() as workdir:
        live = cifar10_live.LiveRegression(originals, workdir, python)
        ok = regression.check_runs(checks + live.checks(args.tower_counts, args.steps))
    if args.write_golden:
        write_json(args.write_golden, live.golden(
            'original code in %s, measured live by scripts/regress_cifar10.py --original_dir %s'
            % (os.path.abspath(args.original_dir), runtime)))
    return 0 if ok else cli.EXIT_ERROR


if __name__ == '__main__':
    cli.run(main)
