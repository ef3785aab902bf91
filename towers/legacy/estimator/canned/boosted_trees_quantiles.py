"""Stand-ins for TensorFlow's quantile-sketch kernels of boosted trees (TF 2.21 ships the ops
without them): the `QuantileAccumulator` that finds the bucket boundaries of numeric features
and `boosted_trees_bucketize`, with TF 1.15's arithmetic (its weighted quantiles stream in
float32 ranks), so that the boundaries are TF 1.15.5's to the bit.

A summary is a list of entries (value, weight, min rank, max rank), float32, sorted by value.
Each batch becomes one summary per feature (an exact stream of the batch, compressed to the
sketch's block size); the accumulator's streams stack those summaries in levels, merging and
compressing a level into the next when full; the flush merges the levels and compresses the
result to `num_quantiles` boundaries (duplicates dropped), then empties the streams. Equal
values of a batch are joined with their weights added in the order GCC's `std::sort` leaves
them, which TF 1.15.5's kernels were built with.
"""
import itertools
import math

import numpy as np

from towers.compat import internal, tf

_F = np.float32
_resources = internal('ops.resources')
_saving = internal('training.saving.saveable_object')
# TF 1.15's bound on the elements of a stream of the accumulator.
_MAX_ELEMENTS = 1 << 40
# The columns of the accumulator's state, one row per entry of a stream's level: its stream,
# its level, then the entry.
_STREAM, _LEVEL = 0, 1


def _block_size(eps, max_elements):
    """The entries a level of a stream of precision `eps` keeps for up to `max_elements`
    elements: enough levels that 2^levels blocks cover them."""
    if eps <= np.finfo(float).eps:
        return max(max_elements, 2)
    levels, block = 1, 2
    while (1 << levels) * block < max_elements:
        block = int(math.ceil(levels / eps)) + 1
        levels += 1
    return max(block, 2)


def _heap_sift(items, hole, length, item):
    """Moves the hole at `hole` of the heap `items[:length]` down to a leaf, then `item` up
    from there (libstdc++'s __adjust_heap)."""
    top, child = hole, hole
    while child < (length - 1) // 2:
        child = 2 * (child + 1)
        if items[child][0] < items[child - 1][0]:
            child -= 1
        items[hole], hole = items[child], child
    if length % 2 == 0 and child == (length - 2) // 2:
        child = 2 * (child + 1)
        items[hole], hole = items[child - 1], child - 1
    parent = (hole - 1) // 2
    while hole > top and items[parent][0] < item[0]:
        items[hole], hole = items[parent], parent
        parent = (hole - 1) // 2
    items[hole] = item


