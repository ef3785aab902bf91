"""CIFAR-10 in its binary format, read with `tf.data` the way the tutorial's queues read it.

The format (`cifar-10-batches-bin/`): `data_batch_1.bin` .. `data_batch_5.bin` (training) and
`test_batch.bin`, each a run of 3073-byte records: one label byte (0-9), then the 32x32x3 image
depth-major (1024 red bytes, 1024 green, 1024 blue, each row by row); and `batches.meta.txt`,
the class names one per line.

`training_input` (the tutorial's `distorted_inputs`) is the training input: a random 24x24 crop, a random left-right flip,
random brightness and contrast, per-image standardization, shuffled through a buffer of 40% of
an epoch; every random choice follows its seed, and a checkpoint can hold its position.
`inputs` is the evaluation input: the central 24x24 crop, standardized, in file order.
Both decode and distort whole batches at once (a few ops per batch instead of a few per
image: a third of the CPU time), in parallel, and prefetch, so that the input keeps up with
the towers without taking their cores.
"""
import logging
import os
import shutil
import tarfile
import urllib.request

import numpy as np

from towers import datasets
from towers.compat import tf
from towers.errors import TowersError

log = logging.getLogger(__name__)

IMAGE_SIZE = 24
NUM_CLASSES = 10
NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN = 50000
NUM_EXAMPLES_PER_EPOCH_FOR_EVAL = 10000

HEIGHT = 32
WIDTH = 32
DEPTH = 3
LABEL_BYTES = 1
IMAGE_BYTES = HEIGHT * WIDTH * DEPTH
RECORD_BYTES = LABEL_BYTES + IMAGE_BYTES

BATCHES_DIR = 'cifar-10-batches-bin'
TRAIN_FILES = ['data_batch_%d.bin' % i for i in range(1, 6)]
TEST_FILES = ['test_batch.bin']
META_FILE = 'batches.meta.txt'
CLASS_NAMES = ['airplane', 'automobile', 'bird', 'cat', 'deer', 'dog', 'frog', 'horse', 'ship',
               'truck']

DATA_URL = 'https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz'
DOWNLOAD_TIMEOUT_SECS = 60

# The tutorial keeps this fraction of an epoch in the shuffle buffer for good mixing.
MIN_FRACTION_OF_EXAMPLES_IN_QUEUE = 0.4
# Records whose labels are checked at a time: 12 MB of the file.
_RECORDS_PER_READ = 4096


def data_files(batches_dir, eval_data):
    """The record files of one split.

    Args:
      batches_dir: a directory in the layout of `cifar-10-batches-bin`.
      eval_data: False for the training files, True for `test_batch.bin`.

    Returns:
      A list of file paths.
    """
    return [os.path.join(batches_dir, name) for name in (TEST_FILES if eval_data else TRAIN_FILES)]


def count_records(filenames):
    """Checks every file before the graph reads it, and returns how many records they hold.

    A file must hold whole records, each with a label byte of a class (0..9): a bad label would
    otherwise surface deep in a tower's loss, naming neither the file nor the record.

    Raises:
      TowersError: naming the file: it is missing, empty or not a multiple of 3073 bytes; or
        naming the file and record: its label byte is not a class.
    """
    total = 0
    for filename in filenames:
        if not tf.gfile.Exists(filename):
            raise TowersError('Failed to find file: %s (expected a CIFAR-10 binary batch file '
                              'of %d-byte records)' % (filename, RECORD_BYTES))
        size = tf.gfile.Stat(filename).length
        if size == 0 or size % RECORD_BYTES:
            raise TowersError(
                'truncated CIFAR-10 file %s: %d bytes is not a whole number of %d-byte records '
                '(1 label byte + %d image bytes)' % (filename, size, RECORD_BYTES, IMAGE_BYTES))
        _check_labels(filename)
        total += size // RECORD_BYTES
    return total


def _check_labels(filename):
    """Raises `TowersError` at the first record of `filename` whose label is not a class."""
    with tf.gfile.GFile(filename, 'rb') as f:
        first = 0
        while True:
            chunk = f.read(RECORD_BYTES * _RECORDS_PER_READ)
            if not chunk:
                return
            labels = np.frombuffer(chunk, np.uint8)[::RECORD_BYTES]
            bad = np.flatnonzero(labels >= NUM_CLASSES)
            if bad.size:
                record = first + int(bad[0])
                raise TowersError(
                    'bad CIFAR-10 record in %s: record %d (byte %d) has label %d, expected a '
                    'class 0..%d' % (filename, record, record * RECORD_BYTES,
                                     labels[bad[0]], NUM_CLASSES - 1))
            first += labels.size


def encode_records(images, labels):
    """The inverse of the reader: CIFAR-10 records of the given images and labels.

    Args:
      images: [n, 32, 32, 3] uint8, height-width-depth.
      labels: [n] integers in 0..9.

    Returns:
      bytes of n * 3073.
    """
    depth_major = np.transpose(np.asarray(images, np.uint8), [0, 3, 1, 2]).reshape(-1, IMAGE_BYTES)
    labels = np.asarray(labels, np.uint8).reshape(-1, LABEL_BYTES)
    return np.concatenate([labels, depth_major], axis=1).tobytes()


