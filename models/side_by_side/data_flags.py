"""The data flags of the segmentation scripts: --dataset, --data_dir, --image_size and
--test_fraction (`add_data_flags`). No TensorFlow: a script reads them before importing it;
`inputs.load_flagged_split(args, subset)` reads what they name.
"""
from models.datasets import kolektor, segmentation_folder
from towers import flags

# The data sets by --dataset's name.
DATASETS = {'folder': segmentation_folder, 'kolektor': kolektor}


def add_data_flags(parser, image_size_help):
    """Adds the data flags of the segmentation scripts: --dataset, --data_dir, --image_size and
    --test_fraction; `inputs.load_flagged_split(args, subset)` reads what they name."""
    parser.add_argument('--dataset', choices=sorted(DATASETS), default='folder',
                        help='folder: images/NAME.png|jpg with masks/NAME.png (a fixed '
                             '--test_fraction held out), or train/ and test/ folders of them; '
                             'kolektor: KolektorSDD (folders kos01..kos50).')
    parser.add_argument('--data_dir', type=flags.input_dir, default=None,
                        help='The data set; default: the one in %s (or %s for kolektor), '
                             'generated there in its format when missing.'
                             % (segmentation_folder.DEFAULT_DATA_DIR, kolektor.DEFAULT_DATA_DIR))
    parser.add_argument('--image_size', type=flags.positive_int, default=128,
                        help=image_size_help)
    parser.add_argument('--test_fraction', type=flags.fraction,
                        default=segmentation_folder.TEST_FRACTION,
                        help='Of a folder set that is one images/ folder, the fraction of the '
                             'pairs held out for testing, the same pairs in training and '
                             'evaluation (default %s).' % segmentation_folder.TEST_FRACTION)
