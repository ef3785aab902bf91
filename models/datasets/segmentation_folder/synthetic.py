"""A generated data set in the plain folder layout, for runs and tests without real data.

`train/` and `test/` each hold `images/NAME.png` (every fourth image `.jpg`) and
`masks/NAME.png` (0 or 255), 160x160 by default. An image is a lit, grainy surface with a few
blobs: the foreground blobs are warm-coloured and speckled, the distractors cool-coloured and
smooth, both of random size, shape and place, so a model must use colour and texture, not
brightness alone. About one image in eight has no foreground.
"""
import os

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from models.datasets.segmentation_folder import DEFAULT_DATA_DIR
from towers import datasets
from towers.files import write_directory_atomically

GENERATED_DIR = 'segmentation-generated'
NUM_TRAIN = 200
NUM_TEST = 40
IMAGE_SIZE = 160
EMPTY_FRACTION = 0.125
JPEG_QUALITY = 95


def _blob(rng, size):
    """A random blob's mask [size, size] bool: an ellipse or a polygon."""
    canvas = Image.new('L', (size, size))
    draw = ImageDraw.Draw(canvas)
    x, y = rng.uniform(0.1, 0.9, 2) * size
    radius = rng.uniform(0.06, 0.2) * size
    if rng.uniform() < 0.5:
        ratio = rng.uniform(0.5, 1.5)
        draw.ellipse([x - radius * ratio, y - radius / ratio, x + radius * ratio,
                      y + radius / ratio], fill=255)
    else:
        angles = np.sort(rng.uniform(0, 2 * np.pi, rng.randint(5, 9)))
        radii = radius * rng.uniform(0.6, 1.3, len(angles))
        draw.polygon([(float(x + r * np.cos(a)), float(y + r * np.sin(a)))
                      for a, r in zip(angles, radii)], fill=255)
    return np.asarray(canvas) > 0


def _colour(rng, warm):
    """An RGB colour in [0, 1]: warm (red-orange-yellow) or cool (green-blue)."""
    if warm:
        return np.array([rng.uniform(0.7, 1.0), rng.uniform(0.3, 0.8), rng.uniform(0.0, 0.3)])
    return np.array([rng.uniform(0.0, 0.3), rng.uniform(0.4, 0.9), rng.uniform(0.5, 1.0)])


def make_pair(rng, size, with_foreground):
    """One image [size, size, 3] uint8 and its mask [size, size] uint8 (0 or 255)."""
    coarse = rng.uniform(0.25, 0.6, [4, 4, 3])
    lighting = np.stack([np.asarray(Image.fromarray((coarse[..., c] * 255).astype(np.uint8))
                                    .resize((size, size), Image.BICUBIC), np.float32) / 255.0
                         for c in range(3)], axis=-1)
    image = lighting + 0.04 * rng.standard_normal([size, size, 3])
    mask = np.zeros([size, size], bool)
    kinds = [False] * rng.randint(1, 4)
    if with_foreground:
        kinds += [True] * rng.randint(1, 4)
    for warm in rng.permutation(kinds):
        blob = _blob(rng, size)
        texture = (0.12 * rng.standard_normal([size, size, 1]) if warm
                   else np.zeros([size, size, 1]))
        image = np.where(blob[..., None], _colour(rng, warm) + texture, image)
        mask = np.where(blob, bool(warm), mask)
    smooth = Image.fromarray(np.clip(image * 255, 0, 255).astype(np.uint8))
    smooth = smooth.filter(ImageFilter.GaussianBlur(0.7))
    return np.asarray(smooth), mask.astype(np.uint8) * 255


def write_dataset(data_dir, num_train=NUM_TRAIN, num_test=NUM_TEST, size=IMAGE_SIZE,
                  seed=0):
    """Writes the generated set to `data_dir`, which must not exist yet, atomically.

    Args:
      data_dir: the folder to create; it will hold `train/` and `test/`.
      num_train, num_test: pairs per subset.
      size: side of the square images.
      seed: the same seed writes the same images.
    """
    rng = np.random.RandomState(seed)

    def write(staging):
        for subset, count in (('train', num_train), ('test', num_test)):
            for folder in ('images', 'masks'):
                os.makedirs(os.path.join(staging, subset, folder))
            for index in range(count):
                image, mask = make_pair(rng, size, rng.uniform() >= EMPTY_FRACTION)
                name = '%s_%04d' % (subset, index)
                extension = '.jpg' if index % 4 == 3 else '.png'
                Image.fromarray(image).save(
                    os.path.join(staging, subset, 'images', name + extension),
                    **({'quality': JPEG_QUALITY} if extension == '.jpg' else {}))
                Image.fromarray(mask).save(os.path.join(staging, subset, 'masks',
                                                        name + '.png'))

    write_directory_atomically(data_dir, write)


def locate_or_generate(data_dir=None):
    """The folder set to read: `data_dir` when given (the reader names what it lacks); else
    the set in `DEFAULT_DATA_DIR`, real or generated there (`towers.datasets`)."""
    return datasets.locate_or_generate(data_dir, FORMAT)


FORMAT = datasets.Format(
    'segmentation folder', datasets.folder_with(('images', 'train', 'test')), write_dataset, GENERATED_DIR,
    'images/NAME.png|jpg and masks/NAME.png (or train/ and test/ folders of them)',
    '%d training and %d test %dx%d image/mask pairs' % (NUM_TRAIN, NUM_TEST, IMAGE_SIZE,
                                                         IMAGE_SIZE),
    DEFAULT_DATA_DIR, own_folder=True)
