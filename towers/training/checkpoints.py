"""Which checkpoint of a directory to restore: the newest one that reads whole.

A process killed while it saved, a full disk or a bad copy can leave the newest checkpoint of a
training directory damaged, and TensorFlow's `latest_checkpoint` would hand it over all the same
(and the restore fail on it). `newest_readable` tries the checkpoints newest first, reading each
one's index and every tensor of its data (which verifies the checksum TensorFlow stores with
each tensor); it logs one line for each it skips, naming the file and why, and returns the first
that reads whole:

    checkpoint = checkpoints.newest_readable(train_dir)   # None: nothing to resume
"""
import logging
import os
import re

from towers.compat import tf
from towers.errors import TowersError, tf_error_cause

log = logging.getLogger(__name__)

INDEX_SUFFIX = '.index'
_STEP_SUFFIX = re.compile(r'-(\d+)$')


def exists(prefix):
    """Whether the checkpoint `prefix` (e.g. '/train/model.ckpt-100') still has its index."""
    return tf.gfile.Exists(prefix + INDEX_SUFFIX)


def _age(prefix):
    """Sort key, larger for newer: the step of a 'name-<step>' prefix, then the index's time."""
    step = _STEP_SUFFIX.search(prefix)
    index = prefix + INDEX_SUFFIX
    mtime = tf.gfile.Stat(index).mtime_nsec if tf.gfile.Exists(index) else 0
    return (int(step.group(1)) if step else -1, mtime)


def candidates(directory):
    """The checkpoints of `directory`, newest first.

    They are the prefixes of its `*.index` files, and those its `checkpoint` state file lists
    in the directory (which may have lost their index).

    Args:
      directory: a training directory.

    Returns:
      A list of checkpoint prefixes; empty when the directory is missing.
    """
    if not tf.gfile.IsDirectory(directory):
        return []
    prefixes = {os.path.join(directory, name[:-len(INDEX_SUFFIX)])
                for name in tf.gfile.ListDirectory(directory) if name.endswith(INDEX_SUFFIX)}
    # None when the state file is missing or unreadable (TensorFlow logs which).
    state = tf.train.get_checkpoint_state(directory)
    if state is not None:
        listed = list(state.all_model_checkpoint_paths) + [state.model_checkpoint_path]
        prefixes.update(path for path in listed
                        if os.path.dirname(os.path.abspath(path)) == os.path.abspath(directory))
    return sorted(prefixes, key=_age, reverse=True)


def damage(prefix):
    """Why the checkpoint `prefix` cannot be restored, or None when it reads whole.

    Returns:
      None, or one line naming the file at fault and the reader's error.
    """
    index = prefix + INDEX_SUFFIX
    if not tf.gfile.Exists(index):
        return 'its index %s is missing' % index
    try:
        reader = tf.train.NewCheckpointReader(prefix)
    except tf.errors.OpError as err:
        return 'its index %s cannot be read (%s)' % (index, tf_error_cause(err.message))
    for name, dtype in sorted(reader.get_variable_to_dtype_map().items()):
        try:
            _read(reader, prefix, name, dtype)
        # The reader reports a short data file as an IndexError, other damage as OpErrors.
        except (tf.errors.OpError, IndexError, ValueError) as err:
            cause = tf_error_cause(err.message) if isinstance(err, tf.errors.OpError) else err
            return 'its data %s.data-* cannot be read (tensor %s: %s)' % (prefix, name, cause)
    return None


def stored_tensor(prefix, name, dtype):
    """Tensor `name` of checkpoint `prefix`, read by an op of the default graph: the way to
    read a variant (a training input's position, `towers.training.determinism`), which
    `tf.train.NewCheckpointReader` cannot turn into numpy."""
    return tf.raw_ops.RestoreV2(prefix=prefix, tensor_names=[name], shape_and_slices=[''],
                                dtypes=[dtype])[0]


def _read(reader, prefix, name, dtype):
    """Reads tensor `name` of checkpoint `prefix` whole, which verifies its checksum: through
    `reader`, or a variant through `stored_tensor`."""
    if dtype != tf.variant:
        reader.get_tensor(name)
        return
    with tf.Graph().as_default():
        restored = stored_tensor(prefix, name, dtype)
        with tf.Session() as session:
            session.run(restored.op)


def newest_readable(directory):
    """The newest checkpoint of `directory` that reads whole, skipping damaged ones.

    Each skipped checkpoint is logged as a warning, with its file and why.

    Args:
      directory: a training directory (it may not exist yet).

    Returns:
      The checkpoint's prefix, or None when the directory holds no checkpoint.

    Raises:
      TowersError: naming the directory, when it holds checkpoints and none reads whole.
    """
    skipped = []
    for prefix in candidates(directory):
        why = damage(prefix)
        if why is None:
            return prefix
        log.warning('skipping checkpoint %s: %s', prefix, why)
        skipped.append('%s: %s' % (os.path.basename(prefix), why))
    if skipped:
        raise TowersError('no readable checkpoint in %s: all %d are damaged (newest %s); move '
                          'them away to start from scratch' % (directory, len(skipped),
                                                               skipped[0]))
    return None


def recover_history(saver, directory):
    """Lets `saver` rotate the checkpoints an earlier run left in `directory` as its own.

    A new `tf.train.Saver` knows only the checkpoints it writes, so without this every restart
    would leave up to `max_to_keep` checkpoints behind for good.
    """
    state = tf.train.get_checkpoint_state(directory)
    if state is not None:
        saver.recover_last_checkpoints(list(state.all_model_checkpoint_paths))


def saved_step(checkpoint):
    """The global step saved in `checkpoint` (a prefix), or 0 when it is None or holds none."""
    if checkpoint is None:
        return 0
    try:
        return int(tf.train.load_variable(checkpoint, tf.GraphKeys.GLOBAL_STEP))
    except (tf.errors.OpError, ValueError):
        return 0
