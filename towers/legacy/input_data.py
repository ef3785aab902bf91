"""TensorFlow 1.x's MNIST reader (`tensorflow.examples.tutorials.mnist.input_data`, also
`tensorflow.contrib.learn.python.learn.datasets.mnist`), reading local files only.

    from tensorflow.examples.tutorials.mnist import input_data
    mnist = input_data.read_data_sets('/tmp/data/', one_hot=True)
    images, labels = mnist.train.next_batch(128)     # [128, 784] float32 in [0, 1], [128, 10]

`read_data_sets` reads the four gzip IDX files of MNIST, or of Fashion-MNIST (the same format),
from `train_dir`. TF 1.x downloaded the files it did not find there; this never downloads
(tower machines often have no network): a missing file stops the script with one line naming
the four files and the directory. A file that is not gzip, not IDX or truncated stops it with
one line naming the file. Everything else is TF 1.x's: the first `validation_size` training
examples become `validation`, images are scaled to [0, 1] as float32 (or kept uint8),
`DataSet.next_batch` shuffles and counts epochs as TF 1.x did, and a `DataSet` reseeds NumPy's
global random generator when it is made (from `seed`, or the graph-level seed).
"""
import collections
import functools
import gzip
import os
import zlib

import numpy as np

from towers.compat import tf
from towers.legacy.modules import LegacyError

TRAIN_IMAGES = 'train-images-idx3-ubyte.gz'
TRAIN_LABELS = 'train-labels-idx1-ubyte.gz'
TEST_IMAGES = 't10k-images-idx3-ubyte.gz'
TEST_LABELS = 't10k-labels-idx1-ubyte.gz'
FILES = (TRAIN_IMAGES, TRAIN_LABELS, TEST_IMAGES, TEST_LABELS)
_IMAGES_MAGIC = 2051
_LABELS_MAGIC = 2049
FAKE_EXAMPLES = 10000

Datasets = collections.namedtuple('Datasets', ['train', 'validation', 'test'])


def _idx_body(f, magic, dimensions):
    """The header dimensions and the uint8 body of the gzip IDX file `f` (an open binary file
    with a `name`), checked against `magic` and the size the header gives."""
    name = getattr(f, 'name', 'the MNIST file')
    try:
        data = gzip.GzipFile(fileobj=f).read()
    except (OSError, EOFError, zlib.error) as err:
        raise LegacyError('%s is not a gzip-compressed IDX file (%s)' % (name, err)) from None
    header = 4 * (1 + dimensions)
    values = [int.from_bytes(data[i:i + 4], 'big')
              for i in range(0, min(header, len(data) - len(data) % 4), 4)]
    if len(values) < 1 + dimensions or values[0] != magic:
        raise LegacyError('%s is not an MNIST %s file: it does not start with the magic number '
                          '%d and %d dimensions' % (name, 'image' if magic == _IMAGES_MAGIC
                                                    else 'label', magic, dimensions))
    shape = values[1:]
    if len(data) - header != np.prod(shape):
        raise LegacyError('%s: its header says %s, %d bytes of data, but it holds %d'
                          % (name, 'x'.join(map(str, shape)), np.prod(shape),
                             len(data) - header))
    return shape, np.frombuffer(data, np.uint8, offset=header)


def extract_images(f):
    """The images of the gzip IDX image file `f` (an open binary file), uint8 [N, rows,
    cols, 1]."""
    print('Extracting', getattr(f, 'name', f))
    shape, body = _idx_body(f, _IMAGES_MAGIC, 3)
    return body.reshape(shape + [1])


def dense_to_one_hot(labels_dense, num_classes):
    """Class ids [N] -> one-hot rows [N, num_classes] (float64, as TF 1.x made them)."""
    one_hot = np.zeros((labels_dense.shape[0], num_classes))
    one_hot[np.arange(labels_dense.shape[0]), labels_dense.ravel()] = 1
    return one_hot


def extract_labels(f, one_hot=False, num_classes=10):
    """The labels of the gzip IDX label file `f`: uint8 [N], or one-hot [N, num_classes]."""
    print('Extracting', getattr(f, 'name', f))
    _, labels = _idx_body(f, _LABELS_MAGIC, 1)
    return dense_to_one_hot(labels, num_classes) if one_hot else labels


