"""Metrics of a trained network's outputs: detection, classification and segmentation scores.

    metrics = detection_metrics(labels, scores)          # average precision, errors, ...
    metrics = classification_metrics(labels, predicted_classes, class_names)  # per class
    metrics = segmentation_metrics(true_masks, predicted_masks)   # IoU, Dice, pixel accuracy
    precision, recall, thresholds, _, _ = precision_recall_curve(labels, scores)

Nothing here knows a model or a data set. Average precision and the precision-recall curve equal
scikit-learn's `average_precision_score` and `precision_recall_curve` (tests/test_evaluation.py
pins them), without making scikit-learn a dependency.
"""
import numpy as np


def precision_recall_curve(labels, scores):
    """Precision and recall of "positive when score >= t" at every distinct score t.

    Equal to scikit-learn's `precision_recall_curve` without its final (precision 1, recall 0)
    point, and in the opposite order.

    Args:
      labels: [n] 0/1, at least one 1.
      scores: [n] floats, higher = more likely positive.

    Returns:
      precision, recall, thresholds: [k] each, thresholds decreasing.
      true_positives, false_positives: [k] counts at each threshold.
    """
    labels = np.asarray(labels, np.int64)
    scores = np.asarray(scores, np.float64)
    order = np.argsort(-scores, kind='mergesort')
    sorted_scores, sorted_labels = scores[order], labels[order]
    # The last index of each run of equal scores: ties enter the positive side together.
    last = np.r_[np.flatnonzero(np.diff(sorted_scores)), len(scores) - 1]
    true_positives = np.cumsum(sorted_labels)[last]
    false_positives = (last + 1) - true_positives
    precision = true_positives / (last + 1.0)
    recall = true_positives / float(labels.sum())
    return precision, recall, sorted_scores[last], true_positives, false_positives


def detection_metrics(labels, scores):
    """The image-level figures of a detector, as the SegDecNet paper reports them.

    Args:
      labels: [n] 0/1 ground truth, both kinds present.
      scores: [n] probabilities of the positive class.

    Returns:
      A dict: num_images, num_defective, average_precision (the area under the step-wise
      precision-recall curve, as scikit-learn's `average_precision_score` computes it),
      best_f_threshold, best_f_measure, false_positives and false_negatives at that threshold,
      and accuracy, precision and recall of "positive when score >= 0.5".
    """
    labels = np.asarray(labels, np.int64)
    scores = np.asarray(scores, np.float64)
    precision, recall, thresholds, true_pos, false_pos = precision_recall_curve(labels, scores)
    average_precision = float(np.sum(np.diff(np.r_[0.0, recall]) * precision))
    f_measure = np.where(precision + recall > 0,
                         2 * precision * recall / np.maximum(precision + recall, 1e-12), 0.0)
    best = int(np.argmax(f_measure))
    num_defective = int(labels.sum())
    predicted = scores >= 0.5
    hits = int(np.sum(predicted & (labels == 1)))
    return {
        'num_images': int(len(labels)),
        'num_defective': num_defective,
        'average_precision': average_precision,
        'best_f_threshold': float(thresholds[best]),
        'best_f_measure': float(f_measure[best]),
        'false_positives': int(false_pos[best]),
        'false_negatives': int(num_defective - true_pos[best]),
        'accuracy_at_0.5': float(np.mean(predicted == (labels == 1))),
        'precision_at_0.5': float(hits / predicted.sum()) if predicted.any() else 0.0,
        'recall_at_0.5': float(hits / num_defective),
    }


def classification_metrics(labels, predictions, class_names):
    """Accuracy overall and per class, and the confusion matrix, of a classifier.

    Args:
      labels: [n] true class indices in 0..k-1, n >= 1.
      predictions: [n] predicted class indices in 0..k-1.
      class_names: the k class names, in index order.

    Returns:
      A dict: num_examples; accuracy (the fraction predicted right); per_class, a dict class
      name -> {'examples': n_c, 'correct': right of them, 'accuracy': their fraction, or None
      when n_c is 0}; class_names; confusion_matrix, k lists of k counts, row = true class,
      column = predicted class.
    """
    labels = np.asarray(labels, np.int64)
    predictions = np.asarray(predictions, np.int64)
    confusion = np.zeros([len(class_names)] * 2, np.int64)
    np.add.at(confusion, (labels, predictions), 1)
    examples, correct = confusion.sum(axis=1), np.diag(confusion)
    return {
        'num_examples': int(len(labels)),
        'accuracy': float(correct.sum() / len(labels)),
        'per_class': {name: {'examples': int(count), 'correct': int(right),
                             'accuracy': float(right / count) if count else None}
                      for name, count, right in zip(class_names, examples, correct)},
        'class_names': list(class_names),
        'confusion_matrix': confusion.tolist(),
    }


def segmentation_metrics(masks, predictions, threshold=0.5):
    """IoU, Dice (F1) and pixel accuracy of binary masks, over all pixels of a set together.

    Args:
      masks: [n, ...] true masks, 0/1.
      predictions: [n, ...] the predicted probabilities of the foreground, the same shape.
      threshold: a pixel is predicted foreground when its probability is >= this.

    Returns:
      A dict: iou (true positives over their union with false positives and negatives),
      dice (twice the true positives over the predicted plus the true foreground) and
      pixel_accuracy (the fraction of pixels predicted right). Without any true or predicted
      foreground, iou and dice are 1.
    """
    truth = np.asarray(masks) > 0
    predicted = np.asarray(predictions) >= threshold
    if truth.shape != predicted.shape:
        raise ValueError('masks %s and predictions %s differ in shape'
                         % (truth.shape, predicted.shape))
    true_positives = float(np.sum(truth & predicted))
    errors = float(np.sum(truth != predicted))
    return {
        'iou': true_positives / (true_positives + errors) if true_positives + errors else 1.0,
        'dice': (2 * true_positives / (2 * true_positives + errors)
                 if true_positives + errors else 1.0),
        'pixel_accuracy': 1.0 - errors / truth.size,
    }
