"""What the canned model_fns share: the Estimator-facing model_fn around one, the features check,
TF 1.15's variable partitioners, the summaries of a layer's output, and how TF 2.15's V2
classes differ: resource variables, unpartitioned, and a Keras optimizer stepping the global step.
"""
from towers.compat import tf
from towers.legacy.estimator.canned.optimizers import get_optimizer_instance_v2
from towers.legacy.estimator.spec import EstimatorError, ModeKeys

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


def v1_variable_scope(name, features, partitioner):
    """The variable scope `name` of a v1 canned estimator's model, partitioned by `partitioner`:
    resource variables (and so slots), as TF 1.15's Keras-layered models made them, beside a
    global step that is not."""
    return tf.variable_scope(name, values=tuple(features.values()), use_resource=True,
                             partitioner=partitioner)


def v2_variable_scope(name, features):
    """The variable scope `name` of a V2 estimator's model: resource variables, as TF 2's, and
    no partitioner (the variables a TF 2.15 checkpoint holds)."""
    return tf.variable_scope(name, values=tuple(features.values()), use_resource=True)


def v2_trainable_variables(*scope_names):
    """The trainable variables made under these variable scopes."""
    return [variable for name in scope_names
            for variable in tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES, name + '/')]


def v2_optimizer(optimizer, learning_rate=None, steps_global_step=True):
    """The Keras optimizer of a V2 estimator's `optimizer` (`learning_rate` for a name, None:
    Keras' default); its `iterations` are the global step unless `steps_global_step` is False
    (then its own 'training/<Optimizer>/iter')."""
    optimizer = get_optimizer_instance_v2(optimizer, learning_rate)
    if steps_global_step:
        optimizer.iterations = tf.train.get_or_create_global_step()
    return optimizer


def v2_estimator_spec(head, features, mode, logits, labels, optimizer, learning_rate,
                      scope_name):
    """`head`'s spec for the logits of the model under `scope_name`, trained in TRAIN by the
    Keras optimizer of `optimizer` on its trainable variables, with its update ops."""
    return head.create_estimator_spec(
        features=features, mode=mode, logits=logits, labels=labels,
        optimizer=(v2_optimizer(optimizer, learning_rate) if mode == ModeKeys.TRAIN
                   else None),
        trainable_variables=v2_trainable_variables(scope_name),
        update_ops=tf.get_collection(tf.GraphKeys.UPDATE_OPS, scope_name + '/'))
