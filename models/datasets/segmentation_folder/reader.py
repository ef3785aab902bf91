"""Image/mask pairs in a plain folder layout, read for binary segmentation.

Either one folder of pairs, of which a fixed fraction is held out for the test subset:

    <data_dir>/images/NAME.png (or .jpg, .jpeg)          <data_dir>/masks/NAME.png

or the two subsets in folders of their own:

    <data_dir>/train/images/NAME.png (or .jpg, .jpeg)    <data_dir>/train/masks/NAME.png
    <data_dir>/test/images/...                           <data_dir>/test/masks/...

Every image has the mask of the same name (without extension) in `masks/`, of the same size;
a mask's non-zero pixels are the foreground. `load_split` resizes the pairs to the network's
square input; `training_input` streams them with flips, `evaluation_input` is the test subset
and `validation_input` its batches for validation while training.
The held-out fraction is the same for every run with the same `test_fraction`: the names are
sorted and drawn with a fixed seed.
"""
import collections
import os

import numpy as np
from PIL import Image

from models.datasets.segmentation_folder import TEST_FRACTION
from towers import datasets
from towers.compat import tf
from towers.errors import TowersError
from towers.training.validation import array_batches

IMAGE_EXTENSIONS = ('.png', '.jpg', '.jpeg')
MASK_EXTENSION = '.png'
SUBSETS = ('train', 'test')
# The seed that draws the pairs held out for testing (`TEST_FRACTION` of one folder of pairs).
HOLD_OUT_SEED = 0

SegmentationSet = collections.namedtuple('SegmentationSet', ['images', 'masks', 'names'])
SegmentationSet.__doc__ = """Image/mask pairs at the network's input size.

Attributes:
  images: [n, S, S, 3] uint8, RGB.
  masks: [n, S, S] uint8 in {0, 1}.
  names: n strings, each image's file name without its extension.
"""


def read_pair(image_path, mask_path, image_size):
    """Reads one image and its mask, resized to `image_size` x `image_size`.

    Args:
      image_path, mask_path: the files.
      image_size: the side of the square input.

    Returns:
      image: [image_size, image_size, 3] uint8 (bilinear).
      mask: [image_size, image_size] uint8 in {0, 1}: 1 where most of the pixel's area in the
        original mask is foreground.

    Raises:
      TowersError: naming the file, when one is missing or unreadable or their sizes differ.
    """
    image = datasets.open_image(image_path, 'RGB', 'image')
    mask = datasets.open_image(mask_path, 'L', 'the mask of %s' % os.path.basename(image_path))
    if mask.size != image.size:
        raise TowersError('mask %s is %dx%d but its image %s is %dx%d (width x height)'
                          % ((mask_path,) + mask.size + (image_path,) + image.size))
    size = (image_size, image_size)
    binary = Image.fromarray(np.where(np.asarray(mask) > 0, 255, 0).astype(np.uint8))
    resized_mask = np.asarray(binary.resize(size, Image.BOX)) >= 128
    return (np.asarray(image.resize(size, Image.BILINEAR), np.uint8),
            resized_mask.astype(np.uint8))


def held_out(names, test_fraction):
    """The names of one folder's pairs held out for testing: `round(n * test_fraction)` of
    them (at least one, and at least one left for training), drawn with a fixed seed from the
    sorted names, so every run with the same fraction holds out the same pairs.

    Raises:
      TowersError: `test_fraction` is not in (0, 1), or there are fewer than two pairs.
    """
    if not 0 < test_fraction < 1:
        raise TowersError('--test_fraction %s: expected a fraction between 0 and 1'
                          % test_fraction)
    names = sorted(names)
    if len(names) < 2:
        raise TowersError('%d image/mask pair(s): holding out a test subset needs at least 2'
                          % len(names))
    count = min(max(int(round(len(names) * test_fraction)), 1), len(names) - 1)
    order = np.random.RandomState(HOLD_OUT_SEED).permutation(len(names))
    return {names[index] for index in order[:count]}


