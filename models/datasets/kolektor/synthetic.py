"""A generated data set in KolektorSDD's layout, for running SegDecNet without the download.

Same folders and file names as the real set (`kos01`..`kos50`, `Part0.jpg`..`Part7.jpg`,
`PartN_label.bmp`), grayscale, at 256x640 (the real 500x1250's aspect ratio, smaller to read
faster). Every image is a brushed-metal-like surface: vertical grain, horizontal seams, uneven
lighting and soft stains that are not defects. A minority (15%, near the real set's 52 of 399)
carry a thin crack: a dark, slightly bent line a few pixels wide, 40-160 pixels long, whose
pixels make up the mask.
"""
import os

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from models.datasets.kolektor import (DEFAULT_DATA_DIR, DEFECT_FRACTION, IMAGE_HEIGHT,
                                      IMAGE_WIDTH, NUM_ITEMS, PARTS_PER_ITEM, reader)
from towers import datasets
from towers.files import write_directory_atomically

GENERATED_DIR = 'kolektor-generated'
JPEG_QUALITY = 95


def _smooth_noise(rng, height, width, cells_y, cells_x):
    """Noise [height, width] in about [-1, 1] that varies over `cells_y` x `cells_x` cells."""
    coarse = rng.uniform(0, 255, [cells_y, cells_x]).astype(np.uint8)
    fine = Image.fromarray(coarse).resize((width, height), Image.BICUBIC)
    return np.asarray(fine, np.float32) / 127.5 - 1.0


def _surface(rng, height, width):
    """A defect-free surface [height, width] float32 in [0, 1]."""
    level = rng.uniform(0.35, 0.6)
    grain = 0.05 * _smooth_noise(rng, height, width, 6, width // 2)
    seams = 0.06 * _smooth_noise(rng, height, width, height // 24, 3)
    lighting = 0.1 * _smooth_noise(rng, height, width, 3, 2)
    surface = level + grain + seams + lighting + 0.03 * rng.standard_normal([height, width])
    stains = Image.new('L', (width, height))
    draw = ImageDraw.Draw(stains)
    for _ in range(rng.randint(0, 4)):
        x, y = rng.uniform(0, width), rng.uniform(0, height)
        radius = rng.uniform(8, 30)
        draw.ellipse([x - radius, y - radius / 2, x + radius, y + radius / 2],
                     fill=int(rng.uniform(40, 120)))
    stains = np.asarray(stains.filter(ImageFilter.GaussianBlur(8)), np.float32) / 255.0
    return surface + rng.choice([-1.0, 1.0]) * 0.15 * stains


def _crack(rng, height, width):
    """A crack's mask: [height, width] uint8 in {0, 255}."""
    mask = Image.new('L', (width, height))
    length = rng.uniform(40, 160)
    angle = rng.uniform(0, np.pi)
    x, y = rng.uniform(20, width - 20), rng.uniform(20, height - 20)
    points = [(x, y)]
    for _ in range(8):
        angle += rng.normal(0, 0.3)
        x = float(np.clip(x + length / 8 * np.cos(angle), 2, width - 3))
        y = float(np.clip(y + length / 8 * np.sin(angle), 2, height - 3))
        points.append((x, y))
    ImageDraw.Draw(mask).line(points, fill=255, width=int(rng.randint(2, 5)))
    return np.asarray(mask)


def _part(rng, defective, height, width):
    """One image and its mask, both [height, width] uint8."""
    image = _surface(rng, height, width)
    mask = np.zeros([height, width], np.uint8)
    if defective:
        mask = _crack(rng, height, width)
        soft = Image.fromarray(mask).filter(ImageFilter.GaussianBlur(0.8))
        image -= rng.uniform(0.2, 0.35) * np.asarray(soft, np.float32) / 255.0
    return np.clip(image * 255.0, 0, 255).astype(np.uint8), mask


def write_dataset(data_dir, num_items=NUM_ITEMS, parts_per_item=PARTS_PER_ITEM,
                  height=IMAGE_HEIGHT, width=IMAGE_WIDTH, defect_fraction=DEFECT_FRACTION,
                  seed=0):
    """Writes the generated data set to `data_dir`, which must not exist yet.

    The set is written to a temporary folder beside `data_dir` and renamed at the end, so an
    interrupted run leaves no half-written data set behind. When another process renames its
    copy into place first, this one's is dropped: the same seed wrote the same images.

    Args:
      data_dir: the folder to create; it will hold `kos01`, `kos02`, ...
      num_items, parts_per_item: folders and images per folder.
      height, width: image size.
      defect_fraction: the share of images with a crack, spread at random over the items.
      seed: the same seed writes the same images.

    Returns:
      The number of defective images written.
    """
    rng = np.random.RandomState(seed)
    total = num_items * parts_per_item
    defective = set(rng.choice(total, int(round(defect_fraction * total)), replace=False))

    def write(staging):
        for item in range(num_items):
            folder = os.path.join(staging, 'kos%02d' % (item + 1))
            os.mkdir(folder)
            for part in range(parts_per_item):
                image, mask = _part(rng, item * parts_per_item + part in defective, height,
                                    width)
                Image.fromarray(image).save(os.path.join(folder, 'Part%d.jpg' % part),
                                            quality=JPEG_QUALITY)
                Image.fromarray(mask).save(os.path.join(folder, 'Part%d_label.bmp' % part))

    write_directory_atomically(data_dir, write)
    return len(defective)


def locate_or_generate(data_dir=None):
    """KolektorSDD to read: `data_dir` when given (the reader names what it lacks); else
    the set in `DEFAULT_DATA_DIR`, real or generated there (`towers.datasets`)."""
    return datasets.locate_or_generate(data_dir, FORMAT)


def _find(data_dir):
    return data_dir if reader.item_folders(data_dir, required=False) else None


FORMAT = datasets.Format(
    'KolektorSDD', _find, write_dataset, GENERATED_DIR,
    'the item folders kos01..kos50', '%d items of %d grayscale %dx%d parts, %d%% with a crack'
    % (NUM_ITEMS, PARTS_PER_ITEM, IMAGE_WIDTH, IMAGE_HEIGHT, 100 * DEFECT_FRACTION),
    DEFAULT_DATA_DIR, own_folder=True)
