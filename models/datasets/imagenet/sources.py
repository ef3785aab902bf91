"""ImageNet (ILSVRC-2012) in its two usual on-disk forms: the sources `reader` reads.

TFRecord shards, as TensorFlow's and tf-slim's conversion scripts (`build_imagenet_data.py`,
`download_and_convert_imagenet.sh`) write them: `train-00000-of-01024` .. `train-01023-of-01024`
and `validation-00000-of-00128` .., each record a `tf.train.Example` with `image/encoded` (the
JPEG bytes) and `image/class/label` (1..1000; 0 is the background class of the Inception
checkpoints and never occurs), besides fields this reader does not need (`image/height`,
`image/class/synset`, ...). The model's class index is the label minus one.

List files, as the reference training (Apm5's ImageNet_Tensorflow2.0) reads ImageNet: one
`relative/path.JPEG label` per line, the path relative to a folder of JPEGs (e.g.
`n01440764/n01440764_10026.JPEG 0` under `ILSVRC2012_img_train`), labels 0..999.

Opening a source checks what can be checked without decoding: a shard that is not a TFRecord
file, or a list line that is malformed, has a label outside the classes or names a missing
image, stops with one error naming the file and the record or line. Each record the source
gives carries where it came from and what is wrong with it, for the pipeline's checks.
"""
import collections
import glob
import logging
import os
import re

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

_LIST_LINE = re.compile(r'^\s*(\S+)\s+(-?\d+)\s*$')


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
