"""TF 2.15's canned estimators and heads, the V2 classes `--tf2` gives as `tf.estimator.X`
(`tf.compat.v1.estimator.X` stays TF 1.15's): each family's module holds its V1 and V2
classes on the same model code; `head_v2` TF 2's heads on TF 1's; `optimizers` the Keras
optimizers by name.

    classifier = DNNClassifierV2(hidden_units=[10], feature_columns=columns, n_classes=3,
                                 optimizer='Adam')   # tf.keras.optimizers.legacy.Adam()
    classifier.evaluate(input_fn)   # 'loss' is the mean per example, as 'average_loss'
"""
from towers.legacy.estimator.canned.baseline import (BaselineClassifierV2, BaselineEstimatorV2,
                                                    BaselineRegressorV2)
from towers.legacy.estimator.canned.dnn import DNNClassifierV2, DNNEstimatorV2, DNNRegressorV2
from towers.legacy.estimator.canned.dnn_linear_combined import (
    DNNLinearCombinedClassifierV2, DNNLinearCombinedEstimatorV2, DNNLinearCombinedRegressorV2)
from towers.legacy.estimator.canned.head_v2 import (BinaryClassHead, Head,
                                                    LogisticRegressionHead, MultiClassHead,
                                                    PoissonRegressionHead, RegressionHead)
from towers.legacy.estimator.canned.linear import (LinearClassifierV2, LinearEstimatorV2,
                                                   LinearRegressorV2)
from towers.legacy.estimator.canned.optimizers import get_optimizer_instance_v2

__all__ = ['BaselineClassifierV2', 'BaselineEstimatorV2', 'BaselineRegressorV2',
           'BinaryClassHead', 'DNNClassifierV2', 'DNNEstimatorV2', 'DNNLinearCombinedClassifierV2',
           'DNNLinearCombinedEstimatorV2', 'DNNLinearCombinedRegressorV2', 'DNNRegressorV2',
           'Head', 'LinearClassifierV2', 'LinearEstimatorV2', 'LinearRegressorV2',
           'LogisticRegressionHead', 'MultiClassHead', 'PoissonRegressionHead',
           'RegressionHead', 'get_optimizer_instance_v2']
