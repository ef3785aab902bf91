"""What every data set package shares: finding or generating the set, and naming a bad input.

Every package of `models/datasets/<set>/` offers the same names (see `models.datasets`):
`locate_or_generate(data_dir)`, the set's `training_input(...)` and `evaluation_input(...)`;
they build on these helpers, so that every set behaves alike:

    data_dir = datasets.locate_or_generate(data_dir, FORMAT)       # real, or a generated set
    image = datasets.open_image(path, 'L', 'the mask of Part3')       # one line naming a file
    check = datasets.check(ok, where)          # an in-graph check naming the record it failed on
    with datasets.naming_bad_input(datasets.Search(paths, decode, recognise, message)):
        session.run(batch)                     # a pipeline failure -> one TowersError naming it

A training stream draws its random choices from `input_seed(seed)` (stateless random ops
keyed by each element's position, `with_random_keys`, and seeded shuffles) and ends in
`training_batches(dataset)`, whose position a checkpoint can hold: a resumed training then
reads on exactly where the checkpoint left off (`towers.training.determinism`).

A reader checks what it can before the graph runs and raises a `TowersError` naming the file
and record. What only the graph finds (a record that does not decode) fails an in-graph
`check` carrying the record's name, or an op whose message names no input, which
`naming_bad_input` then finds by running the op alone on each input: a pass over the inputs,
paid only by a run that was stopping anyway.
"""
import collections
import contextlib
import logging
import os
import re

import numpy as np
from PIL import Image

from towers.compat import tf
from towers.errors import TowersError, tf_error_cause

log = logging.getLogger(__name__)

# The first element of an in-graph check's message, by which `naming_bad_input` finds it.
_BAD_INPUT_TAG = 'bad input'
_BAD_INPUT_MESSAGE = re.compile(r'\[%s\] \[([^\n]*)\]' % _BAD_INPUT_TAG)


class Format(collections.namedtuple(
        'Format', ['title', 'find', 'generate', 'generated_dir', 'real_files', 'description',
                   'default_dir', 'own_folder'])):
    """A data set's format, as `locate_or_generate` needs it.

    Attributes:
      title: its name in log lines, e.g. 'CIFAR-10'.
      find: a function (directory) -> the directory to read when `directory` holds the set,
        or any part of it (a set that is there but incomplete is for its reader to name what
        is missing), else None.
      generate: a function (directory) writing a small learnable set in the format there.
      generated_dir: the name of the folder under `data_dir` the generated set goes to.
      real_files: what to put into `data_dir` to use the real set, for the log line.
      description: a few words on the generated set, e.g. '12000 images of 10 classes'.
      default_dir: the `data_dir` when a script is given none.
      own_folder: whether the set is a user's own folder (of images, say) rather than a
        published set in a known layout: a `data_dir` given that holds neither the set nor a
        generated one is then read as it is, its reader naming what it lacks, and a set is
        generated only in `default_dir`.
    """
    __slots__ = ()


def locate_or_generate(data_dir, data_format):
    """The directory of a data set to read: the real one, or a generated one in its format.

    With `data_dir` None, `data_format.default_dir`. What `data_format.find` finds in
    `data_dir`; else the set generated earlier in `data_dir/<generated_dir>`; else, for a
    given `data_dir` of an `own_folder` set, `data_dir` as it is (its reader names what it
    lacks); else a set newly generated in `data_dir/<generated_dir>`. The choice is logged.
    The generated folder is looked for by name only after `find` has failed on `data_dir`,
    so `find` must not take a folder holding a generated set for the set itself.

    Args:
      data_dir: the script's `--data_dir` (it may not exist yet), or None.
      data_format: the set's `Format`.

    Returns:
      The directory to read.
    """
    given = data_dir is not None
    data_dir = data_dir if given else data_format.default_dir
    found = data_format.find(data_dir)
    if found is not None:
        log.info('using %s in %s', data_format.title, found)
        return found
    generated = os.path.join(data_dir, data_format.generated_dir)
    found = data_format.find(generated)
    if found is None:
        if given and data_format.own_folder:
            return data_dir
        os.makedirs(data_dir, exist_ok=True)
        data_format.generate(generated)
        found = data_format.find(generated)
        log.info('no %s in %s: generated a set in the %s format there (%s)',
                 data_format.title, data_dir, data_format.title, data_format.description)
    log.info('using the GENERATED %s-format data set in %s; put %s into %s to use the real '
             '%s', data_format.title, found, data_format.real_files, data_dir,
             data_format.title)
    return found


def folder_with(names):
    """A `Format.find` for a set that is a folder holding any of the subfolders `names` (e.g.
    'train' and 'test'): the folder itself when it holds one, else None."""
    def find(directory):
        return directory if any(os.path.isdir(os.path.join(directory, name))
                                for name in names) else None
    return find


def open_image(path, mode, what):
    """The image file `path` in PIL `mode` ('L', 'RGB'), read whole.

    Raises:
      TowersError: naming `what` and the file, when it is missing or cannot be read.
    """
    try:
        with Image.open(path) as image:
            image.load()
            return image.convert(mode)
    except FileNotFoundError:
        raise TowersError('%s is missing: %s' % (what, path))
    except (OSError, ValueError, SyntaxError) as err:
        raise TowersError('cannot read %s %s: %s' % (what, path, err))


def check(ok, where):
    """An in-graph check of one input: an op that fails, naming it, unless `ok`.

    Args:
      ok: a scalar bool tensor.
      where: a scalar string tensor naming the input and what is wrong with it, e.g.
        'train-00001-of-00004: record 7: image/encoded is not a JPEG'; it becomes the message
        of the `TowersError` `naming_bad_input` raises.

    Returns:
      The op; make the input's use depend on it.
    """
    return tf.debugging.Assert(ok, [_BAD_INPUT_TAG, where])


