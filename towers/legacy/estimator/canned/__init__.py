"""TF 1.15's canned estimators (`tf.compat.v1.estimator`'s v1 classes) over `tf.feature_column`.

    classifier = tf.estimator.DNNClassifier(hidden_units=[10, 10], feature_columns=columns,
                                            n_classes=3, model_dir='/tmp/iris')
    classifier.train(input_fn=tf.estimator.inputs.numpy_input_fn(x, y, shuffle=True,
                                                                  num_epochs=None), steps=1000)
    classifier.evaluate(input_fn=...)   # {'accuracy': ..., 'average_loss': ..., 'loss': ...}

One module per family (`dnn`, `linear`, `dnn_linear_combined`, `baseline`; `boosted_trees` and its
`boosted_trees_*` modules, on stand-ins of TensorFlow's missing kernels), each a model_fn, an
estimator of a given head, and its classifier and regressor; `head` turns logits into the
`EstimatorSpec` of each mode, with `metrics` the evaluation metrics; `keys` names the
predictions, metrics and signatures; `optimizers` reads the `optimizer` arguments; `model_fn`
holds what the model_fns share; `parsing` gives the `tf.parse_example` spec of an estimator's
features, label and weight. The package's names are those of TF 1.15's `canned.*` modules.
"""
from towers.legacy.estimator.canned.baseline import (BaselineClassifier, BaselineEstimator,
                                                    BaselineRegressor)
from towers.legacy.estimator.canned.boosted_trees import (BoostedTreesClassifier,
                                                         BoostedTreesRegressor)
from towers.legacy.estimator.canned.dnn import DNNClassifier, DNNEstimator, DNNRegressor
from towers.legacy.estimator.canned.dnn_linear_combined import (DNNLinearCombinedClassifier,
                                                                DNNLinearCombinedEstimator,
                                                                DNNLinearCombinedRegressor)
from towers.legacy.estimator.canned.head import LossSpec
from towers.legacy.estimator.canned.keys import MetricKeys, PredictionKeys
from towers.legacy.estimator.canned.linear import (LinearClassifier, LinearEstimator,
                                                   LinearRegressor)
from towers.legacy.estimator.canned.optimizers import get_optimizer_instance
from towers.legacy.estimator.canned.parsing import (classifier_parse_example_spec,
                                                    regressor_parse_example_spec)

__all__ = ['BaselineClassifier', 'BaselineEstimator', 'BaselineRegressor',
           'BoostedTreesClassifier', 'BoostedTreesRegressor', 'DNNClassifier',
           'DNNEstimator', 'DNNRegressor', 'DNNLinearCombinedClassifier',
           'DNNLinearCombinedEstimator', 'DNNLinearCombinedRegressor', 'LinearClassifier',
           'LinearEstimator', 'LinearRegressor', 'LossSpec', 'MetricKeys', 'PredictionKeys',
           'classifier_parse_example_spec', 'get_optimizer_instance',
           'regressor_parse_example_spec']
