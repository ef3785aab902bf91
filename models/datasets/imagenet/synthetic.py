"""A generated data set in ImageNet's two formats, for machines without ImageNet.

Eight classes (`CLASSES`), each a texture (stripes either way, a checkerboard, diamonds, rings,
dots, a grid of lines, a plain smooth field) in a dark and a light shade of its own hue (45
degrees apart); each image has its own period, phase, slight rotation, shades and hue within 8
degrees of its class's, plus pixel noise, saved as a real JPEG of 80-112 pixels on its shorter
side. The reference's hue jitter (+-36 degrees) makes neighbouring classes' hues overlap, so
hue narrows a class down and the texture, which survives the flips, stretches, rescaling and
crops, tells it; a ResNet learns the set in a few hundred steps at 64x64 (see docs/workloads.md).

One directory holds the same images in both layouts:

    train-00000-of-00004 .. , validation-00000-of-00002 ..   TFRecord shards of the standard
                                                            conversion (labels 1..8)
    ILSVRC2012_img_train/<class>/<class>_<i>.JPEG            the JPEGs, and list files over
    ILSVRC2012_img_val/ILSVRC2012_val_<i>.JPEG               them as the reference reads them
    train_label.txt, validation_label.txt                   (labels 0..7)

It is a function of the seed and sizes alone, written atomically (see `generate`).
"""
import colorsys
import io
import os

import numpy as np
from PIL import Image

from models.datasets.imagenet import DEFAULT_DATA_DIR, sources
from towers import datasets
from towers.compat import tf
from towers.files import write_directory_atomically

GENERATED_DIR = 'imagenet-generated'
CLASSES = ('horizontal_stripes', 'vertical_stripes', 'checkerboard', 'diamonds', 'rings',
           'dots', 'grid', 'plain')
TRAIN_PER_CLASS = 160
VALIDATION_PER_CLASS = 40
SHARDS = {sources.TRAIN: 4, sources.VALIDATION: 2}
IMAGE_DIRS = {sources.TRAIN: 'ILSVRC2012_img_train', sources.VALIDATION: 'ILSVRC2012_img_val'}
LIST_FILES = {sources.TRAIN: 'train_label.txt', sources.VALIDATION: 'validation_label.txt'}
SEED = 0

_SHORTER_SIDE = (80, 112)
_ASPECT = (0.75, 1.33)
_PERIOD = (14.0, 22.0)
_MAX_ROTATION_DEGREES = 8.0
_HUE_SPREAD_DEGREES = 8.0
_DARK = (0.25, 0.55)
_LIGHT = (0.7, 1.0)
_SATURATION = (0.4, 1.0)
_NOISE_STDDEV = 12.0
_JPEG_QUALITY = 90


def _soft(x, sharpness=4.0):
    return 0.5 + 0.5 * np.tanh(sharpness * x)


def texture(class_index, height, width, rng):
    """The pattern of one image of a class.

    Args:
      class_index: 0..len(CLASSES)-1.
      height, width: pixels.
      rng: a `np.random.RandomState`.

    Returns:
      [height, width] float64 in [0, 1]: how far each pixel is from the first colour to the
      second.
    """
    period = rng.uniform(*_PERIOD)
    angle = np.radians(rng.uniform(-_MAX_ROTATION_DEGREES, _MAX_ROTATION_DEGREES))
    rows, cols = np.mgrid[0:height, 0:width].astype(np.float64)
    # Coordinates in periods, slightly rotated and shifted by a random phase.
    u = (np.cos(angle) * cols - np.sin(angle) * rows) / period + rng.uniform()
    v = (np.sin(angle) * cols + np.cos(angle) * rows) / period + rng.uniform()
    wave_u, wave_v = np.sin(2 * np.pi * u), np.sin(2 * np.pi * v)
    name = CLASSES[class_index]
    if name == 'horizontal_stripes':
        return _soft(wave_v)
    if name == 'vertical_stripes':
        return _soft(wave_u)
    if name == 'checkerboard':
        return _soft(wave_u * wave_v)
    if name == 'diamonds':
        return _soft(np.sin(np.pi * (u + v) * np.sqrt(2)) * np.sin(np.pi * (u - v) * np.sqrt(2)))
    if name == 'rings':
        centre_row, centre_col = rng.uniform(0.25, 0.75, size=2) * [height, width]
        radius = np.hypot(rows - centre_row, cols - centre_col) / period
        return _soft(np.sin(2 * np.pi * radius))
    if name == 'dots':
        return _soft(np.cos(2 * np.pi * u) + np.cos(2 * np.pi * v) - 1.0)
    if name == 'grid':
        return _soft(np.maximum(np.cos(2 * np.pi * u), np.cos(2 * np.pi * v)) - 0.8, 8.0)
    # 'plain': a smooth field without any period, bilinearly upsampled from a 3x3 grid.
    coarse = Image.fromarray(rng.uniform(size=[3, 3]).astype(np.float32), mode='F')
    return np.asarray(coarse.resize((width, height), Image.BILINEAR), np.float64)


