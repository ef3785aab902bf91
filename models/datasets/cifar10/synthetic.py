"""A generated data set in CIFAR-10's binary format, for machines without the real one.

Each class has a fixed smooth colour pattern (a random 6x6x3 grid, bilinearly upsampled to
32x32); an image is its class's faint pattern plus a random shift of brightness and strong
per-pixel noise, in uint8. The patterns survive the tutorial's crops, flips, brightness and
contrast changes, so the model learns them within a few hundred steps (about 40% precision
after 100 steps of one tower, over 90% after 300), while the noise keeps it from being solved
at once.

The set is written in the layout of `cifar-10-batches-bin` (same file names, same 3073-byte
records, `batches.meta.txt`) under `<data_dir>/cifar-10-batches-generated`, beside where the
real set would be, so that a real CIFAR-10 put into `data_dir` later takes precedence. It is
a function of the seed and the records per file alone: every process that generates it gets the
same bytes.
"""
import os

import numpy as np

from models.datasets.cifar10 import DEFAULT_DATA_DIR, RECORDS_PER_FILE, SEED
from models.datasets.cifar10 import reader as cifar10_input
from towers import datasets
from towers.files import write_directory_atomically

GENERATED_DIR = 'cifar-10-batches-generated'

_GRID = 6
_PATTERN_AMPLITUDE = 15.0
_BRIGHTNESS_STDDEV = 20.0
_NOISE_STDDEV = 70.0


def _upsample_matrix(size, grid):
    """[size, grid] weights of bilinear interpolation from `grid` points to `size` pixels."""
    position = np.linspace(0, grid - 1, size)
    lower = np.minimum(np.floor(position).astype(int), grid - 2)
    frac = position - lower
    weights = np.zeros([size, grid])
    weights[np.arange(size), lower] = 1 - frac
    weights[np.arange(size), lower + 1] = frac
    return weights


def class_patterns(seed=SEED):
    """The classes' patterns.

    Returns:
      [NUM_CLASSES, 32, 32, 3] float64: standard normal grid values, interpolated.
    """
    rng = np.random.RandomState(seed)
    grids = rng.standard_normal([cifar10_input.NUM_CLASSES, _GRID, _GRID, cifar10_input.DEPTH])
    rows = _upsample_matrix(cifar10_input.HEIGHT, _GRID)
    cols = _upsample_matrix(cifar10_input.WIDTH, _GRID)
    return np.einsum('ha,wb,nabc->nhwc', rows, cols, grids)


def make_examples(num, patterns, rng):
    """`num` labelled images drawn around `patterns`.

    Args:
      num: number of examples.
      patterns: [NUM_CLASSES, 32, 32, 3] from `class_patterns`.
      rng: a `np.random.RandomState`.

    Returns:
      images: [num, 32, 32, 3] uint8.
      labels: [num] uint8 in 0..9.
    """
    labels = rng.randint(0, cifar10_input.NUM_CLASSES, size=num).astype(np.uint8)
    brightness = rng.normal(0.0, _BRIGHTNESS_STDDEV, size=[num, 1, 1, 1])
    noise = rng.normal(0.0, _NOISE_STDDEV, size=[num] + list(patterns.shape[1:]))
    images = 128.0 + _PATTERN_AMPLITUDE * patterns[labels] + brightness + noise
    return np.clip(np.rint(images), 0, 255).astype(np.uint8), labels


def generate(batches_dir, records_per_file=RECORDS_PER_FILE, seed=SEED):
    """Writes the generated set: five training files and a test file of `records_per_file`.

    The files appear at once (written under a temporary name, then renamed), so that a second
    process never reads a half-written set; when another process made the same set first, its
    set is kept.

    Args:
      batches_dir: the directory to create; it must not exist yet.
      records_per_file: records in each of the six files.
      seed: the patterns' and examples' seed.
    """
    patterns = class_patterns(seed)
    rng = np.random.RandomState(seed + 1)
    parts = [make_examples(records_per_file, patterns, rng) for _ in range(6)]
    write_directory_atomically(
        batches_dir, lambda staging: cifar10_input.write_batches_dir(staging, parts[:5],
                                                                     parts[5]))


def locate_or_generate(data_dir=DEFAULT_DATA_DIR, download=True):
    """The CIFAR-10 directory to read under `data_dir`, generating one when there is none.

    In order: `data_dir` itself when it is in the layout of `cifar-10-batches-bin`;
    `data_dir/cifar-10-batches-bin`; `data_dir/cifar-10-binary.tar.gz`, extracted; a set
    generated earlier in `data_dir/cifar-10-batches-generated`; the real set downloaded (with
    `download`); and last a newly generated set. The choice is logged.

    Args:
      data_dir: the tutorial's `--data_dir`.
      download: whether to try downloading the real CIFAR-10.

    Returns:
      A directory in the layout of `cifar-10-batches-bin`.
    """
    if (download and FORMAT.find(data_dir) is None
            and FORMAT.find(os.path.join(data_dir, GENERATED_DIR)) is None):
        cifar10_input.maybe_download_and_extract(data_dir, download=True)
    return datasets.locate_or_generate(data_dir, FORMAT)


def _find(data_dir):
    if cifar10_input.has_data(data_dir):
        return data_dir
    return cifar10_input.maybe_download_and_extract(data_dir, download=False)


FORMAT = datasets.Format(
    'CIFAR-10', _find, generate, GENERATED_DIR,
    'cifar-10-batches-bin or cifar-10-binary.tar.gz',
    '%d training and %d test images of %d learnable classes'
    % (5 * RECORDS_PER_FILE, RECORDS_PER_FILE, cifar10_input.NUM_CLASSES),
    DEFAULT_DATA_DIR, own_folder=False)
