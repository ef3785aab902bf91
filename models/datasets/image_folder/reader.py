"""A folder of JPEGs, one subfolder per class, read with `tf.data`.

The layout is the one of OCT2017 (Kermany et al., 2018) and of most image sets shared as
folders:

    ROOT/train/CNV/CNV-1016042-1.jpeg      ROOT/test/CNV/CNV-53018-1.jpeg
    ROOT/train/DME/...                     ROOT/test/DME/...

An image's label is the name of the folder it is in. The classes are the sorted names of the
split's folders, or the list given as `labels` (`--labels`), which fixes their order. Each image
is decoded with 3 channels (grayscale JPEGs too), scaled to float32 in [0, 1] and resized to
`image_size` x `image_size`; training batches are shuffled, repeated, decoded in parallel and
prefetched.

What the listing does with what it finds, and why:
  - a file whose extension is not .jpeg or .jpg (any case), or whose name starts with '.': left
    out, counted and logged: folders collect `.DS_Store`, `Thumbs.db` and notes;
  - a corrupt JPEG (empty, not starting with the JPEG start-of-image marker, or without the
    end-of-image marker near its end, as a truncated copy is): left out, counted and logged by
    name, so that a few damaged files in thousands do not stop a long run;
  - a JPEG damaged between intact markers passes the listing (reading every image whole would
    cost a pass over the data set) and fails to decode inside the graph; run the session
    inside `naming_bad_input(paths)` to get that failure as one `TowersError` naming the
    file;
  - a folder that is not one of the classes (not in `labels`, or hidden such as
    `.ipynb_checkpoints`): left out and logged: `labels` may choose some of the classes;
  - a class without a folder, or whose folder holds no readable JPEG: an error, since that
    class could be neither learnt nor evaluated.
"""
import collections
import logging
import os

import numpy as np

from models.datasets.image_folder import SPLITS
from towers import datasets
from towers.compat import tf
from towers.errors import TowersError

log = logging.getLogger(__name__)

EXTENSIONS = ('.jpeg', '.jpg')
LAYOUT = '<root>/train/<class>/*.jpeg and <root>/test/<class>/*.jpeg'

# JPEG markers: every JPEG starts with start-of-image followed by another marker, and ends with
# end-of-image (some writers add a short trailer after it).
_START_OF_IMAGE = b'\xff\xd8\xff'
_END_OF_IMAGE = b'\xff\xd9'
_TAIL_BYTES = 4096
# How many skipped names one log line lists.
_NAMES_LOGGED = 5

FolderSplit = collections.namedtuple(
    'FolderSplit', ['directory', 'classes', 'paths', 'labels', 'skipped'])
FolderSplit.__doc__ = """The images of one split of a folder set.

Attributes:
  directory: the split's folder, e.g. 'ROOT/train'.
  classes: the class names; label i is classes[i].
  paths: [n] the images' paths, class by class, sorted within each class.
  labels: [n] int32 class indices.
  skipped: dict reason -> the paths, relative to `directory`, left out for that reason:
    'not_an_image', 'corrupt', 'other_folder' (folders that are not classes).
"""


def parse_labels(text):
    """The class names of a comma-separated `--labels` value, in order.

    Raises:
      TowersError: a name is empty or given twice.
    """
    names = [name.strip() for name in text.split(',')]
    if not all(names):
        raise TowersError('--labels %r has an empty class name; expected comma-separated '
                          'folder names, e.g. CNV,DME,DRUSEN,NORMAL' % text)
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise TowersError('--labels names %s more than once' % ', '.join(repeated))
    return names


def jpeg_problem(path):
    """Why the file at `path` cannot be a whole JPEG, or None when its markers are in place.

    Reads the first 3 bytes and the last 4 KiB, so it costs the same for any image size; a
    file whose compressed data is damaged between intact markers passes.
    """
    with open(path, 'rb') as f:
        head = f.read(len(_START_OF_IMAGE))
        if not head:
            return 'empty file'
        if head != _START_OF_IMAGE:
            return 'not a JPEG: it starts with %s, not the start-of-image marker ff d8 ff' % (
                head.hex(' '))
        f.seek(max(0, os.fstat(f.fileno()).st_size - _TAIL_BYTES))
        if _END_OF_IMAGE not in f.read():
            return 'truncated: no end-of-image marker ff d9 at its end'
    return None


