"""ImageNet (ILSVRC-2012) in its two usual on-disk forms, read with `tf.data`.

TFRecord shards, as TensorFlow's and tf-slim's conversion scripts (`build_imagenet_data.py`,
`download_and_convert_imagenet.sh`) write them: `train-00000-of-01024` .. `train-01023-of-01024`
and `validation-00000-of-00128` .., each record a `tf.train.Example` with `image/encoded` (the
JPEG bytes) and `image/class/label` (1..1000; 0 is the background class of the Inception
checkpoints and never occurs), besides fields this reader does not need (`image/height`,
`image/class/synset`, ...). The model's class index is the label minus one.

List files, as the reference training (Apm5's ImageNet_Tensorflow2.0) reads ImageNet: one
`relative/path.JPEG label` per line, the path relative to a folder of JPEGs (e.g.
`n01440764/n01440764_10026.JPEG 0` under `ILSVRC2012_img_train`), labels 0..999.

`training_input` gives the reference's augmentation; `evaluation_input` its evaluation: the centre
crop, and the ten crops of the classic 10-crop test. Both work at any `image_size`: the
reference's pixel sizes (shorter side 256-384 for 224 crops, 256 at test) scale with it.

Bad input stops with one error naming the file and the record: a shard that is not a TFRecord
file, or a list line that is malformed, has a label outside the classes or names a missing
image, as the source is opened; a record without `image/encoded`, with a label outside
1..1000 or with a JPEG that cannot be decoded, in the pipeline, where each record carries where
it came from; run the session inside `naming_bad_input(source)` to get those as one
`TowersError`.
"""
import collections
import glob
import logging
import math
import os
import re

from towers import datasets
from towers.compat import tf
from towers.errors import TowersError

log = logging.getLogger(__name__)

NUM_CLASSES = 1000
TRAIN = 'train'
VALIDATION = 'validation'
SPLITS = (TRAIN, VALIDATION)
SHARD_FORMAT = '%s-%05d-of-%05d'
_SHARD_NAME = re.compile(r'^(%s)-(\d{5})-of-(\d{5})$' % '|'.join(SPLITS))
# ILSVRC-2012 as the standard conversion shards it: (shards, examples) per split. Counting the
# records of 140 GB of shards would take minutes, so a complete set of these is not counted.
STANDARD_SHARDS = {TRAIN: (1024, 1281167), VALIDATION: (128, 50000)}
# Serialized records held for shuffling: about 1 GB of ImageNet's JPEGs, as the TF1 ImageNet
# pipelines (tf_cnn_benchmarks, the official ResNet) held.
SHUFFLE_BUFFER = 10000

# The reference's pixel sizes, for 224x224 crops; other crop sizes scale them.
REFERENCE_CROP = 224
TRAIN_SHORTER_SIDE = (256, 384)
EVAL_SHORTER_SIDE = 256
ASPECT_RATIO = (0.8, 1.25)
HUE_DELTA_DEGREES = 36.0
SATURATION_SCALE = (0.6, 1.4)
BRIGHTNESS_SCALE = (0.6, 1.4)
PCA_STDDEV = 0.1
# Per-channel statistics of ImageNet in RGB order on 0..255 (the reference lists the means in
# OpenCV's BGR order), and the eigen-decomposition of its pixel covariance for the lighting
# noise (AlexNet's; the rows of EIGENVECTORS are R, G, B).
MEAN_RGB = (123.68, 116.779, 103.939)
STDDEV_RGB = (58.393, 57.12, 57.375)
EIGENVALUES = (55.46, 4.794, 1.148)
EIGENVECTORS = ((-0.5675, 0.7192, 0.4009),
                (-0.5808, -0.0045, -0.8140),
                (-0.5836, -0.6948, 0.4203))

# The evaluation's crops of each image, in this order: centre first, then the four corners
# (top left, top right, bottom left, bottom right), then the same five of the mirrored image.
CENTRE_CROP = 0
NUM_TEN_CROPS = 10

_LIST_LINE = re.compile(r'^\s*(\S+)\s+(-?\d+)\s*$')


