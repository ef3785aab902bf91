"""A generated folder set in OCT2017's layout, for running without the real images.

Same layout and naming as OCT2017 (`train/CNV/CNV-<patient>-<n>.jpeg`, `test/...`), grayscale
JPEGs (which the reader decodes with 3 channels), 128x128. Each image is a stylised retinal OCT
B-scan: dark speckled background, a grey band of retina over a bright line (the retinal pigment
epithelium, RPE), a dip at the fovea, the band's tilt, height and thickness drawn at random. The
classes differ as the real ones do, in shapes a few to tens of pixels across:

    CNV     one broad dome lifting the RPE and the retina above it
    DME     a thicker retina with dark fluid-filled cysts inside
    DRUSEN  several small bumps in the RPE
    NORMAL  a smooth RPE under an even band

Speckle (multiplicative) and additive noise keep them from being told apart by one pixel.
"""
import os

import numpy as np
from PIL import Image

from models.datasets.image_folder import DEFAULT_DATA_DIR, reader
from towers import datasets
from towers.files import write_directory_atomically

GENERATED_DIR = 'oct2017-generated'
CLASSES = ('CNV', 'DME', 'DRUSEN', 'NORMAL')
IMAGE_SIZE = 128
TRAIN_PER_CLASS = 64
TEST_PER_CLASS = 24
JPEG_QUALITY = 90
SEED = 0


def _gaussian(x, center, width):
    return np.exp(-((x - center) / width) ** 2)


def b_scan(rng, kind, size=IMAGE_SIZE):
    """One image of class `kind`.

    Args:
      rng: a `np.random.RandomState`.
      kind: one of `CLASSES`.
      size: side of the square image.

    Returns:
      [size, size] uint8.
    """
    x = np.linspace(0.0, 1.0, size)[None, :]
    y = np.linspace(0.0, 1.0, size)[:, None]
    # Heights are fractions of the image; larger is lower in the picture.
    rpe = (rng.uniform(0.6, 0.75) + rng.uniform(-0.1, 0.1) * (x - 0.5)
           + 0.015 * np.sin(2 * np.pi * (x * rng.uniform(0.5, 1.5) + rng.uniform())))
    thickness = rng.uniform(0.2, 0.26)
    cysts = np.zeros([size, size])
    if kind == 'CNV':
        rpe = rpe - rng.uniform(0.14, 0.2) * _gaussian(x, rng.uniform(0.3, 0.7),
                                                         rng.uniform(0.1, 0.15))
    elif kind == 'DRUSEN':
        for center in rng.uniform(0.1, 0.9, rng.randint(3, 6)):
            rpe = rpe - rng.uniform(0.04, 0.07) * _gaussian(x, center, rng.uniform(0.025, 0.04))
    elif kind == 'DME':
        thickness += rng.uniform(0.1, 0.14)
    surface = rpe - thickness + rng.uniform(0.04, 0.08) * _gaussian(x, rng.uniform(0.4, 0.6),
                                                                  0.07)
    if kind == 'DME':
        for _ in range(rng.randint(2, 5)):
            cx = rng.uniform(0.2, 0.8)
            cy = rng.uniform(0.35, 0.65)
            depth = surface + cy * (rpe - surface)
            cysts += (((x - cx) / rng.uniform(0.05, 0.1)) ** 2
                      + ((y - depth) / rng.uniform(0.035, 0.06)) ** 2) < 1
    retina = (y > surface) & (y < rpe)
    image = (0.08 + 0.38 * retina * (1 - 0.8 * np.minimum(cysts, 1))
             + 0.5 * _gaussian(y, rpe, 0.012))
    image = image * rng.gamma(9.0, 1 / 9.0, [size, size]) + rng.normal(0, 0.03, [size, size])
    return np.clip(image * 255, 0, 255).astype(np.uint8)


def write_dataset(data_dir, train_per_class=TRAIN_PER_CLASS, test_per_class=TEST_PER_CLASS,
                  size=IMAGE_SIZE, seed=SEED):
    """Writes the generated set to `data_dir`, which must not exist yet.

    The set appears at once (written beside `data_dir` and renamed), so an interrupted run
    leaves nothing half-written; the same seed writes the same images.

    Args:
      data_dir: the root to create; it will hold `train/<class>/` and `test/<class>/`.
      train_per_class, test_per_class: images of each class in each split.
      size: side of the square images.
      seed: of the images.
    """
    rng = np.random.RandomState(seed)

    def write(staging):
        for split, count in zip(reader.SPLITS, (train_per_class, test_per_class)):
            for kind in CLASSES:
                folder = os.path.join(staging, split, kind)
                os.makedirs(folder)
                first_patient = rng.randint(1000000, 9000000)
                for index in range(count):
                    # OCT2017's names: class, patient id, scan of that patient.
                    name = '%s-%d-%d.jpeg' % (kind, first_patient + index // 2, index % 2 + 1)
                    Image.fromarray(b_scan(rng, kind, size)).save(
                        os.path.join(folder, name), quality=JPEG_QUALITY)

    write_directory_atomically(data_dir, write)


def locate_or_generate(data_dir=None):
    """The folder set to read: `data_dir` when given (the reader names what it lacks); else
    the set in `DEFAULT_DATA_DIR`, real or generated there (`towers.datasets`)."""
    return datasets.locate_or_generate(data_dir, FORMAT)


FORMAT = datasets.Format(
    'OCT2017', datasets.folder_with(reader.SPLITS), write_dataset, GENERATED_DIR,
    'train/<class>/*.jpeg and test/<class>/*.jpeg',
    '%d training and %d test 128x128 JPEGs of each of %s'
    % (TRAIN_PER_CLASS, TEST_PER_CLASS, ', '.join(CLASSES)),
    DEFAULT_DATA_DIR, own_folder=True)
