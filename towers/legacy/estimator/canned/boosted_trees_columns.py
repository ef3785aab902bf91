"""The inputs of TF 1.15's boosted trees: which feature columns they take and the features
(ids 0, 1, ...) each becomes, in the order of the columns' names.

    numeric_column('x', shape=(n,))           n float features, bucketized by the quantiles
    bucketized_column(numeric_column('x'))    1 feature: its bucket id
    indicator_column(categorical_column_...)  num_buckets features of 0/1 (one per category)

A categorical column must come wrapped in an indicator column; an embedding or other dense
column is refused.
"""
import collections

from towers.compat import internal, tf
from towers.legacy.estimator.canned import boosted_trees_kernels as _ops
from towers.legacy.estimator.spec import EstimatorError

_fc = internal('feature_column.feature_column_v2')
_fc_old = internal('feature_column.feature_column')
_INDICATOR = (_fc.IndicatorColumn, _fc_old._IndicatorColumn)
_BUCKETIZED = (_fc.BucketizedColumn, _fc_old._BucketizedColumn)
_DENSE = (_fc.DenseColumn, _fc_old._DenseColumn)
_CATEGORICAL = (_fc.CategoricalColumn, _fc_old._CategoricalColumn)


def _kind(column):
    """'indicator', 'bucketized' or 'numeric' (a float dense column)."""
    if isinstance(column, _INDICATOR):
        return 'indicator'
    if isinstance(column, _BUCKETIZED):
        return 'bucketized'
    if isinstance(column, _DENSE):
        dtype = getattr(column, 'dtype', None)
        if dtype is None or not tf.as_dtype(dtype).is_floating:
            raise EstimatorError('Boosted trees take float numeric, bucketized and indicator '
                                 'columns; got {}'.format(column))
        return 'numeric'
    if isinstance(column, _CATEGORICAL):
        raise EstimatorError('CategoricalColumn must be wrapped by IndicatorColumn, got: {}'
                             .format(column))
    raise EstimatorError('Got unexpected feature column type {}'.format(column))


def _width(column, kind):
    """How many features `column` (of `kind`) becomes."""
    if kind == 'indicator':
        return column.categorical_column.num_buckets
    if kind == 'bucketized':
        return 1
    shape = column.variable_shape
    if shape.rank > 1:
        raise EstimatorError('For now, we only support Dense column with rank of 1, but column '
                             '`{}` got: {}'.format(column.name, column.variable_shape))
    return shape[0] if shape.as_list() else 1


class Columns:
    """The feature columns of a boosted-trees estimator, sorted by name.

    Attributes:
      sorted: the columns, by name.
      numeric: the float numeric columns among them (bucketized by the quantile sketch).
      names: the column name of each feature id.
    """

    def __init__(self, feature_columns):
        self.sorted = sorted(feature_columns, key=lambda column: column.name)
        self._kinds = [_kind(column) for column in self.sorted]
        self._widths = [_width(column, kind) for column, kind in zip(self.sorted, self._kinds)]
        self.numeric = [column for column, kind in zip(self.sorted, self._kinds)
                        if kind == 'numeric']
        self.names = [column.categorical_column.name if kind == 'indicator' else column.name
                      for column, kind, width in zip(self.sorted, self._kinds, self._widths)
                      for _ in range(width)]

    @property
    def num_features(self):
        return len(self.names)

    @property
    def num_numeric_features(self):
        return sum(width for width, kind in zip(self._widths, self._kinds) if kind == 'numeric')

    def bucket_groups(self, num_quantiles):
        """([bucket count], [[feature id]]): the features grouped by their buckets, as TF 1.15
        grouped them: numeric ones (`num_quantiles` buckets) and indicators (2) in the order
        the columns first show each count, then the bucketized ones under the most buckets any
        of them has (at least 2), joining the group of that count if there is one."""
        groups = collections.OrderedDict([(None, [])])
        most = 2
        ids = iter(range(self.num_features))
        for column, kind, width in zip(self.sorted, self._kinds, self._widths):
            features = [next(ids) for _ in range(width)]
            if kind == 'bucketized':
                most = max(most, len(column.boundaries) + 1)
                groups[None] += features
            else:
                groups.setdefault(num_quantiles if kind == 'numeric' else 2, []).extend(features)
        bucketized = groups.pop(None)
        if bucketized or most in groups:
            groups.setdefault(most, []).extend(bucketized)
        return list(groups), list(groups.values())

    def boundaries_by_column(self, boundaries):
        """{numeric column name: its features' bucket boundaries} of `boundaries`, the
        quantile sketch's per numeric feature."""
        per_column, start = {}, 0
        for column in self.numeric:
            width = _width(column, 'numeric')
            per_column[column.name] = boundaries[start:start + width]
            start += width
        return per_column

    def features(self, features, boundaries=None, columns=None, transformed=None):
        """The features of every column, [batch] each (int32 bucket ids; numeric ones floats
        unless `boundaries` bucketize them).

        Args:
          features: the input_fn's dict.
          boundaries: `boundaries_by_column`'s dict, or None.
          columns: the columns to transform (default: all); the others' transformed values
            come from `transformed`.
          transformed: {column: transformed tensor} made before (`transform`).
        """
        values = dict(transformed or {})
        values.update(transform(features, self.sorted if columns is None else columns))
        result = []
        for column, kind in zip(self.sorted, self._kinds):
            value = values[column]
            if kind == 'bucketized':
                result.append(tf.squeeze(value, axis=1))
            elif kind == 'indicator':
                result.extend(tf.unstack(tf.cast(value, tf.int32), axis=1))
            elif boundaries:
                result.extend(_ops.boosted_trees_bucketize(tf.unstack(value, axis=1),
                                                          boundaries[column.name]))
            else:
                result.extend(tf.unstack(value, axis=1))
        return result

    def numeric_values(self, features):
        """The numeric columns' features [batch] as floats (what the quantiles sketch)."""
        values = transform(features, self.numeric)
        return [value for column in self.numeric for value in tf.unstack(values[column], axis=1)]

    def split(self):
        """(indicator columns, the others)."""
        return ([column for column, kind in zip(self.sorted, self._kinds) if kind == 'indicator'],
                [column for column, kind in zip(self.sorted, self._kinds) if kind != 'indicator'])


def transform(features, columns):
    """{column: its transformed tensor} of `columns` over the input_fn's `features`."""
    if not columns:
        return {}
    return _fc._transform_features_v2(features, columns,
                                      _fc._StateManagerImpl(layer=None, trainable=False))


def weights(features, weight_column):
    """The examples' weights [batch] of `weight_column` (a key or a numeric column), or
    [1.] without one."""
    if weight_column is None:
        return tf.constant(1., shape=[1])
    if isinstance(weight_column, str):
        weight_column = tf.feature_column.numeric_column(key=weight_column, shape=(1,))
    return tf.unstack(transform(features, [weight_column])[weight_column], axis=1)[0]