def scaled_size(pixels, image_size):
    """A pixel size of the reference's 224x224 recipe, scaled to crops of `image_size`."""
    return int(round(pixels * image_size / float(REFERENCE_CROP)))


def shard_paths(data_dir, split):
    """The TFRecord shards of `split` in `data_dir`, in order.

    Returns:
      The paths of `<split>-00000-of-<N>` .. `<split>-<N-1>-of-<N>`, or [] when there is none.

    Raises:
      TowersError: the shards do not all say the same N, or one of the N is missing.
    """
    names = sorted(os.path.basename(path)
                   for path in glob.glob(os.path.join(data_dir, '%s-*-of-*' % split)))
    names = [name for name in names if _SHARD_NAME.match(name)]
    if not names:
        return []
    totals = sorted({int(_SHARD_NAME.match(name).group(3)) for name in names})
    if len(totals) > 1:
        raise TowersError('the %s shards in %s disagree on their number (%s); expected one '
                          'set %s' % (split, data_dir, ', '.join('of-%05d' % t for t in totals),
                                      SHARD_FORMAT % (split, 0, totals[-1])))
    expected = [SHARD_FORMAT % (split, i, totals[0]) for i in range(totals[0])]
    missing = sorted(set(expected) - set(names))
    if missing:
        raise TowersError('%s shard %s is missing in %s (%d of %d %s shards are there)'
                          % (split, missing[0], data_dir, len(names), totals[0], split))
    return [os.path.join(data_dir, name) for name in expected]


def _count_records(path, limit=None):
    """Reads the records of the TFRecord file `path` (the first `limit` of them) and returns
    how many there are.

    Raises:
      TowersError: naming the file and the record that is not a valid TFRecord record.
    """
    count = 0
    try:
        for _ in tf.io.tf_record_iterator(path):
            count += 1
            if count == limit:
                break
    except tf.errors.DataLossError as err:
        raise TowersError('%s, record %d: not a TFRecord record (%s); expected a TFRecord '
                          'file of tf.train.Example records' % (path, count, err.message))
    except tf.errors.OpError as err:
        raise TowersError('cannot read %s: %s' % (path, err.message))
    return count


Records = collections.namedtuple('Records', ['encoded', 'label', 'problem', 'where'])
Records.__doc__ = """One record of a source, as its `records` dataset gives it (scalars).

Attributes:
  encoded: the image file's bytes (a JPEG).
  label: int32, the model's class index 0..NUM_CLASSES-1 when `problem` is empty.
  problem: '' or what is wrong with the record besides its image.
  where: the file and the record, for messages.
"""


class Shards:
    """One split of ImageNet as TFRecord shards.

    Attributes:
      files: the shard paths, in order.
      num_examples: records in the split.
      description: one line for logs.
    """

    def __init__(self, data_dir, split):
        """Finds the shards and checks that they are TFRecord files.

        Each shard's records are counted (and so read through), except for a complete
        standard ILSVRC-2012 split, whose size is known and whose shards are checked by their
        first record only.

        Args:
          data_dir: the folder of the shards.
          split: TRAIN or VALIDATION.

        Raises:
          TowersError: there are no shards of `split`, a shard is missing, or a shard is not a
            TFRecord file (naming it and the record).
        """
        self.files = shard_paths(data_dir, split)
        if not self.files:
            raise TowersError('no %s shards in %s: expected TFRecord files %s .. of the '
                              'standard ImageNet conversion' % (split, data_dir,
                                                                SHARD_FORMAT % (split, 0, 1024)))
        standard_shards, standard_examples = STANDARD_SHARDS[split]
        if len(self.files) == standard_shards:
            for path in self.files:
                _count_records(path, limit=1)
            self.num_examples = standard_examples
        else:
            self.num_examples = sum(_count_records(path) for path in self.files)
        self.description = ('%d %s examples in %d TFRecord shards in %s'
                            % (self.num_examples, split, len(self.files), data_dir))

    def check_files(self):
        """Reads every shard through.

        Raises:
          TowersError: naming the shard and the record that is not a TFRecord record.
        """
        for path in self.files:
            _count_records(path)

    def records(self, training, seed=None):
        """The split's records: `Records` of scalars.

        Args:
          training: shuffle the shards and the records, and repeat forever; else each record
            once, in the shards' order.
          seed: of the shuffles (by default derived from the graph's seed).
        """
        files = tf.data.Dataset.from_tensor_slices(self.files)
        if training:
            files = files.shuffle(len(self.files), seed=seed).repeat()

        def _read(path):
            return tf.data.TFRecordDataset(path).enumerate().map(
                lambda index, record: (record, path, index))

        records = files.interleave(_read, cycle_length=min(len(self.files), 16),
                                   num_parallel_calls=tf.data.experimental.AUTOTUNE,
                                   deterministic=not training)
        if training:
            records = records.shuffle(min(self.num_examples, SHUFFLE_BUFFER), seed=seed)
        return records.map(_parse_example, num_parallel_calls=tf.data.experimental.AUTOTUNE)


