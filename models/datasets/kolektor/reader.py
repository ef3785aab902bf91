"""KolektorSDD as it ships, read for SegDecNet.

The data set is one folder per item (`kos01` .. `kos50`), each holding grayscale images
`Part0.jpg` .. `Part7.jpg` (about 500x1250) and masks `Part0_label.bmp` .. (non-zero = defect).
`load_split` reads the items of one side of a split, resizes every image to the network's input,
and turns each mask into pixel labels at 1/`stride` of that resolution (dilated first, as the
paper's `dilate=5`; SegDecNet's stride is 8, full-resolution segmentation's 1) and an image label
(any defect pixel). `training_input` streams the training
images to the towers with positive and negative images alternating, as the paper trains;
`validation_input` gives a split's images once, in order, for validation while training.
"""
import collections
import os
import re

import numpy as np
from PIL import Image, ImageFilter

from models.datasets.kolektor import DILATE, SPLITS, SUBSETS
from towers import datasets
from towers.compat import tf
from towers.errors import TowersError
from towers.training.validation import array_batches

PART_PATTERN = re.compile(r'^Part(\d+)\.jpg$')
ITEM_PATTERN = re.compile(r'^kos\d+$')
LAYOUT = 'KolektorSDD: folders kos01..kos50 with Part0.jpg, Part0_label.bmp, ...'
LABEL_SUFFIX = '_label.bmp'
# The common split puts the first 30 of the 50 sorted items into training.
COMMON_TRAIN_FRACTION = 0.6

KolektorSplit = collections.namedtuple(
    'KolektorSplit', ['images', 'pixel_labels', 'labels', 'names'])
KolektorSplit.__doc__ = """The images of one side of a split, at the network's input size.

Attributes:
  images: [n, H, W] uint8, grayscale.
  pixel_labels: [n, H/stride, W/stride] uint8 in {0, 1}.
  labels: [n] int32, 1 for an image with a defect.
  names: n strings '<item>/<part>', e.g. 'kos01/Part3'.
"""


def is_item(folder):
    """Whether `folder` is an item of KolektorSDD: it holds a part image (`Part0.jpg`, ...), or
    it bears KolektorSDD's item name (`kos01`, ...), which an item emptied by mistake keeps."""
    return bool(ITEM_PATTERN.match(os.path.basename(folder))) or any(
        PART_PATTERN.match(name) for name in os.listdir(folder))


def item_folders(data_dir, required=True):
    """The sorted names of the item folders under `data_dir` (`is_item`); its other folders
    (a generated set's, an archive tool's) are not the set's.

    Args:
      data_dir: where KolektorSDD is.
      required: whether to raise when there is none; else an empty list.

    Raises:
      TowersError: with `required`, `data_dir` is missing or holds no item folder.
    """
    if not os.path.isdir(data_dir):
        if not required:
            return []
        raise TowersError('--data_dir %s is not a directory; expected %s' % (data_dir, LAYOUT))
    folders = sorted(name for name in os.listdir(data_dir)
                     if os.path.isdir(os.path.join(data_dir, name)))
    items = [name for name in folders if is_item(os.path.join(data_dir, name))]
    if not items and required:
        raise TowersError('%s holds no item folders%s; expected %s' % (
            data_dir, ' (none of %s holds a Part*.jpg)' % ', '.join(folders)
            if folders else '', LAYOUT))
    return items


def split_items(items, split='common'):
    """Divides sorted item folders into training and test items.

    Args:
      items: item folder names, sorted.
      split: 'common' (the first 60% train: the common 30/20 split of KolektorSDD's 50 items)
        or 'fold1'..'fold3' (the paper's 3-fold cross validation by item: fold k tests on the
        k-th of three contiguous thirds and trains on the other two).

    Returns:
      (train_items, test_items).
    """
    if split == 'common':
        num_train = int(round(COMMON_TRAIN_FRACTION * len(items)))
        return list(items[:num_train]), list(items[num_train:])
    if split not in SPLITS:
        raise TowersError('unknown split %r; expected one of %s' % (split, ', '.join(SPLITS)))
    folds = np.array_split(np.arange(len(items)), 3)
    test = set(folds[int(split[-1]) - 1])
    return ([item for i, item in enumerate(items) if i not in test],
            [item for i, item in enumerate(items) if i in test])


