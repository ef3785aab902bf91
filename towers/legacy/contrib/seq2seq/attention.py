"""TF 1.15's attention mechanisms of `tf.contrib.seq2seq`, with its variable names.

A mechanism holds a memory `[batch, max_time, depth]` (masked past `memory_sequence_length`)
and its keys (the memory through a bias-free Dense `memory_layer`). Called with a query
`[batch, query_depth]` and its previous state, it scores every memory step, turns the scores
into alignments `[batch, max_time]` and returns them twice: as alignments and as its next state.
Score variables live in a scope named after the kind (`luong_attention/attention_g`,
`bahdanau_attention/attention_v`, ...) below the caller's (the `AttentionWrapper`'s).
"""
import functools
import math

import numpy as np

from towers.compat import tf, tf_layers

__all__ = ['AttentionMechanism', 'LuongAttention', 'BahdanauAttention',
           'LuongMonotonicAttention', 'BahdanauMonotonicAttention', 'hardmax', 'safe_cumprod',
           'monotonic_attention']

_MONOTONIC_MODES = ('recursive', 'parallel', 'hard')


class AttentionMechanism(object):
    """What `AttentionWrapper` accepts: `alignments_size` and `state_size`."""

    @property
    def alignments_size(self):
        raise NotImplementedError

    @property
    def state_size(self):
        raise NotImplementedError


def _static_or_dynamic(tensor, axis):
    return tf.compat.dimension_value(tensor.shape[axis]) or tf.shape(tensor)[axis]


def _masked_memory(memory, memory_sequence_length, check_inner_dims_defined):
    """`memory` (a tensor or a structure of them, `[batch, max_time, ...]`) with the steps past
    each row's length zeroed."""
    memory = tf.nest.map_structure(lambda m: tf.convert_to_tensor(m, name='memory'), memory)
    if check_inner_dims_defined:
        for m in tf.nest.flatten(memory):
            if not m.shape[2:].is_fully_defined():
                raise ValueError('attention memory %s needs fully defined inner dimensions '
                                 '(all but batch and time), got shape %s' % (m.name, m.shape))
    if memory_sequence_length is None:
        return memory
    lengths = tf.convert_to_tensor(memory_sequence_length, name='memory_sequence_length')
    first = tf.nest.flatten(memory)[0]
    mask = tf.sequence_mask(lengths, maxlen=tf.shape(first)[1], dtype=first.dtype)

    def mask_one(m):
        rank = m.shape.ndims if m.shape.ndims is not None else tf.rank(m)
        trailing = tf.ones(rank - 2, dtype=tf.int32)
        return m * tf.reshape(mask, tf.concat((tf.shape(mask), trailing), 0))

    return tf.nest.map_structure(mask_one, memory)


def _masked_score(score, memory_sequence_length, score_mask_value):
    """`score` `[batch, max_time]` with `score_mask_value` past each row's length."""
    if memory_sequence_length is None:
        return score
    positive = tf.assert_positive(
        memory_sequence_length,
        message='All values in memory_sequence_length must be greater than zero.')
    with tf.control_dependencies([positive]):
        mask = tf.sequence_mask(memory_sequence_length, maxlen=tf.shape(score)[1])
    return tf.where(mask, score, score_mask_value * tf.ones_like(score))


def _dense(num_units, name, dtype):
    return tf_layers.core.Dense(num_units, name=name, use_bias=False, dtype=dtype)


