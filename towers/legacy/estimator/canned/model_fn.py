"""What the canned model_fns share: the Estimator-facing model_fn around one, the features check,
TF 1.15's variable partitioners, and the summaries of a layer's output."""
from towers.compat import tf
from towers.legacy.estimator.spec import EstimatorError

# Input layers (embeddings, linear weights) were split across the parameter servers only above
# 64 MiB a slice, hidden layers as finely as there are parameter servers.
INPUT_LAYER_MIN_SLICE_SIZE = 64 << 20


def estimator_model_fn(model_fn, **settings):
    """The model_fn an Estimator calls: (features, labels, mode, config) -> `model_fn(features,
    labels, mode, config=config, **settings)`."""
    def canned_model_fn(features, labels, mode, config):
        return model_fn(features, labels, mode, config=config, **settings)
    return canned_model_fn


def checked_features(features, estimator):
    """`features` if it is a dict of tensors, as the canned estimators need."""
    if not isinstance(features, dict):
        raise EstimatorError('%s: features should be a dictionary of `Tensor`s (the first thing '
                             'the input_fn returns), got %s' % (estimator,
                                                               type(features).__name__))
    return features


def num_ps_replicas(config):
    return config.num_ps_replicas if config else 0


def hidden_layer_partitioner(config):
    """Hidden layers' variables split across the parameter servers (one part without any)."""
    return tf.min_max_variable_partitioner(max_partitions=num_ps_replicas(config))


def input_layer_partitioner(config, partitioner=None):
    """`partitioner`, or else the input layer's: slices of 64 MiB or more."""
    return partitioner or tf.min_max_variable_partitioner(
        max_partitions=num_ps_replicas(config), min_slice_size=INPUT_LAYER_MIN_SLICE_SIZE)


def layer_summary(value, tag):
    """'<tag>/fraction_of_zero_values' and '<tag>/activation', as TF 1.15 wrote for each layer
    (under the current name scope, so the DNN's read 'dnn/dnn/hiddenlayer_0/...')."""
    tf.summary.scalar('%s/fraction_of_zero_values' % tag, tf.nn.zero_fraction(value))
    tf.summary.histogram('%s/activation' % tag, value)