class DataSet:
    """Examples in memory, served in shuffled batches as TF 1.x's `DataSet` served them.

    Args:
      images: uint8 [N, rows, cols, 1]; with `reshape`, made [N, rows * cols].
      labels: [N] class ids or [N, classes] one-hot rows.
      fake_data: serve `FAKE_EXAMPLES` fake examples instead (`next_batch(n, fake_data=True)`).
      one_hot: with `fake_data`, whether fake labels are one-hot.
      dtype: tf.float32 (images scaled to [0, 1]) or tf.uint8 (kept).
      reshape: flatten each image.
      seed: reseeds NumPy's global generator, with the graph-level seed, as `tf.get_seed`
        combines them (None and no graph seed: a random reseeding).
    """

    def __init__(self, images, labels, fake_data=False, one_hot=False, dtype=tf.float32,
                 reshape=True, seed=None):
        graph_seed, op_seed = tf.get_seed(seed)
        np.random.seed(graph_seed if seed is None else op_seed)
        dtype = tf.as_dtype(dtype).base_dtype
        if dtype not in (tf.uint8, tf.float32):
            raise TypeError('Invalid image dtype %r, expected uint8 or float32' % dtype)
        if fake_data:
            self._num_examples = FAKE_EXAMPLES
            self.one_hot = one_hot
        else:
            if images.shape[0] != labels.shape[0]:
                raise LegacyError('DataSet: %d images but %d labels'
                                  % (images.shape[0], labels.shape[0]))
            self._num_examples = images.shape[0]
            if reshape:
                images = images.reshape(images.shape[0], -1)
            if dtype == tf.float32:
                images = images.astype(np.float32) * np.float32(1.0 / 255.0)
        self._images = images
        self._labels = labels
        self._epochs_completed = 0
        self._index_in_epoch = 0

    @property
    def images(self):
        """The examples' images, in the current epoch's order."""
        return self._images

    @property
    def labels(self):
        """The examples' labels, in the current epoch's order."""
        return self._labels

    @property
    def num_examples(self):
        """N."""
        return self._num_examples

    @property
    def epochs_completed(self):
        """How many times a batch has run past the last example."""
        return self._epochs_completed

    def _shuffle(self):
        order = np.arange(self._num_examples)
        np.random.shuffle(order)
        self._images = self._images[order]
        self._labels = self._labels[order]

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        """The next `batch_size` examples, as (images, labels).

        The order is shuffled before the first batch and whenever an epoch ends (`shuffle`).
        A batch that runs past the last example ends the epoch: it is the rest of the epoch
        followed by the first examples of the next one.
        """
        if fake_data:
            image = [1] * 784
            label = [1] + [0] * 9 if self.one_hot else 0
            return [image] * batch_size, [label] * batch_size
        start = self._index_in_epoch
        if shuffle and self._epochs_completed == 0 and start == 0:
            self._shuffle()
        if start + batch_size <= self._num_examples:
            self._index_in_epoch = start + batch_size
            return (self._images[start:self._index_in_epoch],
                    self._labels[start:self._index_in_epoch])
        self._epochs_completed += 1
        rest_images = self._images[start:]
        rest_labels = self._labels[start:]
        if shuffle:
            self._shuffle()
        self._index_in_epoch = batch_size - (self._num_examples - start)
        return (np.concatenate([rest_images, self._images[:self._index_in_epoch]]),
                np.concatenate([rest_labels, self._labels[:self._index_in_epoch]]))


def _extract(train_dir, name, extract):
    with tf.io.gfile.GFile(os.path.join(train_dir, name), 'rb') as f:
        return extract(f)


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=tf.float32, reshape=True,
                   validation_size=5000, seed=None, source_url=None):
    """The MNIST-format files of `train_dir` as `Datasets(train, validation, test)`.

    Args:
      train_dir: the directory holding `FILES`.
      fake_data: three fake `DataSet`s instead, reading nothing.
      one_hot, dtype, reshape, seed: as for `DataSet` (`one_hot`: labels [N, 10]).
      validation_size: the first training examples set apart as `validation`.
      source_url: accepted for TF 1.x's signature; nothing is downloaded.

    Raises:
      LegacyError: a file is missing, damaged or not IDX.
      ValueError: `validation_size` is not within 0..the training examples (TF 1.x's error).
    """
    if fake_data:
        return Datasets(*[DataSet([], [], fake_data=True, one_hot=one_hot, dtype=dtype,
                                  seed=seed) for _ in range(3)])
    missing = [name for name in FILES if not tf.io.gfile.exists(os.path.join(train_dir, name))]
    if missing:
        raise LegacyError(
            'read_data_sets: no %s in %s; it reads the four MNIST-format files %s from there '
            'and nothing is downloaded (TF 1.x downloaded them): put them there'
            % (', '.join(missing), os.path.abspath(train_dir), ', '.join(FILES)))
    labels = functools.partial(extract_labels, one_hot=one_hot)
    train_images, train_labels, test_images, test_labels = [
        _extract(train_dir, name, extract) for name, extract in zip(
            FILES, (extract_images, labels, extract_images, labels))]
    if not 0 <= validation_size <= len(train_images):
        raise ValueError('Validation size should be between 0 and {}. Received: {}.'
                         .format(len(train_images), validation_size))
    options = dict(dtype=dtype, reshape=reshape, seed=seed)
    return Datasets(
        train=DataSet(train_images[validation_size:], train_labels[validation_size:], **options),
        validation=DataSet(train_images[:validation_size], train_labels[:validation_size],
                           **options),
        test=DataSet(test_images, test_labels, **options))


def load_mnist(train_dir='MNIST-data'):
    """`read_data_sets(train_dir)`, as TF 1.x's `learn.datasets.mnist.load_mnist`."""
    return read_data_sets(train_dir)
