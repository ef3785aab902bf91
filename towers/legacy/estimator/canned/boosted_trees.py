"""TF 1.15's `tf.estimator.BoostedTreesClassifier`, `BoostedTreesRegressor` and
`BoostedTreesEstimator`, and `tf.contrib.estimator`'s `boosted_trees_classifier_train_in_memory`
and `boosted_trees_regressor_train_in_memory`: gradient-boosted trees grown layer by layer on
TensorFlow's BoostedTrees kernels, over numeric, bucketized and indicator feature columns.

    classifier = tf.estimator.BoostedTreesClassifier(columns, n_batches_per_layer=1,
                                                     n_trees=50, max_depth=4)
    classifier.train(input_fn)           # ends once n_trees trees are grown
    classifier.evaluate(eval_input_fn)   # {'accuracy': ..., 'auc': ..., ...}
    classifier.experimental_feature_importances(normalize=True)   # {column: importance}

`boosted_trees_model` holds the model_fn, `boosted_trees_growing` the growing of the ensemble,
`boosted_trees_columns` the columns taken, `boosted_trees_explain` the importances and the
directional feature contributions. Checkpoints hold TF 1.15's names: the ensemble as
'boosted_trees:0_stamp' and 'boosted_trees:0_serialized', the quantile boundaries as
'boosted_trees/QuantileAccumulator:0_bucket_boundaries_<i>', the variables
'boosted_trees/are_boundaries_ready' and 'boosted_trees/center_bias_needed', and, training in
memory, 'boosted_trees/{tree_ids,node_ids,logits}_cache' and 'boosted_trees/cached_feature_<i>'.

TensorFlow 2.21 ships the BoostedTrees ops' definitions without their kernels;
`boosted_trees_kernels` (with `boosted_trees_prediction` and `boosted_trees_quantiles`) stands in
for them, growing TF 1.15.5's trees to the bit, with `center_bias` and pre- or post-pruning, and
giving its explanations' bias and contributions.
"""
from towers.compat import tf
from towers.legacy.estimator.canned import boosted_trees_explain as explain
from towers.legacy.estimator.canned import boosted_trees_kernels as _ops
from towers.legacy.estimator.canned import boosted_trees_model as model
from towers.legacy.estimator.canned import head as head_lib
from towers.legacy.estimator.estimator import Estimator
from towers.legacy.estimator.spec import EstimatorError, ModeKeys

# n_classes and label_dimension not given (TF 1.15 took only 2 and 1).
_DEFAULT = object()
_DEBUG_KEY = '_serialized_debug_outputs_proto'


class _BoostedTreesBase(Estimator):
    """A boosted-trees Estimator of `model_fn` (made by `bt_model_fn`), with the ensemble's
    feature importances and per-example explanations."""

    def __init__(self, model_fn, model_dir, config, columns, head, center_bias,
                 is_classification, quantile_sketch_epsilon):
        super().__init__(model_fn=model_fn, model_dir=model_dir, config=config)
        self._columns = columns
        self._head = head
        self._center_bias = center_bias
        self._is_classification = is_classification
        self._quantile_sketch_epsilon = quantile_sketch_epsilon

    def experimental_feature_importances(self, normalize=False):
        """OrderedDict column name -> its gain-based importance in the newest checkpoint, the
        most important first (summing to 1 with `normalize`)."""
        serialized = tf.train.load_variable(self._require_checkpoint(),
                                            'boosted_trees:0_serialized')
        return explain.feature_importances(serialized, self._columns.names, normalize)

    def experimental_predict_with_explanations(self, input_fn, predict_keys=None, hooks=None,
                                               checkpoint_path=None):
        """Yields `predict`'s dict of each example with 'bias' (the prediction of the bias
        alone: a probability for a classifier) and 'dfc' (OrderedDict column -> how far its
        splits moved the prediction, largest magnitude first).

        Raises:
          EstimatorError: the model was made without center_bias.
        """
        if not self._center_bias:
            raise EstimatorError('center_bias must be enabled during estimator instantiation '
                                 'when using experimental_predict_with_explanations.')
        if not self._is_classification and type(self._head) is not head_lib.RegressionHead:
            raise EstimatorError('For now only identity inverse_link_fn in regression_head is '
                                 'supported for experimental_predict_with_explanations.')

        def explained_model_fn(features, labels, mode):
            with tf.name_scope('boosted_trees') as name:
                logits, ensemble, inputs = model.logits_of(
                    features, self._head, self._columns, self._quantile_sketch_epsilon, name)
                spec = self._head.create_estimator_spec(features=features,
                                                        mode=ModeKeys.PREDICT, logits=logits)
                debug = _ops.example_debug_outputs(
                    ensemble.resource_handle, bucketized_features=inputs,
                    logits_dimension=self._head.logits_dimension)
            return spec._replace(predictions=dict(spec.predictions, **{_DEBUG_KEY: debug}))

        explained = Estimator(explained_model_fn, model_dir=self.model_dir, config=self.config,
                              warm_start_from=self._warm_start_settings)
        if predict_keys is not None:
            predict_keys = set(predict_keys) | {_DEBUG_KEY}
        for prediction in explained.predict(input_fn, predict_keys, hooks, checkpoint_path):
            prediction['bias'], prediction['dfc'] = explain.contributions(
                prediction.pop(_DEBUG_KEY), self._columns.names, self._is_classification)
            yield prediction


