"""`tf.contrib.nn` of TF 1.15: its nine functions, on TensorFlow 2's ops.

`conv1d_transpose` and `nth_element` are TensorFlow's own (`tf.nn.conv1d_transpose` under TF
1.x's argument names, the `NthElement` op); `sampled_sparse_softmax_loss` is
`tf.nn.sampled_softmax_loss` with one true class, which computes the same loss; the three
`deprecated_flipped_*` losses are tf.nn's with logits first; `alpha_dropout`,
`scaled_softplus` and `rank_sampled_softmax_loss` are written here as TF 1.x defined them
(`scaled_softplus` with TensorFlow's gradient of the same formula rather than TF 1.x's
memory-saving one, `rank_sampled_softmax_loss` without its co-location of the resampling with
sharded class weights).
"""
import numbers

from towers.compat import tf

# -scale * alpha of SELU: the value alpha dropout gives a dropped unit.
_SELU_SATURATION = -1.7580993408473766



def alpha_dropout(x, keep_prob, noise_shape=None, seed=None, name=None):
    """Dropout that keeps SELU activations at zero mean and unit variance (Klambauer et al.,
    2017): a dropped unit takes SELU's saturation value, then an affine map restores the
    input's mean and variance.

    Args:
      x: a float tensor.
      keep_prob: the probability of keeping each unit, a float in (0, 1] or a scalar tensor.
      noise_shape: the shape of the keep/drop draws (broadcast against `x`), default `x`'s.
      seed: the op seed of the draws.
      name: the name scope.

    Returns:
      A tensor of `x`'s shape and type; `x` itself when `keep_prob` is 1.

    Raises:
      ValueError: a number `keep_prob` outside (0, 1].
    """
    with tf.name_scope(name, 'alpha_dropout', [x]):
        x = tf.convert_to_tensor(x, name='x')
        if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1:
            raise ValueError('alpha_dropout: keep_prob must be in (0, 1], got %g' % keep_prob)
        keep_prob = tf.convert_to_tensor(keep_prob, dtype=x.dtype, name='keep_prob')
        keep_prob.shape.assert_is_compatible_with([])
        if tf.get_static_value(keep_prob) == 1:
            return x
        draws = tf.random_uniform(tf.shape(x) if noise_shape is None else noise_shape,
                                  seed=seed, dtype=x.dtype)
        kept = tf.cast(draws >= 1 - keep_prob, x.dtype)
        masked = x * kept + _SELU_SATURATION * (1 - kept)
        scale = (keep_prob + keep_prob * (1 - keep_prob) * _SELU_SATURATION ** 2) ** -0.5
        return scale * masked - scale * _SELU_SATURATION * (1 - keep_prob)


def scaled_softplus(x, alpha, clip=None, name=None):
    """`alpha * log(1 + exp(x / alpha))`, at most `clip` when it is given: relu (or relu6, with
    clip 6) as alpha goes to 0.

    Args:
      x: a float tensor.
      alpha: a tensor > 0 broadcast against `x`, the smoothness.
      clip: an upper bound broadcast against `x`, or None.
      name: the name scope.

    Returns:
      The broadcast of `x`, `alpha` (and `clip`), of `x`'s type.
    """
    with tf.name_scope(name, 'scaled_softplus', [x, alpha] + ([clip] if clip is not None
                                                              else [])):
        x = tf.convert_to_tensor(x, name='x')
        alpha = tf.convert_to_tensor(alpha, dtype=x.dtype, name='alpha')
        y = alpha * tf.nn.softplus(x / alpha)
        if clip is None:
            return y
        return tf.minimum(y, tf.convert_to_tensor(clip, dtype=x.dtype, name='clip'))


def nth_element(input, n, reverse=False, name=None):  # noqa: A002
    """The `n`-th smallest (largest with `reverse`) value of the last dimension of `input`:
    [..., k] -> [...]."""
    return tf.raw_ops.NthElement(input=input, n=n, reverse=reverse, name=name)


def conv1d_transpose(value=None, filter=None, output_shape=None, stride=None,  # noqa: A002
                     padding='SAME', data_format='NWC', name=None, input=None,  # noqa: A002
                     filters=None, dilations=None):
    """TF 1.x's `conv1d_transpose(value, filter, output_shape, stride, ...)` (also under TF
    1.15's names `input` and `filters`): `tf.nn.conv1d_transpose`.

    value [batch, width, in_channels] ('NWC') or [batch, in_channels, width] ('NCW'); filter
    [width, out_channels, in_channels]; output_shape a 1-D tensor of 3 ints.
    """
    return tf.nn.conv1d_transpose(value if input is None else input,
                                  filter if filters is None else filters, output_shape,
                                  stride, padding=padding, data_format=data_format,
                                  dilations=dilations, name=name)