def _parse_example(record, path, index):
    features = tf.io.parse_single_example(record, {
        'image/encoded': tf.io.FixedLenFeature([], tf.string, default_value=''),
        'image/class/label': tf.io.FixedLenFeature([], tf.int64, default_value=-1),
    })
    encoded = features['image/encoded']
    label = features['image/class/label']
    problem = tf.where_v2(
        tf.equal(tf.strings.length(encoded), 0),
        'the record has no image/encoded',
        tf.where_v2((label < 1) | (label > NUM_CLASSES),
                    tf.strings.format('image/class/label is {}, expected 1..%d' % NUM_CLASSES,
                                      label),
                    ''))
    where = tf.strings.join([path, ', record ', tf.strings.as_string(index)])
    return Records(encoded, tf.cast(label - 1, tf.int32), problem, where)


class ListFile:
    """A split of ImageNet as a list file over a folder of JPEGs, as the reference reads it.

    Attributes:
      list_file: the list, one `relative/path.JPEG label` per line (blank lines are skipped).
      image_dir: the folder the paths are relative to.
      num_examples: images listed.
      description: one line for logs.
    """

    def __init__(self, list_file, image_dir):
        """Reads the list and checks every line.

        Raises:
          TowersError: naming the list file and the line, for a line that is not
            `path label`, a label outside 0..NUM_CLASSES-1, or an image that does not exist;
            or the list file cannot be read.
        """
        self.list_file = list_file
        self.image_dir = image_dir
        try:
            with open(list_file) as f:
                lines = f.read().splitlines()
        except OSError as err:
            raise TowersError('cannot read the list file %s: %s' % (list_file, err.strerror))
        self.num_examples = 0
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            self._check_line(line, number)
            self.num_examples += 1
        if not self.num_examples:
            raise TowersError('the list file %s lists no image; expected lines '
                              '`relative/path.JPEG label`' % list_file)
        self.description = ('%d images listed in %s, under %s'
                            % (self.num_examples, list_file, image_dir))

    def _check_line(self, line, number):
        match = _LIST_LINE.match(line)
        where = '%s, line %d' % (self.list_file, number)
        if not match:
            raise TowersError('%s: expected `relative/path.JPEG label`, got %r'
                              % (where, line))
        path, label = match.group(1), int(match.group(2))
        if not 0 <= label < NUM_CLASSES:
            raise TowersError('%s: label %d is outside the classes 0..%d of a list file'
                              % (where, label, NUM_CLASSES - 1))
        if not os.path.isfile(os.path.join(self.image_dir, path)):
            raise TowersError('%s: the image %s does not exist'
                              % (where, os.path.join(self.image_dir, path)))

    def check_files(self):
        """Nothing to read through: every listed image was found when the list was read."""

    def records(self, training, seed=None):
        """The listed images: `Records` of scalars.

        Args:
          training: shuffle the whole list and repeat forever; else each image once, in the
            list's order.
          seed: of the shuffle (by default derived from the graph's seed).
        """
        lines = tf.data.TextLineDataset(self.list_file).enumerate()
        lines = lines.filter(lambda index, line: tf.strings.length(tf.strings.strip(line)) > 0)
        if training:
            lines = lines.shuffle(self.num_examples, seed=seed).repeat()
        root = self.image_dir.rstrip('/') + '/'

        def _parse(index, line):
            path = tf.strings.join([root, tf.strings.regex_replace(line, _LIST_LINE.pattern,
                                                                   r'\1')])
            label = tf.strings.to_number(tf.strings.regex_replace(line, _LIST_LINE.pattern,
                                                                  r'\2'), tf.int32)
            where = tf.strings.join([self.list_file, ', line ', tf.strings.as_string(index + 1),
                                     ' (', path, ')'])
            return Records(tf.io.read_file(path), label, tf.constant(''), where)

        return lines.map(_parse, num_parallel_calls=tf.data.experimental.AUTOTUNE)


