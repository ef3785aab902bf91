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

from models.datasets import kolektor
from models.datasets.segmentation_folder import reader as folder_reader
from models.side_by_side import resnet34
from models.side_by_side.data_flags import DATASETS

training_input = folder_reader.training_input
validation_input = folder_reader.validation_input


def load_flagged_split(args, subset):
    """(the data set's directory, the `SegmentationSet` of `subset`) that
    `data_flags.add_data_flags`' flags name."""
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