def _heap_sort(items, first, last):
    """libstdc++'s heap sort of `items[first:last]` (introsort's fallback when too deep)."""
    part = items[first:last]
    for parent in range((len(part) - 2) // 2, -1, -1):
        _heap_sift(part, parent, len(part), part[parent])
    for end in range(len(part) - 1, 0, -1):
        item, part[end] = part[end], part[0]
        _heap_sift(part, 0, end, item)
    items[first:last] = part


def _introsort(items, first, last, depth):
    """libstdc++'s introsort loop: quicksort of ranges over 16 items, median of three."""
    while last - first > 16:
        if depth == 0:
            _heap_sort(items, first, last)
            return
        depth -= 1
        a, b, c = items[first + 1][0], items[first + (last - first) // 2][0], items[last - 1][0]
        if a < b:
            median = (first + (last - first) // 2 if b < c else last - 1 if a < c
                      else first + 1)
        else:
            median = first + 1 if a < c else last - 1 if b < c else first + (last - first) // 2
        items[first], items[median] = items[median], items[first]
        pivot, low, high = items[first][0], first + 1, last
        while True:
            while items[low][0] < pivot:
                low += 1
            high -= 1
            while pivot < items[high][0]:
                high -= 1
            if low >= high:
                break
            items[low], items[high] = items[high], items[low]
            low += 1
        _introsort(items, low, last, depth)
        last = low


def _gnu_sort(items):
    """`items` (value, weight) sorted by value in place exactly as GCC's std::sort orders
    them (its order of equal values decides how their float32 weights add up)."""
    if len(items) > 1:
        _introsort(items, 0, len(items), 2 * (len(items).bit_length() - 1))
    for index in range(1, len(items)):
        item, hole = items[index], index
        if index < 16 and item[0] < items[0][0]:
            items[1:index + 1], hole = items[:index], 0
        else:
            while item[0] < items[hole - 1][0]:
                items[hole] = items[hole - 1]
                hole -= 1
        items[hole] = item


def _from_values(values, weights):
    """The exact summary of `values` (float32 [n]) of `weights` (float32 [n], all positive):
    equal values joined, their weights added in std::sort's order."""
    items = list(zip(values, weights))
    _gnu_sort(items)
    entries, rank = [], _F(0)
    for value, group in itertools.groupby(items, key=lambda item: item[0]):
        group = [weight for _, weight in group]
        weight = group[0]
        for other in group[1:]:
            weight = weight + other
        entries.append((value, weight, rank, rank + weight))
        rank = rank + weight
    return entries


def _merge(base, other):
    """One summary of `base` and `other`, the ranks of each entry raised by the other
    summary's entries below it (equal values joined)."""
    if not other:
        return base
    if not base:
        return list(other)
    merged = []
    first = second = 0
    next_rank_base = next_rank_other = _F(0)
    while first < len(base) and second < len(other):
        a, b = base[first], other[second]
        if a[0] < b[0]:
            merged.append((a[0], a[1], a[2] + next_rank_other, a[3] + (b[3] - b[1])))
            next_rank_base = a[2] + a[1]
            first += 1
        elif b[0] < a[0]:
            merged.append((b[0], b[1], b[2] + next_rank_base, b[3] + (a[3] - a[1])))
            next_rank_other = b[2] + b[1]
            second += 1
        else:
            merged.append((a[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]))
            next_rank_base, next_rank_other = a[2] + a[1], b[2] + b[1]
            first += 1
            second += 1
    merged += [(value, weight, low + next_rank_other, high + other[-1][3])
               for value, weight, low, high in base[first:]]
    merged += [(value, weight, low + next_rank_base, high + base[-1][3])
               for value, weight, low, high in other[second:]]
    return merged


def _compress(entries, size_hint, min_eps=0.):
    """`entries` thinned to about `size_hint` (first and last kept), skipping runs whose rank
    gap stays within the total weight times max(1 / size_hint, min_eps)."""
    size_hint = max(size_hint, 2)
    count = len(entries)
    if count <= size_hint:
        return entries
    delta = float(entries[-1][3]) * max(1. / size_hint, min_eps)
    kept, credit, read, last = [entries[0]], 0, 0, 0
    while read + 1 != count:
        following = read + 1
        next_min_rank = entries[read][2] + entries[read][1]
        while (following != count and credit < count
               and float((entries[following][3] - entries[following][1]) - next_min_rank)
               <= delta):
            credit += size_hint
            following += 1
        read = read + 1 if read == following - 1 else following - 1
        kept.append(entries[read])
        last = read
        credit -= count
    if last + 1 != count:
        kept.append(entries[-1])
    return kept


def _approximation_error(entries):
    """The largest rank gap of `entries`, over their total weight."""
    if not entries:
        return 0.
    gap = _F(0)
    for previous, entry in zip(entries, entries[1:]):
        gap = max(gap, max(entry[3] - entry[2] - entry[1],
                           (entry[3] - entry[1]) - (previous[2] + previous[1])))
    return float(gap) / float(entries[-1][3])


def boundaries_of(entries, num_boundaries):
    """The bucket boundaries (float32 [<= num_boundaries + 1]) of a finished summary:
    compressed to `num_boundaries` with its own error plus 1 / num_boundaries, repeated
    values dropped."""
    if not entries:
        return np.zeros([0], _F)
    eps = float(_F(_approximation_error(entries) + 1. / num_boundaries))
    values = [entry[0] for entry in _compress(entries, num_boundaries, eps)]
    return np.array([value for value, _ in itertools.groupby(values)], _F)


class _Stream:
    """TF 1.15's weighted quantiles stream: summaries stacked in levels of `block` entries."""

    def __init__(self, eps, max_elements, levels=()):
        self._eps = eps
        self._block = _block_size(eps, max_elements)
        self._capacity = min(2 * self._block, max_elements)
        self.levels = list(levels)

    def push_values(self, values, weights):
        """Adds the elements of positive weight, a buffer of 2 blocks at a time."""
        kept = weights > 0
        values, weights = values[kept], weights[kept]
        for start in range(0, len(values), self._capacity):
            end = start + self._capacity
            self.push_summary(_from_values(values[start:end], weights[start:end]))

    def push_summary(self, entries):
        """Adds a summary, compressed to a block, to the lowest level that takes it."""
        entries = _compress(entries, self._block, self._eps)
        level = 0
        while entries:
            if len(self.levels) <= level:
                self.levels.append([])
            current = self.levels[level]
            entries = _merge(entries, current)
            if not current or len(entries) <= self._block + 1:
                self.levels[level] = entries
                return
            entries = _compress(entries, self._block, self._eps)
            self.levels[level] = []
            level += 1

    def finish(self):
        """The summary of everything added: the levels merged from the lowest."""
        merged = []
        for level in self.levels:
            merged = _merge(merged, level)
        return merged


def make_summary(values, weights, eps):
    """TF 1.15's BoostedTreesMakeQuantileSummaries for one feature: the summary of a batch
    (`values` float32 [batch], `weights` float32 [batch] or [1])."""
    weights = np.broadcast_to(weights, values.shape)
    stream = _Stream(float(_F(eps)), len(values) + 1)
    stream.push_values(values, weights)
    return stream.finish()


def _streams_of(state, num_streams, eps):
    """The accumulator's streams of its state (float32 [entries, 6]: stream, level, entry)."""
    streams = []
    for stream in range(num_streams):
        rows = state[state[:, _STREAM] == stream]
        depth = int(rows[:, _LEVEL].max()) + 1 if len(rows) else 0
        streams.append(_Stream(eps, _MAX_ELEMENTS, [
            [tuple(row[2:]) for row in rows[rows[:, _LEVEL] == level]]
            for level in range(depth)]))
    return streams


def _state_of(streams):
    rows = [(index, level) + tuple(entry) for index, stream in enumerate(streams)
            for level, entries in enumerate(stream.levels) for entry in entries]
    return np.array(rows, _F).reshape([-1, 6])


class _Saveable(_saving.SaveableObject):
    """The bucket boundaries in a checkpoint, under TF 1.15's names
    '<accumulator>:0_bucket_boundaries_<i>'; restoring them empties the streams."""

    def __init__(self, accumulator, name):
        specs = [_saving.SaveSpec(boundaries, '', '%s_bucket_boundaries_%d' % (name, index))
                 for index, boundaries in enumerate(accumulator.get_bucket_boundaries())]
        super().__init__(accumulator, specs, name)
        self._accumulator = accumulator

    def restore(self, restored_tensors, restored_shapes):
        return self._accumulator.set_bucket_boundaries(restored_tensors)


class QuantileAccumulator:
    """TF 1.15's `boosted_trees_ops.QuantileAccumulator`: `num_streams` weighted quantile
    streams of precision `epsilon` and the `num_quantiles` bucket boundaries of each, in
    variables (the streams' entries, and one vector of boundaries per stream), outside the
    global variables: checkpoints hold only the boundaries. `max_elements` is ignored, as
    TF 1.15 ignored it."""

    def __init__(self, epsilon, num_streams, num_quantiles, name=None, max_elements=None):
        self._eps = float(_F(epsilon))
        self._num_streams = num_streams
        self._num_quantiles = num_quantiles
        with tf.name_scope(name, 'QuantileAccumulator') as scope:
            self._state = self._variable(np.zeros([0, 6], _F), [None, 6], 'streams')
            self._boundaries = [self._variable(np.zeros([0], _F), [None], 'boundaries_%d' % i)
                                for i in range(num_streams)]
            variables = [self._state] + self._boundaries
            self.initializer = tf.group([variable.initializer for variable in variables])
            initialized = tf.reduce_all(tf.stack([variable.is_initialized()
                                                  for variable in variables]))
        _resources.register_resource(self._state.handle, self.initializer, initialized)
        tf.add_to_collection(tf.GraphKeys.SAVEABLE_OBJECTS,
                             _Saveable(self, scope.rstrip('/') + ':0'))

    @staticmethod
    def _variable(initial_value, shape, name):
        return tf.Variable(initial_value, trainable=False, collections=[], shape=shape,
                           validate_shape=False, name=name, use_resource=True)

    def add_summaries(self, float_columns, example_weights):
        """The op adding a batch (`float_columns`: one float32 [batch] per stream, weighed
        by `example_weights` [batch] or [1]) to the streams."""
        def add(state, weights, *columns):
            streams = _streams_of(state, self._num_streams, self._eps)
            for stream, values in zip(streams, columns):
                stream.push_summary(make_summary(values, weights, self._eps))
            return _state_of(streams)
        state = tf.numpy_function(add, [self._state.read_value(), example_weights]
                                  + list(float_columns), tf.float32,
                                  name='BoostedTreesQuantileStreamResourceAddSummaries')
        return self._state.assign(state).op

    def flush(self):
        """The op setting each stream's bucket boundaries from all it was added, then
        emptying the streams."""
        def boundaries(state):
            return [boundaries_of(stream.finish(), self._num_quantiles)
                    for stream in _streams_of(state, self._num_streams, self._eps)]
        found = tf.numpy_function(boundaries, [self._state.read_value()],
                                  [tf.float32] * self._num_streams,
                                  name='BoostedTreesQuantileStreamResourceFlush')
        with tf.control_dependencies(found):
            return self.set_bucket_boundaries(found)

    def get_bucket_boundaries(self):
        """The boundaries of each stream (float32 [<= num_quantiles + 1] each; empty before
        the first flush)."""
        return [boundaries.read_value() for boundaries in self._boundaries]

    def set_bucket_boundaries(self, boundaries):
        """The op replacing the boundaries (and emptying the streams, as a fresh accumulator
        of TF 1.15's would be)."""
        return tf.group([variable.assign(tf.reshape(values, [-1])).op
                         for variable, values in zip(self._boundaries, boundaries)]
                        + [self._state.assign(np.zeros([0, 6], _F)).op])


def boosted_trees_bucketize(float_values, bucket_boundaries, name=None):
    """The bucket (int32 [batch]) of each value of `float_values` (float [batch] each): the
    first of its `bucket_boundaries` at or above it, the last one above them all, 0 when
    there are none."""
    with tf.name_scope(name, 'BoostedTreesBucketize'):
        buckets = []
        for values, boundaries in zip(float_values, bucket_boundaries):
            found = tf.searchsorted(boundaries, values, side='left', out_type=tf.int32)
            last = tf.maximum(tf.size(boundaries, out_type=tf.int32) - 1, 0)
            buckets.append(tf.minimum(found, last))
        return buckets