class _BaseAttentionMechanism(AttentionMechanism):
    """Memory, keys and masking shared by the mechanisms; a subclass names its scope
    (`_scope_name`) and scores a query (`_score(query) -> [batch, max_time]`)."""

    _scope_name = None

    def __init__(self, num_units, memory, probability_fn, memory_sequence_length,
                 with_query_layer, score_mask_value, dtype, custom_key_value_fn, name,
                 score_bias_init=None):
        dtype = tf.float32 if dtype is None else dtype
        self._num_units = num_units
        self._name = name
        self._score_bias_init = score_bias_init
        self._query_layer = _dense(num_units, 'query_layer', dtype) if with_query_layer else None
        self._memory_layer = _dense(num_units, 'memory_layer', dtype)
        self.dtype = self._memory_layer.dtype
        if score_mask_value is None:
            score_mask_value = tf.as_dtype(self.dtype).as_numpy_dtype(-np.inf)
        self._probability_fn = lambda score, previous: probability_fn(
            _masked_score(score, memory_sequence_length, score_mask_value), previous)
        with tf.name_scope(name, 'BaseAttentionMechanismInit', tf.nest.flatten(memory)):
            self._values = _masked_memory(memory, memory_sequence_length, True)
            self._keys = self._memory_layer(self._values)
            if custom_key_value_fn is not None:
                self._keys, self._values = custom_key_value_fn(self._keys, self._values)
            self._batch_size = _static_or_dynamic(self._keys, 0)
            self._alignments_size = _static_or_dynamic(self._keys, 1)

    @property
    def memory_layer(self):
        return self._memory_layer

    @property
    def query_layer(self):
        return self._query_layer

    @property
    def values(self):
        """The masked memory, `[batch, max_time, depth]`."""
        return self._values

    @property
    def keys(self):
        """The memory through `memory_layer`, `[batch, max_time, num_units]`."""
        return self._keys

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def alignments_size(self):
        return self._alignments_size

    @property
    def state_size(self):
        return self._alignments_size

    def initial_alignments(self, batch_size, dtype):
        """Zeros `[batch_size, max_time]` of `dtype`."""
        return tf.zeros([batch_size, self._alignments_size], dtype=dtype)

    def initial_state(self, batch_size, dtype):
        """The mechanism's first state: its initial alignments."""
        return self.initial_alignments(batch_size, dtype)

    def __call__(self, query, state):
        """Alignments of `query` `[batch, query_depth]` over the memory, given the previous
        `state` `[batch, max_time]`: (alignments, next state), both `[batch, max_time]`."""
        with tf.variable_scope(None, self._scope_name, [query]):
            score = self._score(query)
            if self._score_bias_init is not None:
                score += tf.get_variable('attention_score_bias', dtype=query.dtype,
                                         initializer=self._score_bias_init)
        alignments = self._probability_fn(score, state)
        return alignments, alignments

    def _score(self, query):
        raise NotImplementedError


def _luong_score(query, keys, scale):
    """Dot products of `query` `[batch, depth]` with `keys` `[batch, max_time, depth]`, times a
    learned scalar `attention_g` when `scale`: `[batch, max_time]`."""
    if query.shape[-1] != keys.shape[-1]:
        raise ValueError(
            'Luong attention: the query %s has depth %s but the keys %s have depth %s; set '
            'num_units to the query depth %s' % (query, query.shape[-1], keys, keys.shape[-1],
                                                 query.shape[-1]))
    score = tf.squeeze(tf.matmul(tf.expand_dims(query, 1), keys, transpose_b=True), [1])
    if scale:
        score = tf.get_variable('attention_g', dtype=query.dtype, shape=(),
                                initializer=tf.ones_initializer()) * score
    return score


def _bahdanau_score(processed_query, keys, num_units, normalize):
    """`v . tanh(keys + query)` over the last axis, `[batch, max_time]`; with `normalize`, `v`
    is weight-normalized to length `attention_g` and a bias `attention_b` joins the sum."""
    processed_query = tf.expand_dims(processed_query, 1)
    dtype = processed_query.dtype
    v = tf.get_variable('attention_v', [num_units], dtype=dtype)
    if not normalize:
        return tf.reduce_sum(v * tf.tanh(keys + processed_query), [2])
    g = tf.get_variable('attention_g', dtype=dtype, shape=(),
                        initializer=tf.constant_initializer(math.sqrt(1. / num_units)))
    b = tf.get_variable('attention_b', [num_units], dtype=dtype,
                        initializer=tf.zeros_initializer())
    normed_v = g * v * tf.rsqrt(tf.reduce_sum(tf.square(v)))
    return tf.reduce_sum(normed_v * tf.tanh(keys + processed_query + b), [2])


