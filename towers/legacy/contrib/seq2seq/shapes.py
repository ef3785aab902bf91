"""Shape utilities the seq2seq decoders share: batch-major <-> time-major, zero outputs, and
sequences as TensorArrays of their steps."""
from towers.compat import tf


def transpose_batch_time(x):
    """Swaps the first two dimensions of `x`: [batch, time, ...] <-> [time, batch, ...].

    A tensor of rank 0 or 1 is returned as it is.
    """
    rank = x.shape.rank
    if rank is not None and rank < 2:
        return x
    if rank is None:
        perm = tf.concat([[1, 0], tf.range(2, tf.rank(x))], 0)
    else:
        perm = [1, 0] + list(range(2, rank))
    return tf.transpose(x, perm)


def batch_zeros(sizes, dtypes, batch_size):
    """Zeros of shape `[batch_size] + size` for each size of `sizes` (ints or `TensorShape`s,
    fully defined) and dtype of `dtypes` (the same structure); `batch_size` a scalar tensor or
    int."""
    static_batch = tf.get_static_value(batch_size)

    def zeros(size, dtype):
        size = tf.TensorShape(size)
        value = tf.zeros([batch_size] + size.as_list(), dtype=dtype)
        value.set_shape(tf.TensorShape([static_batch]).concatenate(size))
        return value
    return tf.nest.map_structure(zeros, sizes, dtypes)


def unstack_time(x):
    """A TensorArray of `x`'s slices along its first (time) dimension."""
    return tf.TensorArray(dtype=x.dtype, size=tf.shape(x)[0],
                          element_shape=x.shape[1:]).unstack(x)
