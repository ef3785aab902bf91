"""Measures segmentation models trained side by side against one after another and at once.

    python scripts/benchmark_side_by_side.py --models unet,linknet,fpn --num_gpus 2 \
        --image_size 64 --json out/side_by_side.json

For the same steps on the same towers it times (see `towers.benchmarks.side_by_side`) one
process training the models side by side, one process per model one after another, and one
process per model all at once; it reports the medians over --repeats interleaved rounds of the
time of the timed steps, of each whole run, their ratios to side by side, and peak memory.
The input is the generated set (or --data_dir) in the plain folder layout.
"""
import argparse
import json
import os
import sys

import towers
from models.side_by_side import architectures
from towers import cli, flags


def parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n')[0])
    parser.add_argument('--models', type=architectures.parse_list,
                        default=['unet', 'linknet', 'fpn'],
                        help='Comma-separated models (default unet,linknet,fpn).')
    flags.add_device_flags(parser)
    parser.set_defaults(num_gpus=2)
    parser.add_argument('--data_dir', default=None,
                        help='Image/mask pairs in the folder layout; default: the generated '
                             'set.')
    parser.add_argument('--image_size', type=flags.positive_int, default=64)
    parser.add_argument('--batch_size', type=flags.positive_int, default=1,
                        help='Images per tower and step.')
    parser.add_argument('--warmup_steps', type=flags.non_negative_int, default=3)
    parser.add_argument('--steps', type=flags.positive_int, default=10,
                        help='Timed steps of every configuration.')
    parser.add_argument('--repeats', type=flags.positive_int, default=3,
                        help='Interleaved rounds; medians are reported.')
    parser.add_argument('--json', default=None, help='Write the results to this JSON file.')
    for name in ('child_barrier', 'child_count', 'child_index'):
        parser.add_argument('--' + name, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def child(args):
    """One measured process: prints `measure_child`'s figures as JSON."""
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.side_by_side import inputs, recipe
    from towers.benchmarks import side_by_side as bench

    setup = towers.configure_devices(args.num_gpus, intra_op_threads=args.intra_op_threads,
                                     inter_op_threads=args.inter_op_threads)
    data = inputs.load_split('folder', args.data_dir, 'train', args.image_size)
    global_batch = args.batch_size * args.num_gpus
    result = bench.measure_child(
        recipe.side_by_side(args.models), lambda: inputs.training_input(data, global_batch),
        setup, args.warmup_steps, args.steps,
        (args.child_barrier, int(args.child_count), int(args.child_index)))
    print(json.dumps(result))
    return 0


def main(argv):
    args = parse_args(argv)
    if args.child_barrier:
        return child(args)
    from models.side_by_side import inputs
    from towers import reports
    from towers.benchmarks import side_by_side as bench

    data_dir = inputs.locate_or_generate('folder', args.data_dir)

    def child_command(names, barrier, count, index):
        # The last of a repeated flag wins, so the child takes the parent's flags and these.
        return [sys.executable, os.path.abspath(__file__)] + list(argv) + [
            '--models', ','.join(names), '--data_dir', data_dir, '--child_barrier', barrier,
            '--child_count', str(count), '--child_index', str(index)]

    results = bench.compare(child_command, args.models, args.repeats)
    print(bench.format_table(results, args.models, args.steps))
    if args.json:
        reports.write_results(args.json, dict(results, models=args.models, steps=args.steps,
                                   image_size=args.image_size, num_gpus=args.num_gpus,
                                   batch_size=args.batch_size, cpu_count=os.cpu_count()))
        print('results: %s' % args.json)
    return 0


if __name__ == '__main__':
    cli.run(main)
