"""Writes the generated CIFAR-10-format data set, for machines without the real CIFAR-10.

    python scripts/make_cifar10_data.py --data_dir /tmp/cifar10_data

The files (`data_batch_1..5.bin`, `test_batch.bin`, `batches.meta.txt`, 3073-byte records)
go to `<data_dir>/cifar-10-batches-generated`, where the training and evaluation scripts find
them when `<data_dir>` holds no real CIFAR-10. Those scripts generate the default set by
themselves; this script makes it ahead of time, or with other sizes or seeds.
"""
import logging
import os

import towers
from models.datasets import cifar10
from towers import cli, flags

log = logging.getLogger('make_cifar10_data')


def _parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--data_dir', default='/tmp/cifar10_data',
                        help='Path to the CIFAR-10 data directory.')
    parser.add_argument('--records_per_file', type=flags.positive_int,
                        default=cifar10.RECORDS_PER_FILE,
                        help='Images in each of the six files (the real CIFAR-10 has 10000).')
    parser.add_argument('--seed', type=int, default=cifar10.SEED,
                        help='Seed of the class patterns and the images.')
    return parser.parse_args(argv)


def main(argv):
    args = _parse_args(argv)
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.datasets.cifar10 import reader as cifar10_input, synthetic as cifar10_synthetic

    batches_dir = os.path.join(args.data_dir, cifar10_synthetic.GENERATED_DIR)
    if os.path.exists(batches_dir):
        raise towers.TowersError('%s exists already; delete it to generate it again'
                                 % batches_dir)
    os.makedirs(args.data_dir, exist_ok=True)
    cifar10_synthetic.generate(batches_dir, args.records_per_file, args.seed)
    num_records = cifar10_input.count_records(cifar10_input.data_files(batches_dir, False))
    log.info('wrote %d training and %d test records to %s', num_records,
             args.records_per_file, batches_dir)
    return 0


if __name__ == '__main__':
    cli.run(main)
