"""TF 1.15's `tf.estimator.classifier_parse_example_spec` and `regressor_parse_example_spec`:
the `tf.parse_example` spec of a canned estimator's features, label and weight, read from the
same `tf.Example`s.

    spec = tf.estimator.classifier_parse_example_spec(columns, label_key='clicked',
                                                      weight_column='weight')
    # {<the columns' specs>..., 'clicked': FixedLenFeature((1,), tf.int64),
    #  'weight': FixedLenFeature((1,), tf.float32)}
"""
from towers.compat import tf
from towers.legacy.estimator.canned.head import as_weight_column
from towers.legacy.estimator.spec import EstimatorError


def classifier_parse_example_spec(feature_columns, label_key, label_dtype=tf.int64,
                                  label_default=None, weight_column=None):
    """The parsing spec of `feature_columns`, a label [1] of `label_dtype` (tf.string with a
    label_vocabulary) under `label_key`, and the weight column's.

    Raises:
      EstimatorError: the label or the weight is also a feature; a weight_column that is not a
        key or a numeric column.
    """
    return _with_label_and_weight(
        tf.feature_column.make_parse_example_spec(feature_columns), label_key,
        tf.FixedLenFeature((1,), label_dtype, label_default), weight_column)


def regressor_parse_example_spec(feature_columns, label_key, label_dtype=tf.float32,
                                 label_default=None, label_dimension=1, weight_column=None):
    """As `classifier_parse_example_spec`, with a label [label_dimension] of floats."""
    return _with_label_and_weight(
        tf.feature_column.make_parse_example_spec(feature_columns), label_key,
        tf.FixedLenFeature((label_dimension,), label_dtype, label_default), weight_column)


def _with_label_and_weight(spec, label_key, label_spec, weight_column):
    if label_key in spec:
        raise EstimatorError('label should not be used as feature. label_key: %s, features: %s'
                             % (label_key, sorted(spec)))
    spec[label_key] = label_spec
    weight_column = as_weight_column(weight_column)
    if weight_column is not None:
        if weight_column.key in spec:
            raise EstimatorError('weight_column should not be used as feature. weight_column: '
                                 '%s, features: %s' % (weight_column.key, sorted(spec)))
        spec.update(weight_column.parse_example_spec)
    return spec