def _split_dir(data_dir, split):
    if not os.path.isdir(data_dir):
        raise TowersError('--data_dir %s is not a directory; expected %s' % (data_dir, LAYOUT))
    directory = os.path.join(data_dir, split)
    if not os.path.isdir(directory):
        raise TowersError('--data_dir %s has no %s/ folder; expected %s (for OCT2017, the '
                          'folder that holds train/ and test/)' % (data_dir, split, LAYOUT))
    return directory


def _log_skipped(directory, what, names):
    if names:
        shown = ', '.join(names[:_NAMES_LOGGED])
        more = len(names) - _NAMES_LOGGED
        log.warning('left out %d %s in %s: %s%s', len(names), what, directory, shown,
                    ' and %d more' % more if more > 0 else '')


def list_split(data_dir, split, labels=None):
    """Finds the images of one split and their labels.

    Args:
      data_dir: the root, holding `train/` and `test/`.
      split: 'train' or 'test'.
      labels: the class names in label order, or None for the sorted names of the split's
        folders (hidden ones left out).

    Returns:
      A `FolderSplit`.

    Raises:
      TowersError: the root or the split's folder is missing, it has no class folder, a class
        of `labels` has no folder, or a class folder holds no readable JPEG. The message names
        the folder and what was expected.
    """
    directory = _split_dir(data_dir, split)
    folders = sorted(name for name in os.listdir(directory)
                     if os.path.isdir(os.path.join(directory, name)))
    classes = list(labels) if labels is not None else [
        name for name in folders if not name.startswith('.')]
    if not classes:
        raise TowersError('%s holds no class folders; expected %s' % (directory, LAYOUT))
    missing = [name for name in classes if name not in folders]
    if missing:
        raise TowersError('%s has no folder for class(es) %s of --labels; its folders are %s'
                          % (directory, ', '.join(missing), ', '.join(folders) or 'none'))
    skipped = {'not_an_image': [], 'corrupt': [],
               'other_folder': [name + '/' for name in folders if name not in classes]}
    paths, path_labels, counts = [], [], []
    for label, name in enumerate(classes):
        found = _class_images(directory, name, skipped)
        if not found:
            left_out = [entry for reason in ('not_an_image', 'corrupt')
                        for entry in skipped[reason] if entry.startswith(name + os.sep)]
            raise TowersError('class folder %s holds no readable JPEG image (expected %s files%s)'
                              % (os.path.join(directory, name), ' or '.join(EXTENSIONS),
                                 '; left out: ' + ', '.join(left_out[:_NAMES_LOGGED])
                                 if left_out else ''))
        paths += found
        path_labels += [label] * len(found)
        counts.append('%s %d' % (name, len(found)))
    _log_skipped(directory, 'folder(s) that are not classes', skipped['other_folder'])
    _log_skipped(directory, 'entries that are not %s images' % '/'.join(EXTENSIONS),
                 skipped['not_an_image'])
    _log_skipped(directory, 'corrupt JPEG(s)', skipped['corrupt'])
    log.info('%s: %d images of %d classes in %s (%s)', split, len(paths), len(classes),
             directory, ', '.join(counts))
    return FolderSplit(directory, classes, paths, np.array(path_labels, np.int32), skipped)


def _class_images(directory, name, skipped):
    """The sorted readable JPEGs of one class folder; adds the others to `skipped`."""
    found = []
    for entry in sorted(os.listdir(os.path.join(directory, name))):
        relative = os.path.join(name, entry)
        path = os.path.join(directory, relative)
        if (entry.startswith('.') or not os.path.isfile(path)
                or not entry.lower().endswith(EXTENSIONS)):
            skipped['not_an_image'].append(relative)
            continue
        problem = jpeg_problem(path)
        if problem:
            skipped['corrupt'].append('%s (%s)' % (relative, problem))
        else:
            found.append(path)
    return found