def write_batches_dir(batches_dir, train_parts, test_part):
    """Writes a data set in the layout of `cifar-10-batches-bin`.

    Args:
      batches_dir: created if missing.
      train_parts: five (images, labels) pairs for `data_batch_1..5.bin`.
      test_part: (images, labels) for `test_batch.bin`; images [n, 32, 32, 3] uint8.
    """
    tf.gfile.MakeDirs(batches_dir)
    files = data_files(batches_dir, False) + data_files(batches_dir, True)
    for filename, (images, labels) in zip(files, list(train_parts) + [test_part]):
        with tf.gfile.GFile(filename, 'wb') as f:
            f.write(encode_records(images, labels))
    with tf.gfile.GFile(os.path.join(batches_dir, META_FILE), 'w') as f:
        f.write('\n'.join(CLASS_NAMES) + '\n')


def has_data(batches_dir):
    """Whether `batches_dir` holds every file of the binary CIFAR-10 layout."""
    names = TRAIN_FILES + TEST_FILES
    return all(tf.gfile.Exists(os.path.join(batches_dir, name)) for name in names)


def maybe_download_and_extract(data_dir, download=True):
    """Gets the real CIFAR-10 into `data_dir/cifar-10-batches-bin`, as the tutorial does.

    Uses `data_dir/cifar-10-binary.tar.gz` when it is there, and downloads it otherwise.

    Args:
      data_dir: the tutorial's `--data_dir`.
      download: whether to download the archive when it is not in `data_dir`.

    Returns:
      The path of `cifar-10-batches-bin`, or None when there is no archive and it was not
      downloaded (the reason of a failed download is logged).

    Raises:
      TowersError: the archive cannot be extracted or lacks the CIFAR-10 files.
    """
    batches_dir = os.path.join(data_dir, BATCHES_DIR)
    if has_data(batches_dir):
        return batches_dir
    archive = os.path.join(data_dir, os.path.basename(DATA_URL))
    if not os.path.exists(archive):
        if not download:
            return None
        os.makedirs(data_dir, exist_ok=True)
        log.info('downloading %s to %s', DATA_URL, archive)
        try:
            with urllib.request.urlopen(DATA_URL, timeout=DOWNLOAD_TIMEOUT_SECS) as response, \
                    open(archive + '.part', 'wb') as f:
                shutil.copyfileobj(response, f)
        except OSError as err:
            log.info('could not download CIFAR-10 from %s: %s', DATA_URL, err)
            return None
        os.rename(archive + '.part', archive)
    try:
        with tarfile.open(archive, 'r:gz') as tar:
            tar.extractall(data_dir, filter='data')
    except (tarfile.TarError, OSError) as err:
        raise TowersError('cannot extract %s: %s (delete it to download it again)'
                          % (archive, err))
    if not has_data(batches_dir):
        raise TowersError('%s did not hold the files of %s' % (archive, BATCHES_DIR))
    return batches_dir


def _decode(records):
    """[n] records -> (images [n, 32, 32, 3] uint8, labels [n] int32)."""
    records = tf.io.decode_raw(records, tf.uint8)
    labels = tf.cast(records[:, 0], tf.int32)
    depth_major = tf.reshape(records[:, LABEL_BYTES:RECORD_BYTES],
                             [tf.shape(records)[0], DEPTH, HEIGHT, WIDTH])
    return tf.transpose(depth_major, [0, 2, 3, 1]), labels


def _distort(images, key):
    """[n, 32, 32, 3] uint8 -> [n, 24, 24, 3] float32: the tutorial's training augmentation.

    Drawn for each image, as the tutorial's `random_crop`, `random_flip_left_right`,
    `random_brightness(max_delta=63)` and `random_contrast(0.2, 1.8)` draw them: a crop at a
    uniform offset, a left-right flip with probability 1/2, a brightness shift in [-63, 63), a
    contrast factor in [0.2, 1.8) about each channel's mean; then per-image standardization.
    The draws are stateless, a function of `key` ([2] int64) alone.
    """
    num = tf.shape(images)[0]
    keys = tf.random.experimental.stateless_split(key, 4)
    offsets = tf.random.stateless_uniform([num, 2], keys[0], 0, HEIGHT - IMAGE_SIZE + 1,
                                          dtype=tf.int32)
    steps = tf.range(IMAGE_SIZE)
    flipped = tf.random.stateless_uniform([num, 1], keys[1]) < 0.5
    rows = offsets[:, :1] + steps
    # A flipped crop reads its columns right to left.
    cols = offsets[:, 1:] + tf.where_v2(flipped, IMAGE_SIZE - 1 - steps, steps)
    images = tf.gather(tf.gather(images, rows, axis=1, batch_dims=1), cols, axis=2,
                       batch_dims=1)
    images = tf.cast(images, tf.float32) + tf.random.stateless_uniform([num, 1, 1, 1], keys[2],
                                                                       -63.0, 63.0)
    channel_means = tf.reduce_mean(images, [1, 2], keepdims=True)
    contrast = tf.random.stateless_uniform([num, 1, 1, 1], keys[3], 0.2, 1.8)
    images = (images - channel_means) * contrast + channel_means
    return tf.image.per_image_standardization(images)


