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

Both run TensorFlow with one intra-op and one inter-op thread, as the goldens were measured.
Prints the largest deviation of each figure and the largest overall; the exit status is 1 when
any figure is out of its tolerance.
"""
import functools
import os

from models.cifar10 import regression as cifar10_regression
from towers import TowersError, cli, regression
from towers.compat import tf
from towers.files import read_json
from towers.flags import FlagParser


def parse_args(argv):
    parser = FlagParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--golden', help='JSON of training runs of the original tutorial '
                                         '(golden_train_seed0.json).')
    parser.add_argument('--eval_golden', help='JSON of the original evaluation of a checkpoint '
                                              '(golden_eval_seed0.json).')
    parser.add_argument('--checkpoint', help='Prefix of the checkpoint the original wrote, '
                                             'for --eval_golden.')
    args = parser.parse_args(argv)
    if not (args.golden or args.eval_golden):
        parser.error('give --golden, --eval_golden or both')
    if args.eval_golden and not args.checkpoint:
        parser.error('--eval_golden needs --checkpoint')
    return args


def _check_training(key, run):
    return cifar10_regression.compare_run(key, run, cifar10_regression.measure_run(run))


def _check_evaluation(golden, checkpoint):
    return cifar10_regression.compare_evaluation(
        golden, cifar10_regression.measure_evaluation(golden, checkpoint))


def main(argv):
    args = parse_args(argv)
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
    return 0 if regression.check_runs(checks) else cli.EXIT_ERROR


if __name__ == '__main__':
    cli.run(main)