def _decode_jpeg(path):
    """[h, w, 3] uint8: the JPEG file at `path` (a string tensor) with 3 channels."""
    return tf.io.decode_jpeg(tf.io.read_file(path), channels=3)


def decode_image(path, image_size):
    """Reads one JPEG as the model takes it.

    Args:
      path: scalar string tensor, the file.
      image_size: side of the square output.

    Returns:
      [image_size, image_size, 3] float32 in [0, 1]; a grayscale JPEG is repeated in the three
      channels.
    """
    return scale_and_resize(_decode_jpeg(path), image_size)


def scale_and_resize(images, image_size):
    """Decoded images as the model takes them (and as the exported model takes the images it
    is sent).

    Args:
      images: [h, w, 3] or [b, h, w, 3] uint8 RGB.
      image_size: side of the square output.

    Returns:
      [image_size, image_size, 3] or [b, image_size, image_size, 3] float32 in [0, 1],
      resized bilinearly.
    """
    images = tf.image.convert_image_dtype(images, tf.float32)
    # Bilinear interpolation mixes neighbours with weights summing to 1: values stay in [0, 1].
    return tf.image.resize(images, [image_size, image_size])


def training_input(split, image_size, global_batch, seed=None):
    """Training batches of `split`: shuffled anew each epoch, repeated forever.

    Args:
      split: a `FolderSplit`.
      image_size: side of the square images.
      global_batch: images per batch (all towers').
      seed: of the shuffle; by default derived from the graph's seed.

    Returns:
      images: [global_batch, image_size, image_size, 3] float32 in [0, 1].
      labels: [global_batch] int32.
    """
    dataset = tf.data.Dataset.from_tensor_slices((split.paths, split.labels))
    # Paths are cheap to hold: the buffer takes the whole split for a uniform shuffle.
    dataset = dataset.shuffle(len(split.paths), seed=seed, reshuffle_each_iteration=True)
    dataset = dataset.repeat()
    dataset = dataset.map(lambda path, label: (decode_image(path, image_size), label),
                          num_parallel_calls=tf.data.experimental.AUTOTUNE)
    dataset = dataset.batch(global_batch, drop_remainder=True)
    return datasets.training_batches(dataset.prefetch(tf.data.experimental.AUTOTUNE))


def evaluation_input(paths, image_size):
    """Decodes a batch of files as `decode_image` does each.

    Args:
      paths: [b] string tensor.
      image_size: side of the square output.

    Returns:
      [b, image_size, image_size, 3] float32 in [0, 1].
    """
    return tf.map_fn(lambda path: decode_image(path, image_size), paths,
                     fn_output_signature=tf.float32)


def validation_input(split, image_size, batch_size):
    """The images of `split` (a `FolderSplit`) in order, once, for validation while training:
    a `tf.data.Dataset` of (images [b, image_size, image_size, 3] float32 in [0, 1], labels
    [b] int32), as `training_input` gives them."""
    dataset = tf.data.Dataset.from_tensor_slices((split.paths, split.labels))
    dataset = dataset.map(lambda path, label: (decode_image(path, image_size), label))
    return dataset.batch(batch_size)


def naming_bad_input(paths):
    """A context that turns a failure to decode one of `paths` inside the graph into a
    `TowersError` naming the file.

    TensorFlow's message ("Invalid JPEG data ...") names no file; on that failure the files are
    decoded one at a time, by the pipeline's op, until one fails (`towers.datasets`).
    """
    return datasets.naming_bad_input(datasets.Search(
        paths, _decode_jpeg, lambda err: 'jpeg' in err.message.lower(),
        lambda path, why: 'cannot decode image %s: %s; the file is damaged between its JPEG '
                          'markers: replace or remove it' % (path, why.rstrip('.'))))