def central_crop(images):
    """[n, 32, 32, 3] uint8 -> [n, 24, 24, 3] float32: the tutorial's evaluation crop (and what
    the exported model does to the images it is sent)."""
    images = tf.image.resize_image_with_crop_or_pad(tf.cast(images, tf.float32),
                                                    IMAGE_SIZE, IMAGE_SIZE)
    return tf.image.per_image_standardization(images)


def _record_batches(filenames, batch_size, shuffle=False, seed=None, repeat=True):
    """Batches of raw records of `filenames`, repeated forever (with `repeat`; else one pass,
    the last batch holding the rest); with `shuffle`, shuffled with `seed`."""
    num_records = count_records(filenames)
    dataset = tf.data.FixedLengthRecordDataset(filenames, RECORD_BYTES)
    if repeat:
        dataset = dataset.repeat()
    if shuffle:
        min_queue_examples = int(num_records * MIN_FRACTION_OF_EXAMPLES_IN_QUEUE)
        log.info('shuffling through a buffer of %d CIFAR images (%.0f%% of the %d in %s)',
                 min_queue_examples, 100 * MIN_FRACTION_OF_EXAMPLES_IN_QUEUE, num_records,
                 os.path.dirname(filenames[0]))
        # Raw records are shuffled, not distorted images: the buffer fills in a moment and
        # every pass over a record draws new distortions.
        dataset = dataset.shuffle(min_queue_examples + 3 * batch_size, seed=seed)
    return dataset.batch(batch_size, drop_remainder=repeat)


def _images(records, preprocess, use_fp16):
    """[n] records -> (preprocess(images) as float32 or, with `use_fp16`, float16; labels)."""
    images, labels = _decode(records)
    return tf.cast(preprocess(images), tf.float16 if use_fp16 else tf.float32), labels


def _central_crops(filenames, batch_size, use_fp16, repeat=True):
    """The evaluation's dataset of (central crops, labels) of `filenames` in file order."""
    dataset = _record_batches(filenames, batch_size, repeat=repeat).map(
        lambda records: _images(records, central_crop, use_fp16),
        num_parallel_calls=tf.data.experimental.AUTOTUNE)
    return dataset.prefetch(tf.data.experimental.AUTOTUNE)


def training_input(data_dir, batch_size, use_fp16=False, seed=None):
    """Training batches with the tutorial's random distortions, shuffled, repeated forever.

    Args:
      data_dir: a directory in the layout of `cifar-10-batches-bin`.
      batch_size: examples per batch.
      use_fp16: whether the images come as float16.
      seed: of the shuffle and the distortions (`towers.datasets.input_seed`: by default
        derived from the graph's seed).

    Returns:
      images: [batch_size, 24, 24, 3] float32 (float16 with `use_fp16`), per-image standardized.
      labels: [batch_size] int32.

    Raises:
      TowersError: a training file is missing or truncated.
    """
    dataset = datasets.with_random_keys(
        _record_batches(data_files(data_dir, False), batch_size, shuffle=True, seed=seed), seed)
    dataset = dataset.map(
        lambda key, records: _images(records, lambda images: _distort(images, key), use_fp16),
        num_parallel_calls=tf.data.experimental.AUTOTUNE)
    return datasets.training_batches(dataset.prefetch(tf.data.experimental.AUTOTUNE))


def evaluation_input(eval_data, data_dir, batch_size, use_fp16=False):
    """Evaluation batches: central crops in file order, repeated forever.

    Args:
      eval_data: True for the test set, False for the training set.
      data_dir: a directory in the layout of `cifar-10-batches-bin`.
      batch_size: examples per batch.
      use_fp16: whether the images come as float16.

    Returns:
      images: [batch_size, 24, 24, 3] float32 (float16 with `use_fp16`), per-image standardized.
      labels: [batch_size] int32.

    Raises:
      TowersError: a file of the split is missing or truncated.
    """
    return tf.data.make_one_shot_iterator(
        _central_crops(data_files(data_dir, eval_data), batch_size, use_fp16)).get_next()


def validation_input(data_dir, batch_size, use_fp16=False):
    """The test set's central crops in file order, once, for validation while training: a
    `tf.data.Dataset` of (images [b, 24, 24, 3], labels [b] int32), as `evaluation_input`'s.

    Raises:
      TowersError: a file of the test set is missing or truncated.
    """
    return _central_crops(data_files(data_dir, True), batch_size, use_fp16, repeat=False)


# The tutorial's names.
distorted_inputs = training_input
inputs = evaluation_input
