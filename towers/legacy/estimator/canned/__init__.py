"""TF 1.15's canned estimators (`tf.compat.v1.estimator`'s v1 classes) over `tf.feature_column`.

    classifier = tf.estimator.DNNClassifier(hidden_units=[10, 10], feature_columns=columns,
                                            n_classes=3, model_dir='/tmp/iris')
    classifier.train(input_fn=tf.estimator.inputs.numpy_input_fn(x, y, shuffle=True,
                                                                  num_epochs=None), steps=1000)
    classifier.evaluate(input_fn=...)   # {'accuracy': ..., 'average_loss': ..., 'loss': ...}

One module per family (`dnn`, `linear`, `dnn_linear_combined`, `baseline`), each a model_fn and
its classifier and regressor; `head` turns logits into the `EstimatorSpec` of each mode, with
`metrics` the evaluation metrics; `keys` names the predictions, metrics and signatures;
`optimizers` reads the `optimizer` arguments; `model_fn` holds what the model_fns share;
`parsing` gives the `tf.parse_example` spec of an estimator's features, label and weight.
"""
from towers.legacy.estimator.canned.baseline import BaselineClassifier, BaselineRegressor
from towers.legacy.estimator.canned.dnn import DNNClassifier, DNNRegressor
from towers.legacy.estimator.canned.dnn_linear_combined import (DNNLinearCombinedClassifier,
                                                                DNNLinearCombinedRegressor)
from towers.legacy.estimator.canned.keys import MetricKeys, PredictionKeys
from towers.legacy.estimator.canned.linear import LinearClassifier, LinearRegressor
from towers.legacy.estimator.canned.parsing import (classifier_parse_example_spec,
                                                    regressor_parse_example_spec)

__all__ = ['BaselineClassifier', 'BaselineRegressor', 'DNNClassifier', 'DNNRegressor',
           'DNNLinearCombinedClassifier', 'DNNLinearCombinedRegressor', 'LinearClassifier',
           'LinearRegressor', 'MetricKeys', 'PredictionKeys', 'classifier_parse_example_spec',
           'regressor_parse_example_spec']
