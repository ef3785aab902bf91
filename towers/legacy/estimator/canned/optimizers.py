"""The `optimizer` argument of the canned estimators, as TF 1.15 read it: a name, an optimizer,
or a function that makes one (called in each new graph, so that its slots live there)."""
from towers.compat import tf
from towers.legacy.estimator.spec import EstimatorError

OPTIMIZERS_BY_NAME = {
    'Adagrad': tf.train.AdagradOptimizer,
    'Adam': tf.train.AdamOptimizer,
    'Ftrl': tf.train.FtrlOptimizer,
    'RMSProp': tf.train.RMSPropOptimizer,
    'SGD': tf.train.GradientDescentOptimizer,
}


def get_optimizer_instance(optimizer, learning_rate):
    """A `tf.train.Optimizer` from a canned estimator's `optimizer` argument.

    Args:
      optimizer: 'Adagrad', 'Adam', 'Ftrl', 'RMSProp' or 'SGD' (made with `learning_rate`), a
        `tf.train.Optimizer`, or a callable returning one.
      learning_rate: float, the estimator's default for a name.

    Raises:
      EstimatorError: an unknown name, or something that is not (and does not make) a
        `tf.train.Optimizer`.
    """
    if isinstance(optimizer, str):
        if optimizer not in OPTIMIZERS_BY_NAME:
            raise EstimatorError('Unsupported optimizer name: %s. Supported names are: %s'
                                 % (optimizer, ', '.join(sorted(OPTIMIZERS_BY_NAME))))
        return OPTIMIZERS_BY_NAME[optimizer](learning_rate=learning_rate)
    if callable(optimizer):
        optimizer = optimizer()
    if not isinstance(optimizer, tf.train.Optimizer):
        raise EstimatorError('optimizer must be a name (%s), a tf.train.Optimizer or a function '
                             'returning one; got %r' % (', '.join(sorted(OPTIMIZERS_BY_NAME)),
                                                        optimizer))
    return optimizer
