"""Writes a generated data set in KolektorSDD's layout (kos01..kos50/Part0..7.jpg + masks).

    python scripts/make_kolektor_data.py --data_dir /tmp/kolektor_synthetic

train_segdec.py and eval_segdec.py write the default one themselves when --data_dir is not
given; this script makes one elsewhere or with other settings.
"""
import os

from models.datasets import kolektor
from towers import TowersError, cli, flags


def parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n')[0])
    parser.add_argument('--data_dir', default=kolektor.DEFAULT_DATA_DIR,
                        help='The folder to create; it must not exist yet.')
    parser.add_argument('--num_items', type=flags.positive_int,
                        default=kolektor.NUM_ITEMS)
    parser.add_argument('--parts_per_item', type=flags.positive_int,
                        default=kolektor.PARTS_PER_ITEM)
    parser.add_argument('--image_height', type=flags.positive_int,
                        default=kolektor.IMAGE_HEIGHT)
    parser.add_argument('--image_width', type=flags.positive_int,
                        default=kolektor.IMAGE_WIDTH)
    parser.add_argument('--defect_fraction', type=flags.positive_float,
                        default=kolektor.DEFECT_FRACTION)
    parser.add_argument('--seed', type=int, default=0)
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.datasets.kolektor import synthetic as kolektor_synthetic

    if os.path.exists(args.data_dir):
        raise TowersError('--data_dir %s exists already; remove it or choose another folder'
                          % args.data_dir)
    if args.image_height < 64 or args.image_width < 64:
        raise TowersError('the generated images must be at least 64x64, got %dx%d'
                          % (args.image_height, args.image_width))
    if args.defect_fraction > 1:
        raise TowersError('--defect_fraction must be at most 1, got %g' % args.defect_fraction)
    defective = kolektor_synthetic.write_dataset(
        args.data_dir, args.num_items, args.parts_per_item, args.image_height,
        args.image_width, args.defect_fraction, args.seed)
    print('wrote %d images (%d with a defect) in %d folders to %s'
          % (args.num_items * args.parts_per_item, defective, args.num_items, args.data_dir))
    return 0


if __name__ == '__main__':
    cli.run(main)
