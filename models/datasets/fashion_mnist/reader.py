"""Fashion-MNIST in its IDX files, as Zalando Research ships it (MNIST's format).

The files: `train-images-idx3-ubyte`, `train-labels-idx1-ubyte` (60000 examples) and
`t10k-images-idx3-ubyte`, `t10k-labels-idx1-ubyte` (10000), each gzip-compressed (`.gz`, as
downloaded) or not. An IDX file is big-endian: an image file starts with the magic number 2051,
the number of images, rows and columns (16 bytes), then the pixels as uint8, row by row; a label
file starts with the magic number 2049 and the number of labels (8 bytes), then one uint8 label
(0-9) per image.

`load_split` reads a split into numpy arrays after checking every header, size and label, so
that a bad file stops with one error naming it; `training_input` is the reference's training
input (pixels scaled to [0, 1], shape [B, 28, 28, 1], one-hot labels; shuffle through 5000,
repeat, batch, prefetch), read by `tf.data` from the same files; `validation_input` gives a
split once, in order, in the same form, for validation while training.
"""
import collections
import gzip
import os
import struct
import zlib

import numpy as np

from towers import datasets
from towers.compat import tf
from towers.errors import TowersError
from towers.training.validation import array_batches

IMAGE_MAGIC = 2051
LABEL_MAGIC = 2049
IMAGE_HEADER_BYTES = 16
LABEL_HEADER_BYTES = 8
HEIGHT = 28
WIDTH = 28
NUM_CLASSES = 10
CLASS_NAMES = ['T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt',
               'Sneaker', 'Bag', 'Ankle boot']
SPLITS = {'train': ('train-images-idx3-ubyte', 'train-labels-idx1-ubyte'),
          'test': ('t10k-images-idx3-ubyte', 't10k-labels-idx1-ubyte')}
GZIP_SUFFIX = '.gz'

# The reference's input: a shuffle buffer of 5000 examples.
SHUFFLE_BUFFER = 5000

Split = collections.namedtuple('Split', ['images', 'labels', 'image_file', 'label_file'])
Split.__doc__ = """One split of Fashion-MNIST in memory.

Attributes:
  images: [n, 28, 28] uint8.
  labels: [n] uint8 in 0..9.
  image_file, label_file: the files they were read from.
"""


def split_files(data_dir, split):
    """The image and label files of `split` in `data_dir`, each as shipped (`.gz`) or unpacked.

    Args:
      data_dir: a directory holding the IDX files.
      split: 'train' or 'test'.

    Returns:
      (image file, label file), or None for a file that is in neither form.
    """
    found = []
    for name in SPLITS[split]:
        paths = [os.path.join(data_dir, name + suffix) for suffix in ('', GZIP_SUFFIX)]
        found.append(next((path for path in paths if os.path.isfile(path)), None))
    return tuple(found)


def has_data(data_dir):
    """Whether `data_dir` holds all four files (in either form)."""
    return all(path is not None for split in SPLITS for path in split_files(data_dir, split))


def _read_bytes(path):
    """The file's contents, uncompressed when its name ends in `.gz`."""
    try:
        if path.endswith(GZIP_SUFFIX):
            with gzip.open(path, 'rb') as f:
                return f.read()
        with open(path, 'rb') as f:
            return f.read()
    except EOFError:
        raise TowersError('truncated gzip file %s: it ends before its compressed data does '
                          '(expected a whole IDX file compressed with gzip)' % path)
    except (gzip.BadGzipFile, zlib.error) as err:
        raise TowersError('%s is not a valid gzip file (%s); expected a gzip-compressed IDX '
                          'file, or the file unpacked without the .gz suffix' % (path, err))
    except OSError as err:
        raise TowersError('cannot read %s: %s' % (path, err.strerror or err))