def deprecated_flipped_softmax_cross_entropy_with_logits(logits, labels, dim=-1, name=None):
    """`tf.nn.softmax_cross_entropy_with_logits` with logits first: [batch] losses."""
    return tf.nn.softmax_cross_entropy_with_logits_v2(
        labels=tf.stop_gradient(labels), logits=logits, axis=dim, name=name)


def deprecated_flipped_sparse_softmax_cross_entropy_with_logits(logits, labels, name=None):
    """`tf.nn.sparse_softmax_cross_entropy_with_logits` with logits first."""
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits,
                                                          name=name)


def deprecated_flipped_sigmoid_cross_entropy_with_logits(logits, targets, name=None):
    """`tf.nn.sigmoid_cross_entropy_with_logits` with logits first (TF 1.x's `targets`)."""
    return tf.nn.sigmoid_cross_entropy_with_logits(labels=targets, logits=logits, name=name)


def sampled_sparse_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes,
                                sampled_values=None, remove_accidental_hits=True,
                                partition_strategy='mod', name='sampled_sparse_softmax_loss'):
    """The sampled softmax loss of one true class per example: labels int64 [batch, 1],
    inputs [batch, dim], weights [num_classes, dim] (or its shards) -> [batch] losses; the
    same loss as `tf.nn.sampled_softmax_loss` with `num_true=1`."""
    return tf.nn.sampled_softmax_loss(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
        sampled_values=sampled_values, remove_accidental_hits=remove_accidental_hits,
        partition_strategy=partition_strategy, name=name)


def rank_sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_resampled,
                              num_classes, num_true, sampled_values, resampling_temperature,
                              remove_accidental_hits, partition_strategy, name=None):
    """Sampled softmax with rank-based adaptive resampling (TAPAS, arXiv:1707.03073): of
    `num_sampled` candidate classes, the `num_resampled` with the largest
    `logsumexp_j((w_i . x_j + b_i) / resampling_temperature)` over the batch are kept, and the
    sampled softmax loss is computed on them.

    Args: as `tf.nn.sampled_softmax_loss`, with `num_resampled` < `num_sampled` and a scalar
      `resampling_temperature`; `sampled_values` None draws the candidates with
      `tf.nn.learned_unigram_candidate_sampler`.

    Returns:
      [batch] losses.

    Raises:
      ValueError: num_sampled > num_classes, num_resampled >= num_sampled, or a
        partition_strategy other than 'div' and 'mod'.
    """
    if num_sampled > num_classes:
        raise ValueError('rank_sampled_softmax_loss: num_sampled (%d) cannot be greater than '
                         'num_classes (%d)' % (num_sampled, num_classes))
    if num_sampled <= num_resampled:
        raise ValueError('rank_sampled_softmax_loss: num_resampled (%d) must be less than '
                         'num_sampled (%d)' % (num_resampled, num_sampled))
    if partition_strategy not in ('div', 'mod'):
        raise ValueError('rank_sampled_softmax_loss: unsupported partition_strategy %r'
                         % (partition_strategy,))
    with tf.name_scope(name, 'rank_sampled_softmax_loss',
                       [weights, biases, labels, inputs, resampling_temperature]) as scope:
        if not sampled_values:
            sampled_values = tf.nn.learned_unigram_candidate_sampler(
                true_classes=labels, num_true=num_true, num_sampled=num_sampled, unique=True,
                range_max=num_classes)
        sampled, true_expected, sampled_expected = (tf.stop_gradient(value)
                                                    for value in sampled_values)
        sampled = tf.cast(sampled, tf.int64)
        embeddings = tf.nn.embedding_lookup(weights, sampled, partition_strategy)
        scores = tf.reduce_logsumexp(
            tf.matmul(embeddings, inputs / resampling_temperature, transpose_b=True), axis=1)
        sampled_biases = tf.reshape(tf.nn.embedding_lookup(biases, sampled,
                                                           partition_strategy), [-1])
        scores += sampled_biases / resampling_temperature
        _, kept = tf.nn.top_k(scores, k=num_resampled, sorted=False)
        resampled = (tf.gather(sampled, kept), true_expected, tf.gather(sampled_expected, kept))
        return tf.nn.sampled_softmax_loss(
            weights, biases, labels, inputs, num_resampled, num_classes, num_true=num_true,
            sampled_values=resampled, remove_accidental_hits=remove_accidental_hits,
            partition_strategy=partition_strategy, name=scope)
