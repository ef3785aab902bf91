"""Trains a registered model on 1, 2, 4, ... towers for the same steps and charts the scaling.

    python scripts/scaling_report.py --model fashion_mnist --num_gpus 1,2,4 --out_dir out/scaling

For each tower count of `--num_gpus` it trains the model (its recipe and real input pipeline, a
generated set in its format where there is none in `--data_dir`) for `--steps` steps with
`--batch_size` images per tower, and writes to `--out_dir`: scaling.md (the table),
scaling.json (every run's step times and figures) and scaling.png (images/sec and total time
against towers, with the ideal linear scaling). Total time is the sum of the step times and
images/sec the global batch over the mean step time, as the Keras multi-GPU examples' TimeHistory
defined them; the median step time stands beside them.
"""
import functools
import os

import towers
from models import registry
from towers import cli, flags


def _parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--model', choices=registry.names(), default='fashion_mnist',
                        help='The registered model to train.')
    parser.add_argument('--num_gpus', type=flags.positive_int_list, default=[1, 2, 4],
                        help='Comma-separated numbers of towers (GPUs; virtual CPU devices '
                             'without one), e.g. 1,2,4.')
    parser.add_argument('--steps', type=flags.positive_int, default=50,
                        help='Training steps of every tower count.')
    parser.add_argument('--batch_size', type=flags.positive_int,
                        help='Images per tower (default: the model\'s).')
    parser.add_argument('--data_dir',
                        help='Where the model\'s data set is (default: its usual place); a '
                             'generated set in its format is made there when it is not.')
    parser.add_argument('--out_dir', default='out/scaling',
                        help='Where scaling.md, scaling.json and scaling.png go.')
    parser.add_argument('--ps_device', default='/cpu:0',
                        help='Where the variables live and the gradients are averaged.')
    return parser.parse_args(argv)


def main(argv):
    args = _parse_args(argv)
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from towers import reports
    from towers.benchmarks import measure as benchmark
    from towers.benchmarks import scaling

    entry = registry.get(args.model)
    batch_size = args.batch_size or entry.batch_size
    runs = scaling.measure(entry, args.num_gpus, batch_size, args.steps, args.data_dir,
                           functools.partial(towers.configure_devices,
                                             ps_device=args.ps_device))
    kind = benchmark.device_kind()
    table = scaling.format_markdown(runs)
    reports.write_text(os.path.join(args.out_dir, 'scaling.md'), table)
    reports.write_results(os.path.join(args.out_dir, 'scaling.json'),
                          scaling.results_json(runs, entry.name, batch_size, kind))
    scaling.save_chart(runs, os.path.join(args.out_dir, 'scaling.png'),
                       '%s: %d steps of %d images per tower on %s'
                       % (entry.title, args.steps, batch_size, kind))
    print(table)
    print('report: %s/scaling.{md,json,png}' % args.out_dir)
    return 0


if __name__ == '__main__':
    cli.run(main)
