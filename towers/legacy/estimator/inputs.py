"""TF 1.15's `tf.estimator.inputs.numpy_input_fn` and `pandas_input_fn`: an `input_fn` that
feeds NumPy arrays or a pandas DataFrame to an Estimator in batches.

    input_fn = tf.estimator.inputs.numpy_input_fn({'x': x}, y, batch_size=128, num_epochs=None,
                                                  shuffle=True)
    features, labels = input_fn()    # {'x': [<=128, ...]}, [<=128, ...]

What a user sees is TF 1.x's: `shuffle` must be given (True or False); with shuffle=False the
batches follow the arrays' order; `num_epochs` passes over the data (None: forever, every batch
full), the last batch of the last pass holding what is left; after the last batch the input
raises `tf.errors.OutOfRangeError`, which ends training or evaluation. x an array gives features
that are one tensor, not a dict; y None gives features alone. The tensors have the arrays'
dtypes.

TF 1.x fed a queue from Python threads; here a `tf.data` pipeline gathers each batch from the
arrays (nothing of them is copied into the graph, so `graph.pbtxt` and the checkpoints'
meta graphs stay small), and shuffling draws a new order of the whole data for each pass (TF 1.x
shuffled within a queue of `queue_capacity`, across passes); with a graph-level seed
(`RunConfig(tf_random_seed=...)`) the order repeats. `queue_capacity` and `num_threads`, the
queue's settings, are accepted and have nothing to set.
"""
import numpy as np

from towers.compat import tf
from towers.legacy.estimator.spec import EstimatorError


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000,
                   num_threads=1):
    """An input_fn of batches of the rows of `x` (and `y`).

    Args:
      x: an array [n, ...], or a dict feature name -> array [n, ...].
      y: None, an array [n, ...], or a dict label name -> array [n, ...] (no name of x's).
      batch_size: int, rows in a batch.
      num_epochs: int passes over the data, or None for ever.
      shuffle: bool (required): whether to read the rows in random order.
      queue_capacity, num_threads: accepted, as TF 1.x's.

    Returns:
      A function () -> features, or (features, labels) when `y` is given; features (and labels)
      as `x` (and `y`): a tensor [<= batch_size, ...] or a dict of them.

    Raises:
      EstimatorError: shuffle not a bool; an empty x or y; lengths that differ; a key in both.
      TypeError: x neither an array nor a dict.
    """
    del queue_capacity, num_threads
    _check_shuffle(shuffle)
    if isinstance(x, dict):
        if not x:
            raise EstimatorError('x cannot be an empty dict')
        features = {key: np.asarray(value) for key, value in x.items()}
    elif isinstance(x, np.ndarray):
        if x.size == 0:
            raise EstimatorError('x cannot be an empty array')
        features = x
    else:
        raise TypeError('x must be a dict or array; got %s' % type(x).__name__)
    labels = y
    if isinstance(y, dict):
        if not y:
            raise EstimatorError('y cannot be empty dict, use None instead.')
        labels = {key: np.asarray(value) for key, value in y.items()}
        if isinstance(x, dict) and set(x) & set(y):
            raise EstimatorError('%d duplicate keys are found in both x and y: %s'
                                 % (len(set(x) & set(y)), sorted(set(x) & set(y))))
    elif y is not None:
        labels = np.asarray(y)
    return _batches_input_fn(features, labels, batch_size, num_epochs, shuffle)


def pandas_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000,
                    num_threads=1, target_column='target'):
    """An input_fn of batches of the rows of the DataFrame `x` (and `y`).

    Args:
      x: a `pandas.DataFrame`; features are its columns by name.
      y: None, a `pandas.Series` (labels one tensor) or a `DataFrame` (labels a dict by column),
        with x's index.
      target_column: str, which x must not have as a column when y is a Series.
      batch_size, num_epochs, shuffle, queue_capacity, num_threads: as `numpy_input_fn`'s.

    Returns:
      A function () -> features, or (features, labels) when `y` is given.

    Raises:
      TypeError: pandas is not installed; target_column is not a string.
      EstimatorError: shuffle not a bool; x has a column `target_column`; the indexes of x and
        y differ.
    """
    del queue_capacity, num_threads
    try:
        import pandas
    except ImportError as err:
        raise TypeError('pandas_input_fn should not be called without pandas installed') from err
    _check_shuffle(shuffle)
    if not isinstance(target_column, str):
        raise TypeError('target_column must be a string type')
    features = {str(name): x[name].to_numpy() for name in x.columns}
    labels = None
    if y is not None:
        if not np.array_equal(x.index, y.index):
            raise EstimatorError('Index for x and y are mismatched.\nIndex for x: %s\n'
                                 'Index for y: %s\n' % (x.index, y.index))
        if isinstance(y, pandas.DataFrame):
            labels = {str(name): y[name].to_numpy() for name in y.columns}
        else:
            if target_column in x:
                raise EstimatorError('Cannot use name %s for target column: DataFrame already '
                                     'has a column with that name: %s'
                                     % (target_column, list(x.columns)))
            labels = y.to_numpy()
    return _batches_input_fn(features, labels, batch_size, num_epochs, shuffle)


def _check_shuffle(shuffle):
    if not isinstance(shuffle, bool):
        raise EstimatorError('shuffle must be provided and explicitly set as boolean (it is '
                             'recommended to set it as True for training); got %r' % (shuffle,))


def _tensor_dtype(array):
    """The dtype of `array`'s tensor: strings (bytes, str, object) are tf.string."""
    if array.dtype.kind in 'SUO':
        return tf.string
    return tf.as_dtype(array.dtype)


def _gathered(arrays):
    """(row indices [k]) -> the rows [k, ...] of each array, strings as bytes."""
    def gather(indices):
        rows = [array[indices] for array in arrays]
        return [row.astype(np.bytes_) if row.dtype.kind == 'U' else row for row in rows]
    return gather


def _batches_input_fn(features, labels, batch_size, num_epochs, shuffle):
    """The input_fn of `features` (an array or dict of arrays) and `labels` (None, an array or a
    dict of arrays), all of one length."""
    structure = features if labels is None else (features, labels)
    arrays = tf.nest.flatten(structure)
    lengths = {len(array) for array in arrays}
    if len(lengths) != 1:
        raise EstimatorError('Length of tensors in x and y is mismatched. All elements in x and y '
                             'must have the same length.\nShapes in x: %s\nShapes in y: %s'
                             % (tf.nest.map_structure(np.shape, features),
                                tf.nest.map_structure(np.shape, labels)))
    rows = lengths.pop()
    dtypes = [_tensor_dtype(array) for array in arrays]

    def input_fn():
        indices = tf.data.Dataset.range(rows)
        if shuffle:
            indices = indices.shuffle(rows, reshuffle_each_iteration=True)
        batches = indices.repeat(num_epochs).batch(batch_size,
                                                   drop_remainder=num_epochs is None)

        def gather(batch):
            values = tf.numpy_function(_gathered(arrays), [batch], dtypes,
                                       name='gather_rows')
            for value, array in zip(values, arrays):
                value.set_shape(batch.shape.concatenate(array.shape[1:]))
            return tf.nest.pack_sequence_as(structure, values)

        return tf.data.make_one_shot_iterator(batches.map(gather).prefetch(1)).get_next()

    return input_fn