def _classifier_head(n_classes, weight_column, label_vocabulary, pruning_mode):
    if n_classes is _DEFAULT:
        n_classes = 2
    elif n_classes > 2 and pruning_mode is not None:
        raise EstimatorError('For now pruning is not supported with multi class.')
    return model.classification_head(n_classes, weight_column, label_vocabulary)


def _regressor_head(label_dimension, weight_column, pruning_mode):
    if label_dimension is _DEFAULT:
        label_dimension = 1
    elif label_dimension > 1 and pruning_mode is not None:
        raise EstimatorError('For now pruning is not supported with multi-dimensionregression.')
    return model.regression_head(label_dimension, weight_column)


class BoostedTreesClassifier(_BoostedTreesBase):
    """TF 1.15's `tf.estimator.BoostedTreesClassifier`: boosted trees of two classes (one logit
    per example, the logistic loss's mean over the batch).

    Args:
      feature_columns: numeric (float), bucketized and indicator columns.
      n_batches_per_layer: the batches whose statistics grow each layer (and sketch the
        quantiles, and centre the bias).
      model_dir, config: as `Estimator`'s.
      n_classes: 2 (the only count TF 1.15 took).
      weight_column: a key or a numeric column weighing each example's loss (and quantiles).
      label_vocabulary: the names of the two classes, when the labels are strings.
      n_trees: the trees to grow; training ends with the last.
      max_depth: the layers of each tree.
      learning_rate: the shrinkage of each new layer's leaves.
      l1_regularization, l2_regularization: of the leaves' weights.
      tree_complexity: the gain a split must exceed per new leaf (only with pruning).
      min_node_weight: the least hessian a node needs to be split.
      center_bias: start the first tree at the prior's logit, from `n_batches_per_layer`
        batches, before growing.
      pruning_mode: 'none', 'pre' (no split without gain) or 'post' (prune after growing).
      quantile_sketch_epsilon: the quantile sketch's error; numeric features get
        int(1 / epsilon) buckets.
      train_in_memory: each batch of the input_fn is the whole data set (n_batches_per_layer
        1, no cluster).
    """

    def __init__(self, feature_columns, n_batches_per_layer, model_dir=None, n_classes=_DEFAULT,
                 weight_column=None, label_vocabulary=None, n_trees=100, max_depth=6,
                 learning_rate=0.1, l1_regularization=0., l2_regularization=0.,
                 tree_complexity=0., min_node_weight=0., config=None, center_bias=False,
                 pruning_mode='none', quantile_sketch_epsilon=0.01, train_in_memory=False):
        head, closed_form = _classifier_head(n_classes, weight_column, label_vocabulary,
                                             pruning_mode)
        hparams = model.TreeHParams(n_trees, max_depth, learning_rate, l1_regularization,
                                    l2_regularization, tree_complexity, min_node_weight,
                                    center_bias, pruning_mode, quantile_sketch_epsilon)
        model_fn, columns = model.estimator_args(head, feature_columns, n_batches_per_layer,
                                                 hparams, closed_form, weight_column,
                                                 train_in_memory)
        super().__init__(model_fn, model_dir, config, columns, head, center_bias, True,
                         quantile_sketch_epsilon)


class BoostedTreesRegressor(_BoostedTreesBase):
    """TF 1.15's `tf.estimator.BoostedTreesRegressor`: boosted trees of one float per example
    (the squared error's mean over the batch); `label_dimension` 1, the other arguments as
    `BoostedTreesClassifier`'s."""

    def __init__(self, feature_columns, n_batches_per_layer, model_dir=None,
                 label_dimension=_DEFAULT, weight_column=None, n_trees=100, max_depth=6,
                 learning_rate=0.1, l1_regularization=0., l2_regularization=0.,
                 tree_complexity=0., min_node_weight=0., config=None, center_bias=False,
                 pruning_mode='none', quantile_sketch_epsilon=0.01, train_in_memory=False):
        head = _regressor_head(label_dimension, weight_column, pruning_mode)
        hparams = model.TreeHParams(n_trees, max_depth, learning_rate, l1_regularization,
                                    l2_regularization, tree_complexity, min_node_weight,
                                    center_bias, pruning_mode, quantile_sketch_epsilon)
        model_fn, columns = model.estimator_args(head, feature_columns, n_batches_per_layer,
                                                 hparams, None, weight_column, train_in_memory)
        super().__init__(model_fn, model_dir, config, columns, head, center_bias, False,
                         quantile_sketch_epsilon)


