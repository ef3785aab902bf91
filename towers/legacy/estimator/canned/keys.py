"""The names the canned estimators give their outputs, TF 1.15's: the keys of `predict`'s dicts
(`PredictionKeys`), of `evaluate`'s dict and the training summaries (`MetricKeys`), and of the
SavedModel's signatures (`SignatureKeys`).
"""


class PredictionKeys:
    """Keys of the dict `predict` yields (`tf.estimator` 1.14 added ALL_CLASS_IDS, ALL_CLASSES)."""
    CLASSES = 'classes'
    CLASS_IDS = 'class_ids'
    ALL_CLASSES = 'all_classes'
    ALL_CLASS_IDS = 'all_class_ids'
    LOGISTIC = 'logistic'
    LOGITS = 'logits'
    PREDICTIONS = 'predictions'
    PROBABILITIES = 'probabilities'


class MetricKeys:
    """Keys of `evaluate`'s dict; LOSS is the Estimator's own (the mean of the EVAL loss)."""
    LOSS = 'loss'
    LOSS_MEAN = 'average_loss'
    LOSS_REGULARIZATION = 'regularization_loss'  # TF 2's heads, given regularization losses
    ACCURACY = 'accuracy'
    PRECISION = 'precision'
    RECALL = 'recall'
    # The accuracy of always predicting the more frequent class.
    ACCURACY_BASELINE = 'accuracy_baseline'
    AUC = 'auc'
    AUC_PR = 'auc_precision_recall'
    LABEL_MEAN = 'label/mean'
    PREDICTION_MEAN = 'prediction/mean'
    ACCURACY_AT_THRESHOLD = 'accuracy/positive_threshold_%g'
    PRECISION_AT_THRESHOLD = 'precision/positive_threshold_%g'
    RECALL_AT_THRESHOLD = 'recall/positive_threshold_%g'


class SignatureKeys:
    """The SavedModel signatures of a canned estimator's export (`serving_default` is TF
    Serving's default; the other three were the canned heads' own convention)."""
    DEFAULT = 'serving_default'
    CLASSIFY = 'classification'
    REGRESS = 'regression'
    PREDICT = 'predict'
