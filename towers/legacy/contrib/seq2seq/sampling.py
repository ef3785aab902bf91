"""The random draws and row merges of the sampling helpers (`helper.py`), with TF 1.15's ops,
so that the same graph and op seeds draw the same values."""
from towers.compat import tf


def embedding_fn(embedding):
    """`embedding` if it is a function of ids, else the lookup of ids in it (the params)."""
    if callable(embedding):
        return embedding
    return lambda ids: tf.nn.embedding_lookup(embedding, ids)


def probability(sampling_probability):
    """`sampling_probability` as a tensor; ValueError unless a scalar or a vector."""
    value = tf.convert_to_tensor(sampling_probability, name='sampling_probability')
    if value.shape.ndims not in (0, 1):
        raise ValueError('sampling_probability must be either a scalar or a vector, got '
                         'shape %s' % value.shape)
    return value


def bernoulli(probs, count, dtype, seed):
    """`count` draws of Bernoulli(`probs`), [count] + probs' shape, as `dtype`."""
    shape = tf.concat([[count], tf.shape(probs)], 0)
    return tf.cast(tf.random_uniform(shape, seed=seed, dtype=probs.dtype) < probs, dtype)


def categorical(logits, seed):
    """One int32 id drawn from the softmax of `logits` [..., classes] per row: [...]."""
    logits = tf.convert_to_tensor(logits, name='logits')
    draw_dtype = tf.int64 if logits.dtype.size > 4 else tf.int32
    rows = logits if logits.shape.ndims == 2 else tf.reshape(logits, [-1, tf.shape(logits)[-1]])
    draws = tf.random.categorical(rows, 1, dtype=draw_dtype, seed=seed)
    return tf.cast(tf.reshape(draws, tf.shape(logits)[:-1]), tf.int32)


def merge_rows(take, fed_fn, base):
    """Rows of `fed_fn(rows)` where `take` is True, of `base` elsewhere.

    Args:
      take: a bool [batch] vector.
      fed_fn: a function (int32 [k, 1] indices of the True rows) -> their k rows.
      base: a tensor [batch, ...].
    """
    taken = tf.cast(tf.where(take), tf.int32)
    kept = tf.cast(tf.where(tf.logical_not(take)), tf.int32)
    shape = tf.shape(base)
    return (tf.scatter_nd(taken, fed_fn(taken), shape)
            + tf.scatter_nd(kept, tf.gather_nd(base, kept), shape))