def _parse(path, data, magic, header_bytes, kind):
    """Checks an IDX header and size; returns the header's dimensions and the body bytes."""
    # The magic number first: a label file given for an image file is shorter than an image
    # header, and the wrong magic number says what happened.
    found_magic = struct.unpack('>I', data[:4])[0] if len(data) >= 4 else None
    if found_magic is not None and found_magic != magic:
        raise TowersError('%s is not an IDX %s file: magic number %d, expected %d (images: '
                          '%d, labels: %d)' % (path, kind, found_magic, magic, IMAGE_MAGIC,
                                               LABEL_MAGIC))
    if len(data) < header_bytes:
        raise TowersError('truncated IDX %s file %s: %d bytes, shorter than its %d-byte header'
                          % (kind, path, len(data), header_bytes))
    dims = struct.unpack('>%dI' % (header_bytes // 4), data[:header_bytes])
    expected = header_bytes + int(np.prod(dims[1:]))
    if len(data) != expected:
        raise TowersError('%s IDX %s file %s: its header says %s, %d bytes with the header, '
                          'but the file has %d bytes'
                          % ('truncated' if len(data) < expected else 'oversized', kind, path,
                             ' x '.join(str(d) for d in dims[1:]), expected, len(data)))
    return dims[1:], data[header_bytes:]


def read_images(path):
    """Reads an IDX image file (magic 2051) of 28x28 images.

    Returns:
      [n, 28, 28] uint8.

    Raises:
      TowersError: naming `path`, when it cannot be read, is not an IDX image file, is
        truncated or longer than its header says, or its images are not 28x28.
    """
    (count, rows, cols), body = _parse(path, _read_bytes(path), IMAGE_MAGIC, IMAGE_HEADER_BYTES,
                                       'image')
    if (rows, cols) != (HEIGHT, WIDTH):
        raise TowersError('%s holds %dx%d images; expected Fashion-MNIST\'s %dx%d'
                          % (path, rows, cols, HEIGHT, WIDTH))
    return np.frombuffer(body, np.uint8).reshape(count, rows, cols)


def read_labels(path):
    """Reads an IDX label file (magic 2049) of labels 0..9.

    Returns:
      [n] uint8.

    Raises:
      TowersError: naming `path` (and the record, for a label out of range), when it cannot be
        read, is not an IDX label file, or is truncated or longer than its header says.
    """
    _, body = _parse(path, _read_bytes(path), LABEL_MAGIC, LABEL_HEADER_BYTES, 'label')
    labels = np.frombuffer(body, np.uint8)
    bad = np.flatnonzero(labels >= NUM_CLASSES)
    if bad.size:
        raise TowersError('%s: label %d of record %d is not a class 0..%d'
                          % (path, labels[bad[0]], bad[0], NUM_CLASSES - 1))
    return labels


def load_split(data_dir, split):
    """Reads and checks one split of the IDX files in `data_dir`.

    Args:
      data_dir: a directory holding the split's two files (`.gz` or not).
      split: 'train' or 'test'.

    Returns:
      A `Split`.

    Raises:
      TowersError: a file is missing or bad (see `read_images`, `read_labels`), or the image
        and label files hold different numbers of examples.
    """
    image_file, label_file = split_files(data_dir, split)
    for name, path in zip(SPLITS[split], (image_file, label_file)):
        if path is None:
            raise TowersError('no %s or %s%s in %s (expected the Fashion-MNIST IDX files)'
                              % (name, name, GZIP_SUFFIX, data_dir))
    images = read_images(image_file)
    labels = read_labels(label_file)
    if len(images) != len(labels):
        raise TowersError('%s holds %d images but %s holds %d labels; expected one label per '
                          'image' % (image_file, len(images), label_file, len(labels)))
    return Split(images, labels, image_file, label_file)


def evaluation_input(data_dir):
    """The test split of `data_dir`, read whole and checked (`load_split`)."""
    return load_split(data_dir, 'test')


def encode_images(images):
    """The IDX image file of `images` [n, rows, cols] uint8, as bytes."""
    images = np.asarray(images, np.uint8)
    return struct.pack('>4I', IMAGE_MAGIC, *images.shape) + images.tobytes()


def encode_labels(labels):
    """The IDX label file of `labels` [n] uint8, as bytes."""
    labels = np.asarray(labels, np.uint8)
    return struct.pack('>2I', LABEL_MAGIC, len(labels)) + labels.tobytes()


def write_split(data_dir, split, images, labels, compress=True):
    """Writes one split's two IDX files into `data_dir` (which must exist).

    Args:
      data_dir: the directory.
      split: 'train' or 'test'.
      images: [n, 28, 28] uint8.
      labels: [n] integers 0..9.
      compress: gzip the files and name them `.gz`, as Fashion-MNIST ships.
    """
    for name, data in zip(SPLITS[split], (encode_images(images), encode_labels(labels))):
        if compress:
            # mtime 0: the same examples give the same bytes.
            with gzip.GzipFile(os.path.join(data_dir, name + GZIP_SUFFIX), 'wb',
                               mtime=0) as f:
                f.write(data)
        else:
            with open(os.path.join(data_dir, name), 'wb') as f:
                f.write(data)


def _records(path, record_bytes, header_bytes):
    return tf.data.FixedLengthRecordDataset(
        path, record_bytes, header_bytes=header_bytes,
        compression_type='GZIP' if path.endswith(GZIP_SUFFIX) else '')


def scale_images(images):
    """Raw images -> the model's input.

    Args:
      images: [B, 28, 28] uint8.

    Returns:
      [B, 28, 28, 1] float32 in [0, 1].
    """
    return tf.expand_dims(tf.cast(images, tf.float32) / 255.0, -1)


def steps_for_epochs(num_examples, epochs, global_batch):
    """Steps of `global_batch` examples in `epochs` passes over `num_examples` (batches cross
    epoch boundaries, so only the last partial batch is dropped).

    Raises:
      TowersError: the passes do not fill one batch.
    """
    steps = epochs * num_examples // global_batch
    if not steps:
        raise TowersError('a global batch of %d examples is more than %d epoch(s) of the %d '
                          'training examples; use a smaller --batch_size or fewer --num_gpus'
                          % (global_batch, epochs, num_examples))
    return steps


def training_input(split, batch_size, shuffle_buffer=SHUFFLE_BUFFER, seed=None):
    """The reference's training input: shuffled, repeated, batched, prefetched.

    Read by `tf.data` from the files of `split` (checked by `load_split`), not held in the
    graph. Batches cross epoch boundaries, as the reference's shuffle-repeat-batch does:
    `epochs` passes take `steps_for_epochs(...)` steps.

    Args:
      split: the training `Split` from `load_split`.
      batch_size: examples per batch (the global batch of all towers).
      shuffle_buffer: examples in the shuffle buffer.
      seed: the shuffle's seed; by default derived from the graph's seed.

    Returns:
      images: [batch_size, 28, 28, 1] float32 in [0, 1].
      labels: [batch_size, 10] float32 one-hot.
    """
    examples = tf.data.Dataset.zip((
        _records(split.image_file, HEIGHT * WIDTH, IMAGE_HEADER_BYTES),
        _records(split.label_file, 1, LABEL_HEADER_BYTES)))
    dataset = examples.shuffle(shuffle_buffer, seed=seed).repeat()
    dataset = dataset.batch(batch_size, drop_remainder=True)

    def decode(images, labels):
        # Whole batches at once: a few ops per batch rather than per image; the static shapes
        # let the towers split the batch when the graph is built.
        images = tf.reshape(tf.io.decode_raw(images, tf.uint8), [batch_size, HEIGHT, WIDTH])
        labels = tf.reshape(tf.io.decode_raw(labels, tf.uint8), [batch_size])
        return scale_images(images), tf.one_hot(tf.cast(labels, tf.int32), NUM_CLASSES)

    dataset = dataset.map(decode, num_parallel_calls=tf.data.experimental.AUTOTUNE)
    return datasets.training_batches(dataset.prefetch(tf.data.experimental.AUTOTUNE))


def validation_input(split, batch_size):
    """The examples of `split` (from `load_split`) in order, once, for validation while
    training: a `tf.data.Dataset` of (images [b, 28, 28, 1] float32 in [0, 1], labels [b, 10]
    float32 one-hot), as `training_input` gives them."""
    return array_batches((split.images, split.labels), batch_size).map(
        lambda images, labels: (scale_images(images),
                                tf.one_hot(tf.cast(labels, tf.int32), NUM_CLASSES)))
