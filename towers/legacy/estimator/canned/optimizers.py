"""The `optimizer` argument of the canned estimators: a name, an optimizer, or a function that
makes one (called in each new graph, so that its slots live there).

TF 1.15's v1 classes take `tf.train.Optimizer`s (`get_optimizer_instance`); TF 2.15's V2
classes take Keras' legacy optimizers, `tf.keras.optimizers.legacy.*` of Keras 2
(`get_optimizer_instance_v2`), whose variables a checkpoint names
'training/<Optimizer>/<variable>/<slot>' and 'training/<Optimizer>/<hyperparameter>'.
"""
from towers.compat import keras, tf
from towers.legacy.estimator.spec import EstimatorError

OPTIMIZERS_BY_NAME = {
    'Adagrad': tf.train.AdagradOptimizer,
    'Adam': tf.train.AdamOptimizer,
    'Ftrl': tf.train.FtrlOptimizer,
    'RMSProp': tf.train.RMSPropOptimizer,
    'SGD': tf.train.GradientDescentOptimizer,
}

OPTIMIZERS_V2_BY_NAME = {
    'Adagrad': keras.optimizers.legacy.Adagrad,
    'Adam': keras.optimizers.legacy.Adam,
    'Ftrl': keras.optimizers.legacy.Ftrl,
    'RMSProp': keras.optimizers.legacy.RMSprop,
    'SGD': keras.optimizers.legacy.SGD,
}


def get_optimizer_instance(optimizer, learning_rate):
    """A `tf.train.Optimizer` from a v1 canned estimator's `optimizer` argument.

    Args:
      optimizer: 'Adagrad', 'Adam', 'Ftrl', 'RMSProp' or 'SGD' (made with `learning_rate`), a
        `tf.train.Optimizer`, or a callable returning one.
      learning_rate: float, the estimator's default for a name.

    Raises:
      EstimatorError: an unknown name, or something that is not (and does not make) a
        `tf.train.Optimizer`.
    """
    return _instance(optimizer, OPTIMIZERS_BY_NAME,
                     lambda cls: cls(learning_rate=learning_rate), tf.train.Optimizer,
                     'a tf.train.Optimizer')


def get_optimizer_instance_v2(optimizer, learning_rate=None):
    """A Keras legacy optimizer from a V2 canned estimator's `optimizer` argument, as TF 2.15's
    `optimizers.get_optimizer_instance_v2`.

    Args:
      optimizer: 'Adagrad', 'Adam', 'Ftrl', 'RMSProp' or 'SGD', a
        `tf.keras.optimizers.legacy.Optimizer`, or a callable returning one.
      learning_rate: float for a name, or None: the Keras class's own default (0.001; SGD's
        0.01).

    Raises:
      EstimatorError: an unknown name; one of Keras' new optimizers (the Estimator builds a
        graph, which only the legacy ones can step); anything else.
    """
    def make(cls):
        return cls(learning_rate=learning_rate) if learning_rate else cls()
    legacy = keras.optimizers.legacy.Optimizer
    optimizer = _instance(optimizer, OPTIMIZERS_V2_BY_NAME, make,
                          (legacy, keras.optimizers.Optimizer),
                          'a tf.keras.optimizers.Optimizer')
    if not isinstance(optimizer, legacy):
        raise EstimatorError(
            'Please set your optimizer as an instance of `tf.keras.optimizers.legacy.Optimizer`, '
            'e.g., `tf.keras.optimizers.legacy.%s`. Received optimizer type: %s.'
            % (type(optimizer).__name__, type(optimizer)))
    return optimizer


def _instance(optimizer, by_name, make, expected, expected_words):
    """`make(by_name[optimizer])` for a name, else the optimizer (or what the callable gives),
    checked to be an instance of `expected`."""
    if isinstance(optimizer, str):
        if optimizer not in by_name:
            raise EstimatorError('Unsupported optimizer name: %s. Supported names are: %s'
                                 % (optimizer, ', '.join(sorted(by_name))))
        return make(by_name[optimizer])
    if callable(optimizer):
        optimizer = optimizer()
    if not isinstance(optimizer, expected):
        raise EstimatorError('optimizer must be a name (%s), %s or a function returning one; '
                             'got %r' % (', '.join(sorted(by_name)), expected_words, optimizer))
    return optimizer