def open_source(data_dir, split, list_file=None):
    """The split to read: TFRecord shards in `data_dir`, or with `list_file` that list of the
    JPEGs under `data_dir`. Logs which."""
    source = ListFile(list_file, data_dir) if list_file else Shards(data_dir, split)
    log.info('reading %s', source.description)
    return source


def _decode(encoded):
    """JPEG (or PNG, as one of ImageNet's training "JPEG"s is) bytes -> [h, w, 3] uint8."""
    return tf.io.decode_image(encoded, channels=3, expand_animations=False)


def _resize_shorter_side(image, shorter_side, aspect_ratio=1.0):
    """Stretches the longer side by `aspect_ratio`, then scales the image so that its shorter
    side is `shorter_side`: [h, w, 3] -> [h', w', 3] float32, bilinear."""
    size = tf.cast(tf.shape(image)[:2], tf.float32)
    height_longer = size[0] >= size[1]
    size = size * tf.where_v2(height_longer, [aspect_ratio, 1.0], [1.0, aspect_ratio])
    size = size * tf.cast(shorter_side, tf.float32) / tf.reduce_min(size)
    return tf.image.resize(image, tf.cast(tf.round(size), tf.int32))


def _train_crop(image, image_size, key):
    """The reference's geometry for one image: [h, w, 3] uint8 -> [S, S, 3] float32.

    The longer side stretched by a factor drawn from 0.8-1.25, the shorter side scaled to an
    integer drawn from 256-384 (scaled with S), and a uniformly placed S x S crop; drawn
    statelessly from `key` ([2] int64).
    """
    keys = tf.random.experimental.stateless_split(key, 3)
    aspect_ratio = tf.random.stateless_uniform([], keys[0], *ASPECT_RATIO)
    low, high = (scaled_size(side, image_size) for side in TRAIN_SHORTER_SIDE)
    shorter_side = tf.random.stateless_uniform([], keys[1], low, high, dtype=tf.int32)
    resized = _resize_shorter_side(image, shorter_side, aspect_ratio)
    # The corner as `tf.image.random_crop` draws it.
    corner = tf.random.stateless_uniform([2], keys[2], 0, tf.int32.max, dtype=tf.int32) % (
        tf.shape(resized)[:2] - image_size + 1)
    return tf.slice(resized, tf.concat([corner, [0]], 0), [image_size, image_size, 3])


def _eval_crops(image, image_size, ten_crop):
    """[h, w, 3] uint8 -> [k, S, S, 3] float32: the shorter side scaled to 256 (scaled with S),
    then the centre crop (k = 1) or the ten crops in the order of `CENTRE_CROP`."""
    resized = _resize_shorter_side(image, scaled_size(EVAL_SHORTER_SIDE, image_size))
    height, width = tf.shape(resized)[0], tf.shape(resized)[1]
    top, left = (height - image_size) // 2, (width - image_size) // 2
    bottom, right = height - image_size, width - image_size
    corners = [(top, left)]
    if ten_crop:
        corners += [(0, 0), (0, right), (bottom, 0), (bottom, right)]
    views = [resized, tf.reverse(resized, [1])] if ten_crop else [resized]
    return tf.stack([view[y:y + image_size, x:x + image_size] for view in views
                     for y, x in corners])


