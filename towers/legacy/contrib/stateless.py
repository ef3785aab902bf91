"""`tf.contrib.stateless` of TF 1.15: random tensors that are a function of a `[2]` integer
seed tensor, on the kernels TF 1.15 ran (`StatelessRandomUniform`, `StatelessRandomUniformInt`,
`StatelessRandomNormal`, `StatelessTruncatedNormal`, `StatelessMultinomial`), so that a seed
gives the numbers it gave there. TensorFlow 2's `tf.random.stateless_*` may pick another
algorithm for the same seed on some devices; these never do.
"""
from towers.compat import tf

_UNIFORM_DTYPES = (tf.float16, tf.bfloat16, tf.float32, tf.float64, tf.int32, tf.int64)


def _draw(kernel, shape, seed, dtype, scale, offset, scope):
    """`kernel`'s values for `shape` and `seed`, times `scale` plus `offset`, named `scope`."""
    values = kernel(shape=tf.convert_to_tensor(shape, name='shape'), seed=seed, dtype=dtype)
    return tf.add(values * scale, offset, name=scope)


def stateless_random_uniform(shape, seed, minval=0, maxval=None, dtype=tf.float32, name=None):
    """Uniform values in `[minval, maxval)` drawn from `seed`.

    Args:
      shape: the output's shape, a 1-D integer tensor or list.
      seed: a `[2]` int32 or int64 tensor.
      minval: the lower bound (included), a scalar of `dtype`.
      maxval: the upper bound (excluded); 1 for floats, required for integers.
      dtype: float16, bfloat16, float32, float64, int32 or int64.
      name: the name scope.

    Returns:
      A tensor of `shape` and `dtype`; integers are slightly biased unless
      `maxval - minval` is a power of two.

    Raises:
      ValueError: another dtype, or an integer dtype without `maxval`.
    """
    dtype = tf.as_dtype(dtype)
    if dtype not in _UNIFORM_DTYPES:
        raise ValueError('stateless_random_uniform: invalid dtype %r' % dtype)
    if maxval is None:
        if dtype.is_integer:
            raise ValueError('stateless_random_uniform: must specify maxval for integer '
                             'dtype %r' % dtype)
        maxval = 1
    with tf.name_scope(name, 'stateless_random_uniform', [shape, seed, minval, maxval]) as scope:
        minval = tf.convert_to_tensor(minval, dtype=dtype, name='min')
        maxval = tf.convert_to_tensor(maxval, dtype=dtype, name='max')
        if dtype.is_integer:
            return tf.raw_ops.StatelessRandomUniformInt(
                shape=tf.convert_to_tensor(shape, name='shape'), seed=seed, minval=minval,
                maxval=maxval, name=scope)
        return _draw(tf.raw_ops.StatelessRandomUniform, shape, seed, dtype, maxval - minval,
                     minval, scope)


def _normal(kernel, default_name, shape, seed, mean, stddev, dtype, name):
    """`kernel`'s standard normal values scaled by `stddev` and shifted by `mean`."""
    with tf.name_scope(name, default_name, [shape, seed, mean, stddev]) as scope:
        mean = tf.convert_to_tensor(mean, dtype=dtype, name='mean')
        stddev = tf.convert_to_tensor(stddev, dtype=dtype, name='stddev')
        return _draw(kernel, shape, seed, dtype, stddev, mean, scope)


def stateless_random_normal(shape, seed, mean=0.0, stddev=1.0, dtype=tf.float32, name=None):
    """Normal values of `mean` and `stddev` drawn from `seed` (a `[2]` integer tensor): a
    tensor of `shape` (a 1-D integer tensor or list) and float `dtype`."""
    return _normal(tf.raw_ops.StatelessRandomNormal, 'stateless_random_normal', shape, seed,
                   mean, stddev, dtype, name)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=tf.float32,
                               name=None):
    """As `stateless_random_normal`, with draws more than two standard deviations from the
    mean drawn again."""
    return _normal(tf.raw_ops.StatelessTruncatedNormal, 'stateless_truncated_normal', shape,
                   seed, mean, stddev, dtype, name)


def stateless_multinomial(logits, num_samples, seed, output_dtype=tf.int64, name=None):
    """Classes drawn from `seed` (a `[2]` integer tensor) with the probabilities
    `softmax(logits)`.

    Args:
      logits: `[batch, classes]` unnormalized log-probabilities.
      num_samples: the number of draws per row, a scalar.
      output_dtype: int32 or int64.

    Returns:
      `[batch, num_samples]` class indices of `output_dtype`.
    """
    with tf.name_scope(name, 'stateless_multinomial', [logits, seed]):
        logits = tf.convert_to_tensor(logits, name='logits')
        return tf.raw_ops.StatelessMultinomial(logits=logits, num_samples=num_samples,
                                               seed=seed, output_dtype=output_dtype)