def make_image(class_index, rng):
    """One image of a class: [h, w, 3] uint8, its size, shades and noise drawn from `rng`."""
    shorter = rng.randint(*_SHORTER_SIDE)
    longer = int(round(shorter * rng.uniform(*_ASPECT)))
    height, width = (shorter, longer) if rng.uniform() < 0.5 else (longer, shorter)
    hue = (class_index * 360.0 / len(CLASSES)
           + rng.uniform(-_HUE_SPREAD_DEGREES, _HUE_SPREAD_DEGREES)) % 360.0
    shades = [(hue / 360.0, rng.uniform(*_SATURATION), rng.uniform(*value))
              for value in (_DARK, _LIGHT)]
    colours = 255.0 * np.array([colorsys.hsv_to_rgb(*shade) for shade in shades])
    mix = texture(class_index, height, width, rng)[..., None]
    image = colours[0] + (colours[1] - colours[0]) * mix
    image += rng.normal(0.0, _NOISE_STDDEV, size=image.shape)
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


def encode_jpeg(image):
    """[h, w, 3] uint8 -> JPEG bytes."""
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format='JPEG', quality=_JPEG_QUALITY)
    return buffer.getvalue()


def make_example(encoded, label, synset, filename, height, width):
    """A `tf.train.Example` with the fields of the standard ImageNet conversion.

    Args:
      encoded: JPEG bytes.
      label: 1..1000.
      synset: the class's name (a WordNet id such as 'n01440764' in ImageNet).
      filename: the image's file name.
      height, width: the image's size.
    """
    def _bytes(value):
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=[value]))

    def _int(value):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=[value]))

    return tf.train.Example(features=tf.train.Features(feature={
        'image/height': _int(height), 'image/width': _int(width),
        'image/colorspace': _bytes(b'RGB'), 'image/channels': _int(3),
        'image/class/label': _int(label), 'image/class/synset': _bytes(synset.encode()),
        'image/class/text': _bytes(synset.replace('_', ' ').encode()),
        'image/format': _bytes(b'JPEG'), 'image/filename': _bytes(filename.encode()),
        'image/encoded': _bytes(encoded)}))


def write_records(path, records):
    """Writes `records` (serialized bytes) to the TFRecord file `path`."""
    with tf.io.TFRecordWriter(path) as writer:
        for record in records:
            writer.write(record)


def _write_split(directory, split, per_class, rng):
    """Writes one split's JPEGs, list file and shards into `directory`."""
    labels = rng.permutation(np.repeat(np.arange(len(CLASSES)), per_class))
    image_dir = os.path.join(directory, IMAGE_DIRS[split])
    lines, records = [], []
    for number, class_index in enumerate(labels, 1):
        synset = CLASSES[class_index]
        image = make_image(class_index, rng)
        encoded = encode_jpeg(image)
        if split == sources.TRAIN:
            relative = os.path.join(synset, '%s_%d.JPEG' % (synset, number))
        else:
            relative = 'ILSVRC2012_val_%08d.JPEG' % number
        os.makedirs(os.path.dirname(os.path.join(image_dir, relative)), exist_ok=True)
        with open(os.path.join(image_dir, relative), 'wb') as f:
            f.write(encoded)
        lines.append('%s %d\n' % (relative, class_index))
        records.append(make_example(encoded, class_index + 1, synset,
                                    os.path.basename(relative), *image.shape[:2])
                       .SerializeToString())
    with open(os.path.join(directory, LIST_FILES[split]), 'w') as f:
        f.writelines(lines)
    shards = SHARDS[split]
    for shard in range(shards):
        write_records(os.path.join(directory, sources.SHARD_FORMAT % (split, shard, shards)),
                      records[shard::shards])


def generate(directory, train_per_class=TRAIN_PER_CLASS,
             validation_per_class=VALIDATION_PER_CLASS, seed=SEED):
    """Writes the generated set into the new directory `directory`.

    The directory appears at once (it is filled under a temporary name, then renamed), so a
    second process never reads half a set; when another process made the same set first, its
    set is kept.

    Args:
      directory: the directory to create; it must not exist yet.
      train_per_class, validation_per_class: images of each class in each split.
      seed: of every random choice.
    """
    def write(staging):
        rng = np.random.RandomState(seed)
        _write_split(staging, sources.TRAIN, train_per_class, rng)
        _write_split(staging, sources.VALIDATION, validation_per_class, rng)
    write_directory_atomically(directory, write)


def locate_or_generate(data_dir=DEFAULT_DATA_DIR, split=sources.TRAIN):
    """The directory of TFRecord shards to read: `data_dir` when it holds shards of `split`,
    else the generated set in `data_dir/imagenet-generated`, generated there when missing.
    The choice is logged (`towers.datasets`)."""
    return datasets.locate_or_generate(data_dir, datasets.Format(
        'ImageNet', lambda directory: directory if sources.shard_paths(directory, split) else None,
        lambda directory: generate(directory, TRAIN_PER_CLASS, VALIDATION_PER_CLASS),
        GENERATED_DIR, 'the TFRecord shards of ImageNet (train-00000-of-01024, ...)',
        '%d training and %d validation images of %d classes'
        % (TRAIN_PER_CLASS * len(CLASSES), VALIDATION_PER_CLASS * len(CLASSES), len(CLASSES)),
        DEFAULT_DATA_DIR, own_folder=False))


def open_split(data_dir, split, list_file=None):
    """The source of `split` to read: with `list_file`, that list of the JPEGs under
    `data_dir`; else the TFRecord shards of `locate_or_generate(data_dir, split)`."""
    if not list_file:
        data_dir = locate_or_generate(data_dir, split)
    return sources.open_source(data_dir, split, list_file)