def centre_crops(images, image_size):
    """The evaluation's centre crop of each image of a batch (what the exported model does to
    the images it is sent).

    Args:
      images: [b, h, w, 3] uint8 RGB, decoded, any one size.
      image_size: S.

    Returns:
      [b, S, S, 3] float32, normalised per channel: each image's shorter side scaled to 256
      (scaled with S), its centre S x S crop, as `evaluation_input` gives it.
    """
    crops = tf.map_fn(lambda image: _eval_crops(image, image_size, False)[CENTRE_CROP], images,
                      fn_output_signature=tf.float32)
    return normalize(crops)


def _colour_augment(images, key):
    """The reference's per-image flip and colour changes, drawn per image (statelessly, from
    `key`, [2] int64), applied per batch.

    A horizontal flip with probability 1/2; in HSV, a hue shift of up to +-36 degrees and
    saturation and value multiplied by 0.6-1.4 (capped at their maximum); PCA lighting noise
    (AlexNet's) with standard deviation 0.1, clipped to 0..255.

    Args:
      images: [n, S, S, 3] float32 RGB in 0..255.

    Returns:
      [n, S, S, 3] float32 RGB in 0..255.
    """
    num = tf.shape(images)[0]
    keys = tf.random.experimental.stateless_split(key, 5)
    flip = tf.random.stateless_uniform([num, 1, 1, 1], keys[0]) < 0.5
    images = tf.where_v2(flip, tf.reverse(images, [2]), images)
    hsv = tf.image.rgb_to_hsv(images / 255.0)
    hue_shift = tf.random.stateless_uniform([num, 1, 1], keys[1], -HUE_DELTA_DEGREES,
                                            HUE_DELTA_DEGREES) / 360.0
    saturation = tf.random.stateless_uniform([num, 1, 1], keys[2], *SATURATION_SCALE)
    value = tf.random.stateless_uniform([num, 1, 1], keys[3], *BRIGHTNESS_SCALE)
    hsv = tf.stack([tf.math.floormod(hsv[..., 0] + hue_shift, 1.0),
                    tf.minimum(hsv[..., 1] * saturation, 1.0),
                    tf.minimum(hsv[..., 2] * value, 1.0)], axis=-1)
    images = tf.image.hsv_to_rgb(hsv) * 255.0
    alpha = tf.random.stateless_normal([num, 3], keys[4], stddev=PCA_STDDEV)
    lighting = tf.matmul(alpha * tf.constant(EIGENVALUES), tf.constant(EIGENVECTORS),
                         transpose_b=True)
    return tf.clip_by_value(images + lighting[:, None, None, :], 0.0, 255.0)


def normalize(images):
    """Per-channel mean/stddev normalisation: [..., 3] RGB in 0..255 -> [..., 3] float32."""
    return (images - tf.constant(MEAN_RGB)) / tf.constant(STDDEV_RGB)


def _checked_images(records, ordered, image_fn, image_shape):
    """The records as (image_fn(decoded image, key), label), each record checked.

    A record whose `problem` is not empty, or whose image cannot be decoded, fails the
    pipeline with a message naming it: the decode runs in a one-record dataset that drops
    errors, followed by a marker, so a record whose decode failed reaches the check as the
    marker instead of failing without saying which record it was.

    Args:
      records: a dataset of (key, `Records`): the key ([2] int64) seeds the record's random
        choices (`towers.datasets.with_random_keys`).
      ordered: whether the images come in the records' order; else as they are decoded.
      image_fn: (image [h, w, 3] uint8, key) -> what to train or evaluate on, of `image_shape`.
      image_shape: that shape.
    """
    def _attempt(key, record):
        decoded = tf.data.Dataset.from_tensors(record.encoded).map(
            lambda encoded: (image_fn(_decode(encoded), key), True)).ignore_errors()
        failed = tf.data.Dataset.from_tensors((tf.zeros(image_shape), False))
        return decoded.concatenate(failed).take(1).map(
            lambda image, decoded_ok: (image, record, decoded_ok))

    def _check(image, record, decoded_ok):
        problem = tf.where_v2(
            tf.equal(record.problem, '') & tf.logical_not(decoded_ok),
            'image/encoded is not a JPEG that can be decoded', record.problem)
        check = datasets.check(tf.equal(problem, ''),
                               tf.strings.join([record.where, ': ', problem]))
        with tf.control_dependencies([check]):
            return tf.identity(image), record.label

    images = records.interleave(
        _attempt, cycle_length=tf.data.experimental.AUTOTUNE,
        num_parallel_calls=tf.data.experimental.AUTOTUNE, deterministic=ordered)
    return images.map(_check, num_parallel_calls=tf.data.experimental.AUTOTUNE)


