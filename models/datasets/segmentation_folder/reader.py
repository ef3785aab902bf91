"""Image/mask pairs in a plain folder layout, read for binary segmentation.

    <data_dir>/train/images/NAME.png (or .jpg, .jpeg)    <data_dir>/train/masks/NAME.png
    <data_dir>/test/images/...                           <data_dir>/test/masks/...

Every image has the mask of the same name (without extension) in `masks/`, of the same size;
a mask's non-zero pixels are the foreground. `load_split` resizes the pairs to the network's
square input.
"""
import collections
import os

import numpy as np
from PIL import Image

from towers.errors import TowersError

IMAGE_EXTENSIONS = ('.png', '.jpg', '.jpeg')
MASK_EXTENSION = '.png'
SUBSETS = ('train', 'test')

SegmentationSet = collections.namedtuple('SegmentationSet', ['images', 'masks', 'names'])
SegmentationSet.__doc__ = """Image/mask pairs at the network's input size.

Attributes:
  images: [n, S, S, 3] uint8, RGB.
  masks: [n, S, S] uint8 in {0, 1}.
  names: n strings, each image's file name without its extension.
"""


def _open(path, mode, what):
    try:
        with Image.open(path) as image:
            image.load()
            return image.convert(mode)
    except FileNotFoundError:
        raise TowersError('%s is missing: %s' % (what, path))
    except (OSError, ValueError, SyntaxError) as err:
        raise TowersError('cannot read %s %s: %s' % (what, path, err))


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
    image = _open(image_path, 'RGB', 'image')
    mask = _open(mask_path, 'L', 'the mask of %s' % os.path.basename(image_path))
    if mask.size != image.size:
        raise TowersError('mask %s is %dx%d but its image %s is %dx%d (width x height)'
                          % ((mask_path,) + mask.size + (image_path,) + image.size))
    size = (image_size, image_size)
    binary = Image.fromarray(np.where(np.asarray(mask) > 0, 255, 0).astype(np.uint8))
    resized_mask = np.asarray(binary.resize(size, Image.BOX)) >= 128
    return (np.asarray(image.resize(size, Image.BILINEAR), np.uint8),
            resized_mask.astype(np.uint8))


def load_split(data_dir, subset, image_size):
    """Reads every pair of `data_dir/<subset>`.

    Args:
      data_dir: the folder holding `train/` and `test/`.
      subset: 'train' or 'test'.
      image_size: the side of the square input.

    Returns:
      A `SegmentationSet`, by name.

    Raises:
      TowersError: the folder or an image's mask is missing, a file is unreadable, a mask's
        size differs from its image's.
    """
    if subset not in SUBSETS:
        raise TowersError('unknown subset %r; expected train or test' % subset)
    images_dir = os.path.join(data_dir, subset, 'images')
    masks_dir = os.path.join(data_dir, subset, 'masks')
    if not os.path.isdir(images_dir):
        raise TowersError('%s is not a directory; expected the layout %s/{train,test}/images/'
                          'NAME.png|jpg with masks/NAME.png' % (images_dir, data_dir))
    files = sorted(name for name in os.listdir(images_dir)
                   if os.path.splitext(name)[1].lower() in IMAGE_EXTENSIONS)
    if not files:
        raise TowersError('%s holds no images (.png, .jpg or .jpeg)' % images_dir)
    images, masks, names = [], [], []
    for file_name in files:
        name = os.path.splitext(file_name)[0]
        image, mask = read_pair(os.path.join(images_dir, file_name),
                                os.path.join(masks_dir, name + MASK_EXTENSION), image_size)
        images.append(image)
        masks.append(mask)
        names.append(name)
    return SegmentationSet(np.stack(images), np.stack(masks), names)