Search = collections.namedtuple('Search', ['values', 'build_fn', 'recognise', 'message'])
Search.__doc__ = """How to find the input a pipeline failed on when TensorFlow's message names
none.

Attributes:
  values: the pipeline's inputs, e.g. file paths (strings).
  build_fn: a function of a scalar string placeholder returning the op that may fail on one
    of them (e.g. the decode), built once in a graph of its own.
  recognise: a function of the `InvalidArgumentError`: whether it is that op's failure.
  message: a function (value, cause) -> the error's text.
"""


def first_failing(values, build_fn):
    """The first of `values` on which `build_fn`'s op fails, and why.

    Args:
      values, build_fn: as `Search` has them.

    Returns:
      (value, the cause's line of TensorFlow's message), or None when every value passes.
    """
    with tf.Graph().as_default():
        value = tf.placeholder(tf.string, [])
        fetch = build_fn(value)
        fetch = getattr(fetch, 'op', fetch)   # the op: no copy of the result to numpy
        with tf.Session() as session:
            for candidate in values:
                try:
                    session.run(fetch, {value: candidate})
                except tf.errors.InvalidArgumentError as err:
                    return candidate, tf_error_cause(err.message)
    return None


@contextlib.contextmanager
def naming_bad_input(search=None, check_files=None):
    """Turns an input pipeline's failure on a bad input, in the block, into a `TowersError`
    naming it.

    Args:
      search: a `Search` for failures whose message names no input, or None.
      check_files: a function of no arguments that raises a `TowersError` naming a corrupt
        file (called on a `DataLossError`), or None.

    Raises:
      TowersError: a `check` failed (its `where`); or `search` recognised the failure and
        found the first input that fails alone (its `message`); or `check_files` found a
        corrupt file. Other errors, and failures no input is found for, pass through.
    """
    try:
        yield
    except tf.errors.InvalidArgumentError as err:
        match = _BAD_INPUT_MESSAGE.search(err.message)
        if match is not None:
            raise TowersError(match.group(1)) from None
        if search is None or not search.recognise(err):
            raise
        log.info('an input failed inside the pipeline: running it alone on each of the %d '
                 'inputs to find which', len(search.values))
        found = first_failing(search.values, search.build_fn)
        if found is None:
            raise
        raise TowersError(search.message(*found)) from None
    except tf.errors.DataLossError:
        if check_files is None:
            raise
        check_files()
        raise


def input_seed(seed=None):
    """The seed of a training input's random choices, as a pair for stateless random ops.

    As TensorFlow's random ops take theirs (`tf.get_seed`): from `seed` and the default graph's
    seed (`tf.set_random_seed`, which `towers.fit` sets from its `seed`), so that one seed of
    the training seeds its input too.

    Args:
      seed: the input's own seed, or None.

    Returns:
      [2] ints; drawn at random when neither seed is set (each run then draws its own).
    """
    graph_seed, op_seed = tf.get_seed(seed)
    if graph_seed is None:
        return [int(value) for value in np.random.randint(2 ** 31, size=2)]
    return [graph_seed, op_seed]


def with_random_keys(dataset, seed=None, stream=0):
    """`dataset`'s elements, each as (key, element): the key ([2] int64) seeds the stateless
    random ops (`tf.random.stateless_uniform`, ...) of that element alone.

    A key is a function of `input_seed(seed)`, `stream` and the element's position in
    `dataset`, so the same seed draws the same choices, and a resumed input those an
    uninterrupted one would.

    Args:
      dataset: a `tf.data.Dataset`.
      seed: as for `input_seed`.
      stream: tells apart the keys of several stages of one input given the same `seed` (the
        images of a stream, then its batches), whose draws would otherwise repeat each other.
    """
    fold_in = tf.random.experimental.stateless_fold_in
    base = fold_in(tf.constant(input_seed(seed), tf.int64), stream)
    return dataset.enumerate().map(lambda index, element: (fold_in(base, index), element))


def gather_rows(arrays, indices):
    """The rows `indices` of numpy arrays kept in memory, as tensors.

    The arrays stay out of the graph, which would otherwise carry them as constants into every
    checkpoint's meta graph and event file: a stateless `tf.numpy_function` reads them, so an
    iterator over a dataset that uses it still saves its position.

    Args:
      arrays: numpy arrays of equal length.
      indices: [n] int64 tensor.

    Returns:
      A list with each array's rows, [n, ...] in its dtype.
    """
    rows = tf.numpy_function(lambda index: tuple(array[index] for array in arrays), [indices],
                             [tf.as_dtype(array.dtype) for array in arrays], stateful=False)
    for row, array in zip(rows, arrays):
        row.set_shape(indices.shape.concatenate(array.shape[1:]))
    return rows


def training_batches(dataset):
    """The next element of `dataset`, a training stream, from a one-shot iterator whose position
    a checkpoint can hold.

    The iterator is registered in the default graph's `SAVEABLE_OBJECTS`, which the saver of a
    deterministic training (`towers.training.determinism.Saver`) saves with the variables;
    every random choice of `dataset` must then be stateless (`with_random_keys`) or a seeded
    shuffle, whose state the iterator saves.

    Returns:
      The tensors of one element (a nested structure, as `dataset` gives it).
    """
    with tf.name_scope('training_input'):
        iterator = tf.data.make_one_shot_iterator(dataset)
    tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS,
                         tf.data.experimental.make_saveable_from_iterator(iterator))
    return iterator.get_next()