def _ignoring_state(probability_fn):
    probability_fn = tf.nn.softmax if probability_fn is None else probability_fn
    return lambda score, _: probability_fn(score)


class LuongAttention(_BaseAttentionMechanism):
    """Multiplicative attention (Luong et al., 2015): `score = query . keys`, times a learned
    `attention_g` with `scale=True`; `num_units` must be the query's depth."""

    _scope_name = 'luong_attention'

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 custom_key_value_fn=None, name='LuongAttention'):
        self._scale = scale
        super(LuongAttention, self).__init__(
            num_units, memory, _ignoring_state(probability_fn), memory_sequence_length, False,
            score_mask_value, dtype, custom_key_value_fn, name)

    def _score(self, query):
        return _luong_score(query, self._keys, self._scale)


class BahdanauAttention(_BaseAttentionMechanism):
    """Additive attention (Bahdanau et al., 2015): `score = v . tanh(keys + query_layer(query))`,
    weight-normalized (Salimans & Kingma, 2016) with `normalize=True`."""

    _scope_name = 'bahdanau_attention'

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 custom_key_value_fn=None, name='BahdanauAttention'):
        self._normalize = normalize
        super(BahdanauAttention, self).__init__(
            num_units, memory, _ignoring_state(probability_fn), memory_sequence_length, True,
            score_mask_value, dtype, custom_key_value_fn, name)

    def _score(self, query):
        return _bahdanau_score(self._query_layer(query), self._keys, self._num_units,
                               self._normalize)


def safe_cumprod(x, *args, **kwargs):
    """`tf.cumprod(x, ...)` as `exp(cumsum(log(x)))`, `x` clipped to [tiny, 1]: no underflow
    for small factors. Takes `tf.cumsum`'s arguments (`axis`, `exclusive`, `reverse`)."""
    with tf.name_scope(None, 'SafeCumprod', [x]):
        x = tf.convert_to_tensor(x, name='x')
        tiny = np.finfo(x.dtype.as_numpy_dtype).tiny
        return tf.exp(tf.cumsum(tf.log(tf.clip_by_value(x, tiny, 1)), *args, **kwargs))


def monotonic_attention(p_choose_i, previous_attention, mode):
    """Monotonic attention (Raffel et al., 2017) from the probabilities of stopping at each
    memory step.

    Args:
      p_choose_i: `[batch, max_time]` probabilities in [0, 1] of choosing each step.
      previous_attention: `[batch, max_time]` attention of the previous output step
        (`[1, 0, ..., 0]` before the first).
      mode: 'recursive' (exact, a `tf.scan` over memory), 'parallel' (closed form with
        cumulative sums and products, clipped against division by zero) or 'hard' (exact for
        probabilities that are all 0 or 1).

    Returns:
      The attention, `[batch, max_time]`.

    Raises:
      ValueError: another `mode`.
    """
    p_choose_i = tf.convert_to_tensor(p_choose_i, name='p_choose_i')
    previous_attention = tf.convert_to_tensor(previous_attention, name='previous_attention')
    if mode == 'recursive':
        batch_size = _static_or_dynamic(p_choose_i, 0)
        # Probability of passing over the previous step: 1 for the first.
        skip_previous = tf.concat([tf.ones((batch_size, 1)), 1 - p_choose_i[:, :-1]], 1)
        reached = tf.scan(
            lambda carried, step: tf.reshape(step[0] * carried + step[1], (batch_size,)),
            [tf.transpose(skip_previous), tf.transpose(previous_attention)],
            tf.zeros((batch_size,)))
        return p_choose_i * tf.transpose(reached)
    if mode == 'parallel':
        skip_before = safe_cumprod(1 - p_choose_i, axis=1, exclusive=True)
        return p_choose_i * skip_before * tf.cumsum(
            previous_attention / tf.clip_by_value(skip_before, 1e-10, 1.), axis=1)
    if mode == 'hard':
        # Only steps at or after the previous choice, then only the first chosen of those.
        p_choose_i *= tf.cumsum(previous_attention, axis=1)
        return p_choose_i * tf.cumprod(1 - p_choose_i, axis=1, exclusive=True)
    raise ValueError("monotonic_attention: mode must be 'recursive', 'parallel', or 'hard', "
                     'got %r' % (mode,))