def _pair_files(data_dir, subset, test_fraction):
    """(images folder, masks folder, image file names) of `subset` in either layout."""
    one_folder = os.path.join(data_dir, 'images')
    if os.path.isdir(one_folder):
        files = _image_files(one_folder)
        test = held_out([os.path.splitext(name)[0] for name in files], test_fraction)
        chosen = [name for name in files
                  if (os.path.splitext(name)[0] in test) == (subset == 'test')]
        return one_folder, os.path.join(data_dir, 'masks'), chosen
    images_dir = os.path.join(data_dir, subset, 'images')
    if not os.path.isdir(images_dir):
        raise TowersError('%s is not a directory; expected the layout %s/images/NAME.png|jpg '
                          'with masks/NAME.png, or %s/{train,test}/images/... with masks/'
                          % (images_dir, data_dir, data_dir))
    return images_dir, os.path.join(data_dir, subset, 'masks'), _image_files(images_dir)


def _image_files(images_dir):
    files = sorted(name for name in os.listdir(images_dir)
                   if os.path.splitext(name)[1].lower() in IMAGE_EXTENSIONS)
    if not files:
        raise TowersError('%s holds no images (.png, .jpg or .jpeg)' % images_dir)
    return files


def load_split(data_dir, subset, image_size, test_fraction=TEST_FRACTION):
    """Reads every pair of one subset.

    Args:
      data_dir: the folder holding `images/` and `masks/`, or `train/` and `test/`.
      subset: 'train' or 'test'.
      image_size: the side of the square input.
      test_fraction: of a single `images/` folder, the fraction held out for 'test'.

    Returns:
      A `SegmentationSet`, by name.

    Raises:
      TowersError: the folder or an image's mask is missing, a file is unreadable, a mask's
        size differs from its image's.
    """
    if subset not in SUBSETS:
        raise TowersError('unknown subset %r; expected train or test' % subset)
    images_dir, masks_dir, files = _pair_files(data_dir, subset, test_fraction)
    images, masks, names = [], [], []
    for file_name in files:
        name = os.path.splitext(file_name)[0]
        image, mask = read_pair(os.path.join(images_dir, file_name),
                                os.path.join(masks_dir, name + MASK_EXTENSION), image_size)
        images.append(image)
        masks.append(mask)
        names.append(name)
    return SegmentationSet(np.stack(images), np.stack(masks), names)


def evaluation_input(data_dir, image_size, test_fraction=TEST_FRACTION):
    """The test subset, as `load_split` reads it."""
    return load_split(data_dir, 'test', image_size, test_fraction)


def training_input(data, global_batch, seed=0):
    """The training pairs in a new random order every pass, each flipped at random left-right
    and up-down (image and mask alike), as tensors; a checkpoint can hold their position
    (`towers.datasets.training_batches`).

    Args:
      data: a `SegmentationSet`.
      global_batch: pairs per step (all towers).
      seed: for the order and the flips; None derives it from the graph's seed.

    Returns:
      images: [global_batch, S, S, 3] float32 in [0, 1].
      masks: [global_batch, S, S, 1] float32 in {0, 1}.
    """
    def flipped(key, indices):
        images, masks = datasets.gather_rows([data.images, data.masks], indices)
        images, masks = tf.cast(images, tf.float32) / 255.0, tf.cast(masks[..., None], tf.float32)
        flips = tf.random.stateless_uniform([global_batch, 2, 1, 1, 1], key) < 0.5
        for axis in (0, 1):
            images, masks = (tf.where_v2(flips[:, axis], tf.reverse(pair, [axis + 1]), pair)
                             for pair in (images, masks))
        return images, masks

    order = tf.data.Dataset.range(len(data.names)).shuffle(
        len(data.names), seed=seed, reshuffle_each_iteration=True).repeat()
    dataset = datasets.with_random_keys(order.batch(global_batch, drop_remainder=True), seed)
    return datasets.training_batches(dataset.map(flipped).prefetch(2))


def validation_input(data, batch_size):
    """The pairs of `data` in order, once, as `training_input` gives them, for validation while
    training: a `tf.data.Dataset` of (images [b, S, S, 3] float32 in [0, 1], masks
    [b, S, S, 1] float32)."""
    return array_batches((data.images.astype(np.float32) / 255.0,
                          data.masks[..., None].astype(np.float32)), batch_size)
