"""A generated data set in Fashion-MNIST's IDX files, for machines without the real one.

Each of the 10 classes has a fixed silhouette: a smooth random pattern (a 6x6 grid, bilinearly
upsampled), brightened in the middle of the frame and dark at its edges, as Fashion-MNIST's
centred garments on a black background. An example is its class's silhouette blended with
another class's (up to 45% of the other, so that pairs of classes look alike as shirts and
T-shirts do), shifted by up to 2 pixels, scaled in brightness and covered in strong noise, in
uint8. The reference model learns it within a few dozen steps without solving it at once.

The set (6000 training and 1000 test examples by default) is written as the four gzip IDX
files of the real set, under `<data_dir>/fashion-mnist-generated`, beside where the real files
would be, so that real files put into `data_dir` later take precedence. It depends on the seed
and the sizes alone: every process that generates it gets the same bytes.
"""

import numpy as np
from PIL import Image

from models.datasets.fashion_mnist import DEFAULT_DATA_DIR, reader
from towers import datasets
from towers.files import write_directory_atomically

GENERATED_DIR = 'fashion-mnist-generated'
NUM_TRAIN = 6000
NUM_TEST = 1000
SEED = 0

_GRID = 6
_MAX_SHIFT = 2
_MAX_BLEND = 0.45
_NOISE_STDDEV = 60.0


def _smooth(grid, size):
    """[g, g] values -> [size, size], bilinearly interpolated."""
    picture = Image.fromarray(grid.astype(np.float32)).resize((size, size), Image.BILINEAR)
    return np.asarray(picture, np.float64)


def class_silhouettes(seed=SEED):
    """The classes' silhouettes.

    Returns:
      [10, 28, 28] float64 in [0, 255].
    """
    rng = np.random.RandomState(seed)
    patterns = np.stack([_smooth(grid, reader.HEIGHT)
                         for grid in rng.standard_normal([reader.NUM_CLASSES, _GRID, _GRID])])
    centre = (np.arange(reader.HEIGHT) - (reader.HEIGHT - 1) / 2.0) / (reader.HEIGHT / 2.0)
    # Bright in the middle, fading to black within a few pixels of the border.
    frame = np.clip(1.3 - np.maximum(np.abs(centre)[:, None], np.abs(centre)[None, :]) ** 4,
                    0, 1)
    return 255.0 * frame / (1.0 + np.exp(-2.0 * patterns))


def make_examples(num, silhouettes, rng):
    """`num` labelled images drawn around `silhouettes`.

    Args:
      num: number of examples.
      silhouettes: [10, 28, 28] from `class_silhouettes`.
      rng: a `np.random.RandomState`.

    Returns:
      images: [num, 28, 28] uint8.
      labels: [num] uint8 in 0..9.
    """
    labels = rng.randint(0, reader.NUM_CLASSES, size=num)
    others = (labels + rng.randint(1, reader.NUM_CLASSES, size=num)) % reader.NUM_CLASSES
    blend = rng.uniform(0, _MAX_BLEND, size=[num, 1, 1])
    images = (1 - blend) * silhouettes[labels] + blend * silhouettes[others]
    shifts = rng.randint(-_MAX_SHIFT, _MAX_SHIFT + 1, size=[num, 2])
    images = np.stack([np.roll(image, tuple(shift), axis=(0, 1))
                       for image, shift in zip(images, shifts)])
    images = images * rng.uniform(0.6, 1.0, size=[num, 1, 1])
    images += rng.normal(0.0, _NOISE_STDDEV, size=images.shape)
    return np.clip(np.rint(images), 0, 255).astype(np.uint8), labels.astype(np.uint8)


def generate(path, num_train=NUM_TRAIN, num_test=NUM_TEST, seed=SEED):
    """Writes the generated set's four gzip IDX files into the new directory `path`.

    The directory appears at once (written under a temporary name, then renamed); when another
    process made the same set first, its set is kept.

    Args:
      path: the directory to create; it must not exist yet.
      num_train, num_test: examples of each split.
      seed: the silhouettes' and examples' seed.
    """
    silhouettes = class_silhouettes(seed)
    rng = np.random.RandomState(seed + 1)
    splits = {'train': make_examples(num_train, silhouettes, rng),
              'test': make_examples(num_test, silhouettes, rng)}

    def write(staging):
        for split, (images, labels) in splits.items():
            reader.write_split(staging, split, images, labels)

    write_directory_atomically(path, write)


def locate_or_generate(data_dir=DEFAULT_DATA_DIR):
    """The directory of Fashion-MNIST IDX files to read under `data_dir`, generating a set when
    there is none.

    The real files in `data_dir` when any of them is there (a missing one is then an error of
    the reader, naming it); else a set generated earlier in `data_dir/fashion-mnist-generated`;
    else a newly generated set there. The choice is logged.

    Args:
      data_dir: the scripts' `--data_dir`.

    Returns:
      A directory holding the four IDX files.
    """
    return datasets.locate_or_generate(data_dir, FORMAT)


def _find(data_dir):
    if any(path is not None for split in reader.SPLITS
           for path in reader.split_files(data_dir, split)):
        return data_dir
    return None


FORMAT = datasets.Format(
    'Fashion-MNIST', _find, generate, GENERATED_DIR,
    'the four IDX files (%s, .gz or not)' % ', '.join(
        name for split in reader.SPLITS.values() for name in split),
    '%d training and %d test images of %d learnable classes'
    % (NUM_TRAIN, NUM_TEST, reader.NUM_CLASSES), DEFAULT_DATA_DIR, own_folder=False)
