"""Measures every way of training a registered model side by side, in images/sec.

    python scripts/benchmark.py --quick --json out/benchmark.json
    python scripts/benchmark.py --model segdec --num_gpus 8 --chart out/segdec_8.png

With `--batch_size` per tower and 1, 2, 4 ... `--num_gpus` devices: rows (a)-(e), the
training modes (f)-(l) and (m), the towers with op determinism, of `towers.benchmarks.suite`,
each device count's timed in turns. Each ratio is the median of the rounds' ratios with its
interquartile range; then the targets and the fastest mode. `--estimator`: instead, the model
through tf.estimator against towers.fit (`towers.benchmarks.estimator`), on one device and on
`--num_gpus` with MirroredStrategy. `--horovod`: instead, a TF1 Horovod program of the model on
`--num_gpus` ranks against N towers in one process and one device (`towers.benchmarks.horovod`).
`--tf1_program P`: a TF1 program on TF 1.15.5 against the runner (`towers.benchmarks.tf1`).
`--startup`: every script's `--help` against TensorFlow's import (`towers.benchmarks.startup`).
The input is the model's data set in `--data_dir`, or one generated in its format.
"""
import functools
import os

import towers
from models import registry
from towers import cli, flags
from towers.benchmarks import tf1 as tf1_benchmark
from towers.benchmarks.plan import FULL, QUICK, Plan


def _parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--model', choices=registry.names(), default='cifar10',
                        help='The model to train: %s.' % '; '.join(
                            '%s: %s, per-tower batch %d by default'
                            % (name, registry.about(name).description,
                               registry.about(name).batch_size)
                            for name in registry.names()))
    flags.add_device_flags(parser)
    parser.set_defaults(num_gpus=4)
    parser.add_argument('--ps_device', default='/cpu:0',
                        help='Where the variables live and the towers\' gradients are averaged '
                             '(e.g. /gpu:0 on a multi-GPU machine).')
    parser.add_argument('--batch_size', type=flags.positive_int,
                        help='Examples per tower (default: the model\'s, see --model); the '
                             'single device takes N times as many.')
    parser.add_argument('--data_dir',
                        help='Where the model\'s data set is (default: its usual place); a '
                             'generated set in its format is made there when it is not.')
    parser.add_boolean('quick', False, 'Fewer rounds, still in turns: %s instead of %s.'
                       % (QUICK, FULL))
    parser.add_argument('--warmup_steps', type=flags.non_negative_int,
                        help='Untimed steps of each configuration first (overrides --quick).')
    parser.add_argument('--steps', type=flags.positive_int,
                        help='Steps per configuration and round (overrides --quick).')
    parser.add_argument('--repeats', type=flags.positive_int,
                        help='Rounds, whose ratios\' median and quartiles are quoted '
                             '(overrides --quick).')
    parser.add_boolean('modes', True,
                       'Also measure the training modes (replicated, XLA, mixed precision) and '
                       'the towers with op determinism (--deterministic) at the most devices.')
    parser.add_boolean('estimator', False,
                       'Instead of the rows above: the model trained through tf.estimator (the '
                       'legacy runner\'s Estimator) against towers.fit, in turns, on one device '
                       'and on --num_gpus devices (MirroredStrategy against the towers).')
    parser.add_argument('--matmul_size', type=flags.positive_int, default=4096,
                        help='Side of the square float32 matrices of the matmul rate.')
    parser.add_boolean('startup', False,
                       'Instead of training: every script\'s --help time over `python -c '
                       '"import tensorflow"`\'s, each a fresh process, in turns over --repeats '
                       'rounds (default 5; towers.benchmarks.startup).')
    parser.add_boolean('horovod', False,
                       'Instead of the rows above: a TF1 Horovod program of the model on '
                       '--num_gpus ranks (towers-legacy --np) against the same program on '
                       '--num_gpus towers in one process and on one device, same global batch, '
                       'in turns (towers.benchmarks.horovod).')
    tf1_benchmark.add_flags(parser)
    parser.add_argument('--json', help='Write the results to this JSON file.')
    parser.add_argument('--chart', default='out/benchmark.png',
                        help='PNG chart of images/sec against devices.')
    return parser.parse_args(argv)


def _plan(args):
    plan = QUICK if args.quick else FULL
    return Plan(
        plan.warmup_steps if args.warmup_steps is None else args.warmup_steps,
        args.steps or plan.steps_per_repeat, args.repeats or plan.repeats)


def main(argv):
    args = _parse_args(argv)
    if args.startup:
        from towers.benchmarks import startup
        scripts = startup.scripts(os.path.dirname(os.path.abspath(__file__)))
        return _print_lines(startup.report(*startup.measure_help(scripts, args.repeats or 5)))
    if args.tf1_program:
        return _print_lines(tf1_benchmark.report_of_flags(args, _plan(args)))
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from towers.benchmarks import report, suite

    entry = registry.get(args.model)
    batch_size = args.batch_size or entry.batch_size
    configure = functools.partial(
        towers.configure_devices, log_device_placement=args.log_device_placement,
        ps_device=args.ps_device, intra_op_threads=args.intra_op_threads,
        inter_op_threads=args.inter_op_threads)
    if args.estimator:
        from towers.benchmarks import estimator
        return _print_lines(estimator.report(entry, batch_size, _plan(args), args.num_gpus))
    if args.horovod:
        from towers.benchmarks import horovod
        return _print_lines(horovod.report(entry, batch_size, args.num_gpus, _plan(args),
                                           args.matmul_size))
    results = suite.run(entry, batch_size, args.num_gpus, args.data_dir, _plan(args), configure,
                        args.matmul_size, suite.MODES if args.modes else (), args.modes)
    measured = (results.rows, results.matmul_rate, results.train_flops_per_example)

    print()
    print(report.format_table(*measured))
    print('(FLOPs: the convolutions and matmuls of the forward and backward passes; the forward '
          'pass alone is %.1f MFLOP)' % (results.forward_flops_per_example / 1e6))
    if entry.published:
        print('(%s)' % entry.published)
    print()
    print(report.format_targets(report.targets(*measured)))
    if args.modes:
        print()
        print(report.format_modes(results.rows))
        for label, reason in results.skipped:
            print('%s: not measured: %s' % (label, reason))
    if args.chart:
        report.save_chart(results.rows, args.chart, '%s training, %d images per tower\non %s'
                          % (entry.title, batch_size, results.device_kind))
        print('chart: %s' % args.chart)
    if args.json:
        report.save_results(args.json, *measured, report.headline_ratios(*measured))
        print('results: %s' % args.json)


def _print_lines(lines):
    """Prints a benchmark's report (`--startup`, `--estimator`, `--horovod`, `--tf1_program`)."""
    for line in lines:
        print(line, flush=True)
    return 0


if __name__ == '__main__':
    cli.run(main)