def read_part(image_path, height, width, dilate=DILATE, stride=1):
    """Reads one image and its mask `<PartN>_label.bmp` at the network's input size.

    Args:
      image_path: path of 'PartN.jpg'.
      height, width: input size, multiples of `stride`.
      dilate: side of the square the mask is dilated with at input size (1: none).
      stride: how many input pixels, in each direction, one pixel label covers.

    Returns:
      image: [height, width] uint8.
      pixel_labels: [height/stride, width/stride] uint8, 1 where any pixel of the
        stride x stride cell is defect.
      label: 1 when the full-size mask has any defect pixel, else 0.

    Raises:
      TowersError: an unreadable image or mask, or a mask whose size differs from the image's.
    """
    label_path = image_path[:-len('.jpg')] + LABEL_SUFFIX
    image = datasets.open_image(image_path, 'L', 'image')
    mask = datasets.open_image(label_path, 'L', 'mask')
    if mask.size != image.size:
        raise TowersError('mask %s is %dx%d but its image %s is %dx%d (width x height)'
                          % ((label_path,) + mask.size + (image_path,) + image.size))
    binary = Image.fromarray(np.where(np.asarray(mask) > 0, 255, 0).astype(np.uint8))
    # A box filter keeps every defect pixel, however thin, when the mask shrinks.
    small = binary.resize((width, height), Image.BOX)
    if dilate > 1:
        small = small.filter(ImageFilter.MaxFilter(dilate))
    cells = (np.asarray(small) > 0).reshape(height // stride, stride, width // stride, stride)
    pixel_labels = cells.max(axis=(1, 3)).astype(np.uint8)
    resized = np.asarray(image.resize((width, height), Image.BILINEAR), np.uint8)
    return resized, pixel_labels, int(np.asarray(binary).any())


def _item_parts(data_dir, item):
    folder = os.path.join(data_dir, item)
    parts = sorted((int(m.group(1)), name) for name in os.listdir(folder)
                   for m in [PART_PATTERN.match(name)] if m)
    if not parts:
        raise TowersError('item folder %s holds no images; expected Part0.jpg, Part1.jpg, ... '
                          'each with its PartN_label.bmp' % folder)
    return [os.path.join(folder, name) for _, name in parts]


def load_split(data_dir, subset, height, width, split='common', dilate=DILATE, stride=1):
    """Reads one side of a split of KolektorSDD.

    Args:
      data_dir: the folder holding the item folders.
      subset: 'train' or 'test'.
      height, width: the network's input size, multiples of `stride`.
      split: see `split_items`.
      dilate, stride: see `read_part`.

    Returns:
      A `KolektorSplit`, items in sorted order and parts by number.
    """
    if subset not in SUBSETS:
        raise TowersError('unknown subset %r; expected train or test' % subset)
    if dilate < 1 or dilate % 2 == 0:
        raise TowersError('the dilation must be an odd number of pixels, got %d' % dilate)
    if height % stride or width % stride:
        raise TowersError('the input size %dx%d must be a multiple of %d in both directions'
                          % (height, width, stride))
    train_items, test_items = split_items(item_folders(data_dir), split)
    items = train_items if subset == 'train' else test_items
    if not items:
        raise TowersError('the %s split of %s leaves no %s items' % (split, data_dir, subset))
    images, pixel_labels, labels, names = [], [], [], []
    for item in items:
        for path in _item_parts(data_dir, item):
            image, pixels, label = read_part(path, height, width, dilate, stride)
            images.append(image)
            pixel_labels.append(pixels)
            labels.append(label)
            names.append('%s/%s' % (item, os.path.basename(path)[:-len('.jpg')]))
    return KolektorSplit(np.stack(images), np.stack(pixel_labels),
                         np.array(labels, np.int32), names)


def evaluation_input(data_dir, height, width, subset='test', split='common', dilate=DILATE,
                     stride=1):
    """The images of `subset` ('test' by default) of a split, read whole (`load_split`)."""
    return load_split(data_dir, subset, height, width, split, dilate, stride)


def alternating_order(labels, num_towers, batch_size, seed=0):
    """Image indices forever, one global batch after another: a dataset of int64 scalars.

    Each tower's stream alternates positive and negative images, as the paper trains with one
    image per step; neighbouring towers are out of phase, so with an even number of towers
    half of every step's images are defective and tower 0 (whose batch-norm statistics are
    kept) sees both kinds. Positives and negatives are each reshuffled at every pass, so the
    rarer positives repeat more often.

    Args:
      labels: [n] image labels.
      num_towers, batch_size: the global batch is num_towers * batch_size indices, tower by
        tower.
      seed: of the shuffles; None derives it from the graph's seed.

    Raises:
      TowersError: the images are all positive or all negative.
    """
    labels = np.asarray(labels)
    pools = [np.flatnonzero(labels == 1), np.flatnonzero(labels == 0)]
    if not all(len(pool) for pool in pools):
        raise TowersError('the training images must include both defective and defect-free '
                          'images to alternate them; got %d defective of %d'
                          % (len(pools[0]), len(labels)))
    # One seed of each pool's shuffle, so that the two do not draw alike.
    seeds = ([None, None] if seed is None
             else [int(s) for s in np.random.RandomState(seed).randint(2 ** 31, size=2)])
    pools = [tf.data.Dataset.from_tensor_slices(pool).shuffle(
        len(pool), seed=pool_seed, reshuffle_each_iteration=True).repeat()
        for pool, pool_seed in zip(pools, seeds)]
    global_batch = num_towers * batch_size

    def kind(index):  # the pool of the index-th image: 0 positive, 1 negative
        step, tower, position = (index // global_batch, index % global_batch // batch_size,
                                 index % batch_size)
        return (step * batch_size + position + tower) % 2

    kinds = tf.data.Dataset.counter().map(kind)
    return tf.data.Dataset.choose_from_datasets(pools, kinds)


def training_input(data, num_towers, batch_size, seed=0):
    """The global batches of `alternating_order` as tensors; a checkpoint can hold their
    position (`towers.datasets.training_batches`).

    Args:
      data: a `KolektorSplit`.
      num_towers, batch_size: global batch = num_towers * batch_size, tower i's shard
        contiguous.
      seed: for the order; None derives it from the graph's seed.

    Returns:
      images: [B, H, W, 1] float32 in [0, 1].
      pixel_labels: [B, h, w, 1] float32 in {0, 1}, at the split's pixel-label resolution.
      labels: [B] int32.
    """
    def examples(indices):
        images, pixel_labels, labels = datasets.gather_rows(
            [data.images, data.pixel_labels, data.labels], indices)
        return (tf.cast(images[..., None], tf.float32) / 255.0,
                tf.cast(pixel_labels[..., None], tf.float32), labels)

    dataset = alternating_order(data.labels, num_towers, batch_size, seed)
    dataset = dataset.batch(num_towers * batch_size, drop_remainder=True).map(examples)
    return datasets.training_batches(dataset.prefetch(2))


def validation_input(data, batch_size):
    """The images of `data` (a `KolektorSplit`) in order, once, for validation while training:
    a `tf.data.Dataset` of (images [b, H, W, 1] float32 in [0, 1], as `training_input`'s, and
    labels [b] int32)."""
    return array_batches((data.images[..., None].astype(np.float32) / 255.0, data.labels),
                         batch_size)
