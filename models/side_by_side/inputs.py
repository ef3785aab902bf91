"""The segmentation models' input: image/mask pairs from either data set, the training stream
with flips and the validation batches (`models.datasets.segmentation_folder`'s
`training_input` and `validation_input`).

    data_dir = locate_or_generate('folder', None)       # the generated set when none is given
    data = load_split('folder', data_dir, 'train', image_size=128)
    images, masks = training_input(data, global_batch=8)
    dataset = validation_input(load_split('folder', data_dir, 'test', 128), batch_size=8)

'folder' is the plain layout of `models.datasets.segmentation_folder` (one `images/` +
`masks/` folder with a held-out test fraction, or `train/` and `test/`); 'kolektor' is
KolektorSDD, read by SegDecNet's reader at full resolution (no dilation, one label per pixel),
its grayscale images repeated into the three channels the ResNet encoder takes.
"""
import numpy as np

from models.datasets import kolektor, segmentation_folder
from models.datasets.segmentation_folder import reader as folder_reader
from models.side_by_side import resnet34
from towers import flags

DATASETS = {'folder': segmentation_folder, 'kolektor': kolektor}
training_input = folder_reader.training_input
validation_input = folder_reader.validation_input


def add_data_flags(parser, image_size_help):
    """Adds the data flags of the segmentation scripts: --dataset, --data_dir, --image_size and
    --test_fraction; `load_flagged_split(args, subset)` reads what they name."""
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
                        default=folder_reader.TEST_FRACTION,
                        help='Of a folder set that is one images/ folder, the fraction of the '
                             'pairs held out for testing, the same pairs in training and '
                             'evaluation (default %s).' % folder_reader.TEST_FRACTION)


def load_flagged_split(args, subset):
    """(the data set's directory, the `SegmentationSet` of `subset`) that `add_data_flags`'
    flags name."""
    data_dir = locate_or_generate(args.dataset, args.data_dir)
    return data_dir, load_split(args.dataset, data_dir, subset, args.image_size,
                                args.test_fraction)


def locate_or_generate(dataset, data_dir):
    """The set to read of `dataset` ('folder' or 'kolektor'): `data_dir` when given, else the
    set in its default place, real or generated there."""
    return DATASETS[dataset].locate_or_generate(data_dir)


def load_split(dataset, data_dir, subset, image_size, test_fraction=folder_reader.TEST_FRACTION):
    """Reads the image/mask pairs of one subset, resized to `image_size` x `image_size`.

    Args:
      dataset: 'folder' or 'kolektor'.
      data_dir: where the data set is.
      subset: 'train' or 'test' (KolektorSDD: its common split, the first 30 items train).
      image_size: the side of the square input, a multiple of 32.
      test_fraction: of a folder set that is one `images/` folder, the fraction held out for
        'test' (the same pairs in every run).

    Returns:
      A `segmentation_folder.reader.SegmentationSet`: images [n, S, S, 3] uint8, masks
      [n, S, S] uint8 in {0, 1}, names.

    Raises:
      TowersError: `image_size` is not a multiple of 32, or the data set's reader found bad
        input (naming the file).
    """
    resnet34.check_input_size(image_size, image_size, '--image_size')
    if dataset == 'folder':
        return folder_reader.load_split(data_dir, subset, image_size, test_fraction)
    data = kolektor.reader.load_split(data_dir, subset, image_size, image_size, dilate=1,
                                      stride=1)
    return folder_reader.SegmentationSet(np.repeat(data.images[..., None], 3, axis=3),
                                         data.pixel_labels, data.names)