class BoostedTreesEstimator(_BoostedTreesBase):
    """TF 1.15's `tf.estimator.BoostedTreesEstimator`: boosted trees of a `head` of the
    caller's, its loss's gradients and hessians by `tf.gradients` (the weight column, as in TF
    1.15, is the head's alone); the other arguments as `BoostedTreesClassifier`'s."""

    def __init__(self, feature_columns, n_batches_per_layer, head, model_dir=None,
                 weight_column=None, n_trees=100, max_depth=6, learning_rate=0.1,
                 l1_regularization=0., l2_regularization=0., tree_complexity=0.,
                 min_node_weight=0., config=None, center_bias=False, pruning_mode='none',
                 quantile_sketch_epsilon=0.01):
        hparams = model.TreeHParams(n_trees, max_depth, learning_rate, l1_regularization,
                                    l2_regularization, tree_complexity, min_node_weight,
                                    center_bias, pruning_mode, quantile_sketch_epsilon)
        model_fn, columns = model.estimator_args(head, feature_columns, n_batches_per_layer,
                                                 hparams)
        super().__init__(model_fn, model_dir, config, columns, head, center_bias,
                         isinstance(head, head_lib.BinaryClassHead), quantile_sketch_epsilon)


def _trained_in_memory(head, closed_form, train_input_fn, feature_columns, model_dir, config,
                       train_hooks, hparams, is_classification):
    """A boosted-trees Estimator trained on `train_input_fn`'s one batch (the whole data set,
    repeated) until its trees are grown."""
    model_fn, columns = model.estimator_args(head, feature_columns, 1, hparams, closed_form,
                                             train_in_memory=True)
    estimator = _BoostedTreesBase(model_fn, model_dir, config, columns, head,
                                  hparams.center_bias, is_classification,
                                  hparams.quantile_sketch_epsilon)

    def repeated_input_fn():
        data = train_input_fn()
        return data.repeat() if isinstance(data, tf.data.Dataset) else data
    return estimator.train(repeated_input_fn, hooks=train_hooks)


def boosted_trees_classifier_train_in_memory(
        train_input_fn, feature_columns, model_dir=None, n_classes=_DEFAULT,
        weight_column=None, label_vocabulary=None, n_trees=100, max_depth=6, learning_rate=0.1,
        l1_regularization=0., l2_regularization=0., tree_complexity=0., min_node_weight=0.,
        config=None, train_hooks=None, center_bias=False, pruning_mode='none',
        quantile_sketch_epsilon=0.01):
    """TF 1.15's `tf.contrib.estimator.boosted_trees_classifier_train_in_memory`: a
    `BoostedTreesClassifier`'s model trained in memory on `train_input_fn` (one unbatched
    Dataset element: the whole data set) and returned; `train_hooks` run while it trains, the
    other arguments are the classifier's (`weight_column` weighs the loss only, as in TF
    1.15)."""
    head, closed_form = _classifier_head(n_classes, weight_column, label_vocabulary, None)
    return _trained_in_memory(head, closed_form, train_input_fn, feature_columns, model_dir,
                              config, train_hooks, model.TreeHParams(
                                  n_trees, max_depth, learning_rate, l1_regularization,
                                  l2_regularization, tree_complexity, min_node_weight,
                                  center_bias, pruning_mode, quantile_sketch_epsilon), True)


def boosted_trees_regressor_train_in_memory(
        train_input_fn, feature_columns, model_dir=None, label_dimension=_DEFAULT,
        weight_column=None, n_trees=100, max_depth=6, learning_rate=0.1, l1_regularization=0.,
        l2_regularization=0., tree_complexity=0., min_node_weight=0., config=None,
        train_hooks=None, center_bias=False, pruning_mode='none', quantile_sketch_epsilon=0.01):
    """TF 1.15's `tf.contrib.estimator.boosted_trees_regressor_train_in_memory`: as
    `boosted_trees_classifier_train_in_memory`, a `BoostedTreesRegressor`'s model."""
    head = _regressor_head(label_dimension, weight_column, None)
    return _trained_in_memory(head, None, train_input_fn, feature_columns, model_dir, config,
                              train_hooks, model.TreeHParams(
                                  n_trees, max_depth, learning_rate, l1_regularization,
                                  l2_regularization, tree_complexity, min_node_weight,
                                  center_bias, pruning_mode, quantile_sketch_epsilon), False)
