"""The segmentation models' input: image/mask pairs from either data set, and the training
stream with flips.

    data = load_split('folder', data_dir, 'train', image_size=128)
    images, masks = training_inputs(data, global_batch=8)

'folder' is the plain layout of `models.datasets.segmentation_folder`; 'kolektor' is
KolektorSDD, read by SegDecNet's reader at full resolution (no dilation, one label per pixel),
its grayscale images repeated into the three channels the ResNet encoder takes.
"""
import numpy as np

from models.datasets.kolektor import reader as kolektor_reader, synthetic as kolektor_synthetic
from models.datasets.segmentation_folder import reader as folder_reader
from models.datasets.segmentation_folder import synthetic as folder_synthetic
from models.segmentation import resnet34
from towers.compat import tf

DATASETS = ('folder', 'kolektor')


def default_data_dir(dataset):
    """The generated set of `dataset` ('folder' or 'kolektor'), written first if missing."""
    synthetic = folder_synthetic if dataset == 'folder' else kolektor_synthetic
    return synthetic.ensure_default_dataset()


def load_split(dataset, data_dir, subset, image_size):
    """Reads the image/mask pairs of one subset, resized to `image_size` x `image_size`.

    Args:
      dataset: 'folder' or 'kolektor'.
      data_dir: where the data set is.
      subset: 'train' or 'test' (KolektorSDD: its common split, the first 30 items train).
      image_size: the side of the square input, a multiple of 32.

    Returns:
      A `segmentation_folder.reader.SegmentationSet`: images [n, S, S, 3] uint8, masks
      [n, S, S] uint8 in {0, 1}, names.

    Raises:
      TowersError: `image_size` is not a multiple of 32, or the data set's reader found bad
        input (naming the file).
    """
    resnet34.check_input_size(image_size, image_size, '--image_size')
    if dataset == 'folder':
        return folder_reader.load_split(data_dir, subset, image_size)
    data = kolektor_reader.load_split(data_dir, subset, image_size, image_size, dilate=1,
                                      stride=1)
    return folder_reader.SegmentationSet(np.repeat(data.images[..., None], 3, axis=3),
                                         data.pixel_labels, data.names)


def training_inputs(data, global_batch, seed=0):
    """The training pairs in a new random order every pass, each flipped at random left-right
    and up-down (image and mask alike), as tensors.

    Args:
      data: a `SegmentationSet`.
      global_batch: pairs per step (all towers).
      seed: for the order and the flips.

    Returns:
      images: [global_batch, S, S, 3] float32 in [0, 1].
      masks: [global_batch, S, S, 1] float32 in {0, 1}.
    """
    size = data.images.shape[1]

    def examples():
        rng = np.random.RandomState(seed)
        while True:
            for index in rng.permutation(len(data.names)):
                image, mask = data.images[index], data.masks[index, :, :, None]
                for axis in (0, 1):
                    if rng.uniform() < 0.5:
                        image, mask = np.flip(image, axis), np.flip(mask, axis)
                yield image.astype(np.float32) / 255.0, mask.astype(np.float32)

    dataset = tf.data.Dataset.from_generator(examples, output_signature=(
        tf.TensorSpec([size, size, 3], tf.float32), tf.TensorSpec([size, size, 1], tf.float32)))
    dataset = dataset.batch(global_batch, drop_remainder=True).prefetch(2)
    return tf.data.make_one_shot_iterator(dataset).get_next()