def training_input(source, batch_size, image_size, seed=None):
    """Training batches with the reference's augmentation, shuffled, repeated forever.

    Args:
      source: a `Shards` or a `ListFile`.
      batch_size: images per batch (the global batch of the towers).
      image_size: S, the side of the square crops (224 in the reference).
      seed: of the shuffles and the augmentation (`towers.datasets.input_seed`: by default
        derived from the graph's seed). The images come as they are decoded, unless op
        determinism keeps their order.

    Returns:
      images: [batch_size, S, S, 3] float32, normalised per channel.
      labels: [batch_size] int32 class indices 0..NUM_CLASSES-1.
    """
    images = _checked_images(datasets.with_random_keys(source.records(True, seed), seed), False,
                             lambda image, key: _train_crop(image, image_size, key),
                             [image_size, image_size, 3])
    images = datasets.with_random_keys(images.batch(batch_size, drop_remainder=True), seed,
                                       stream=1)
    images = images.map(lambda key, batch: (normalize(_colour_augment(batch[0], key)), batch[1]),
                        num_parallel_calls=tf.data.experimental.AUTOTUNE)
    return datasets.training_batches(images.prefetch(tf.data.experimental.AUTOTUNE))


def validation_input(source, batch_size, image_size, ten_crop=False):
    """Evaluation batches as a `tf.data.Dataset`: every image of the source once, in order
    (what `evaluation_input` reads, and validation while training).

    Args:
      source: a `Shards` or a `ListFile`.
      batch_size: images per batch; the last batch holds the rest.
      image_size: S.
      ten_crop: ten crops of each image instead of the centre crop alone.

    Returns:
      A dataset of (crops [b, k, S, S, 3] float32, normalised per channel, k = NUM_TEN_CROPS
      with `ten_crop` (in the order of `CENTRE_CROP`), else 1; labels [b] int32 class indices).
    """
    crops = NUM_TEN_CROPS if ten_crop else 1
    # The crops draw nothing: their keys are left unused.
    images = _checked_images(datasets.with_random_keys(source.records(False)), True,
                             lambda image, unused_key: _eval_crops(image, image_size, ten_crop),
                             [crops, image_size, image_size, 3])
    images = images.batch(batch_size).map(lambda batch, labels: (normalize(batch), labels))
    return images.prefetch(tf.data.experimental.AUTOTUNE)


def evaluation_input(source, batch_size, image_size, ten_crop):
    """The batches of `validation_input` as tensors, for an evaluation.

    Returns:
      crops: [b, k, S, S, 3] float32 and labels: [b] int32, as `validation_input` gives them.
      num_batches: how many batches make the whole source.
    """
    dataset = validation_input(source, batch_size, image_size, ten_crop)
    batch_images, labels = tf.data.make_one_shot_iterator(dataset).get_next()
    return batch_images, labels, int(math.ceil(source.num_examples / float(batch_size)))


def naming_bad_input(source):
    """A context that turns the failure of a pipeline over `source` on a bad record into a
    `TowersError` naming the file and the record (`towers.datasets.naming_bad_input`): a record
    that failed a check of the pipeline, or (after reading every file through to find it) a
    shard that holds something that is not a TFRecord record."""
    def check_files():
        log.info('a shard is corrupt: reading %s through to find it', source.description)
        source.check_files()
    return datasets.naming_bad_input(check_files=check_files)