def _monotonic_probability_fn(score, previous_alignments, sigmoid_noise, mode, seed=None):
    """Monotonic attention from scores: Gaussian noise of stddev `sigmoid_noise` added, then a
    sigmoid (a step at 0 for 'hard') gives the choosing probabilities."""
    if sigmoid_noise > 0:
        score += sigmoid_noise * tf.random_normal(tf.shape(score), dtype=score.dtype, seed=seed)
    if mode == 'hard':
        p_choose_i = tf.cast(score > 0, score.dtype)
    else:
        p_choose_i = tf.sigmoid(score)
    return monotonic_attention(p_choose_i, previous_alignments, mode)


class _BaseMonotonicAttentionMechanism(_BaseAttentionMechanism):
    """A mechanism whose alignments go through `monotonic_attention`, after a learned scalar
    `attention_score_bias` joins the score; it starts attending to the first memory step."""

    def __init__(self, num_units, memory, memory_sequence_length, with_query_layer,
                 score_mask_value, sigmoid_noise, sigmoid_noise_seed, score_bias_init, mode,
                 dtype, name):
        probability_fn = functools.partial(_monotonic_probability_fn,
                                           sigmoid_noise=sigmoid_noise, mode=mode,
                                           seed=sigmoid_noise_seed)
        super(_BaseMonotonicAttentionMechanism, self).__init__(
            num_units, memory, probability_fn, memory_sequence_length, with_query_layer,
            score_mask_value, dtype, None, name, score_bias_init=score_bias_init)

    def initial_alignments(self, batch_size, dtype):
        """One-hot on the first memory step, `[batch_size, max_time]` of `dtype`."""
        return tf.one_hot(tf.zeros((batch_size,), dtype=tf.int32), self._alignments_size,
                          dtype=dtype)


class BahdanauMonotonicAttention(_BaseMonotonicAttentionMechanism):
    """`BahdanauAttention`'s score with a learned bias, through monotonic attention
    (Raffel et al., 2017); `mode` as `monotonic_attention` takes it, `sigmoid_noise` the
    stddev of the noise before the sigmoid (0 at test time)."""

    _scope_name = 'bahdanau_monotonic_attention'

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False,
                 score_mask_value=None, sigmoid_noise=0., sigmoid_noise_seed=None,
                 score_bias_init=0., mode='parallel', dtype=None,
                 name='BahdanauMonotonicAttention'):
        self._normalize = normalize
        super(BahdanauMonotonicAttention, self).__init__(
            num_units, memory, memory_sequence_length, True, score_mask_value, sigmoid_noise,
            sigmoid_noise_seed, score_bias_init, mode, dtype, name)

    _score = BahdanauAttention._score


class LuongMonotonicAttention(_BaseMonotonicAttentionMechanism):
    """`LuongAttention`'s score with a learned bias, through monotonic attention
    (Raffel et al., 2017); the other arguments as `BahdanauMonotonicAttention`'s."""

    _scope_name = 'luong_monotonic_attention'

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False,
                 score_mask_value=None, sigmoid_noise=0., sigmoid_noise_seed=None,
                 score_bias_init=0., mode='parallel', dtype=None,
                 name='LuongMonotonicAttention'):
        self._scale = scale
        super(LuongMonotonicAttention, self).__init__(
            num_units, memory, memory_sequence_length, False, score_mask_value, sigmoid_noise,
            sigmoid_noise_seed, score_bias_init, mode, dtype, name)

    _score = LuongAttention._score


def hardmax(logits, name=None):
    """One-hot vectors of the largest logit along the last axis, of `logits`' shape and type."""
    with tf.name_scope(name, 'Hardmax', [logits]):
        logits = tf.convert_to_tensor(logits, name='logits')
        depth = tf.compat.dimension_value(logits.shape[-1])
        if depth is None:
            depth = tf.shape(logits)[-1]
        return tf.one_hot(tf.argmax(logits, -1), depth, dtype=logits.dtype)
