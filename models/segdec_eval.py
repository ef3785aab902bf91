"""Scores and figures of a surface-defect detector, as the paper reports them.

Average precision of the image scores (the paper's main metric), false positives and false
negatives at the threshold of the best F-measure, accuracy, precision and recall at 0.5, a
precision-recall curve and per-image panels [image | ground-truth mask | predicted mask].
Every file is written to a temporary name beside its target and renamed, so a reader never
sees half a file.
"""
import json

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402 (the backend must be chosen first)
import numpy as np  # noqa: E402
from PIL import Image, ImageDraw  # noqa: E402

from towers.files import write_file_atomically  # noqa: E402

PANEL_GAP = 4


def precision_recall_curve(labels, scores):
    """Precision and recall of "defect when score >= t" at every distinct score t.

    Args:
      labels: [n] 0/1, at least one 1.
      scores: [n] floats, higher = more likely defective.

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
    """The paper's image-level figures.

    Args:
      labels: [n] 0/1 ground truth, both kinds present.
      scores: [n] defect probabilities.

    Returns:
      A dict: num_images, num_defective, average_precision (the area under the step-wise
      precision-recall curve, as scikit-learn computes it), best_f_threshold, best_f_measure,
      false_positives and false_negatives at that threshold, and accuracy, precision and recall
      of "defect when score >= 0.5".
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


def write_json(path, value):
    """Writes `value` as indented JSON."""
    def write(temporary):
        with open(temporary, 'w') as f:
            json.dump(value, f, indent=2, sort_keys=True)
            f.write('\n')
    write_file_atomically(path, write)


def write_pr_curve(path, labels, scores, title):
    """Draws the precision-recall curve of `scores` to the PNG `path`."""
    precision, recall = precision_recall_curve(labels, scores)[:2]
    figure, axes = plt.subplots(figsize=(5, 4))
    axes.step(np.r_[0.0, recall], np.r_[1.0, precision], where='pre')
    axes.set_xlabel('recall')
    axes.set_ylabel('precision')
    axes.set_xlim(0, 1.01)
    axes.set_ylim(0, 1.01)
    axes.set_title(title)
    axes.grid(True, alpha=0.3)
    write_file_atomically(path, lambda temporary: figure.savefig(temporary, format='png',
                                                                 dpi=100))
    plt.close(figure)


def panel(image, true_mask, predicted_mask, caption):
    """[image | ground-truth mask | predicted mask] side by side, with a caption above.

    Args:
      image: [H, W] uint8.
      true_mask, predicted_mask: [h, w] values in [0, 1], at H/h-times lower resolution.
      caption: one line of text.

    Returns:
      A PIL image.
    """
    height, width = image.shape

    def enlarge(mask):
        grey = Image.fromarray(np.clip(np.asarray(mask) * 255.0, 0, 255).astype(np.uint8))
        return grey.resize((width, height), Image.NEAREST)

    text_height = 14
    canvas = Image.new('L', (3 * width + 2 * PANEL_GAP, height + text_height), color=255)
    for column, part in enumerate([Image.fromarray(image), enlarge(true_mask),
                                   enlarge(predicted_mask)]):
        canvas.paste(part, (column * (width + PANEL_GAP), text_height))
    ImageDraw.Draw(canvas).text((2, 1), caption, fill=0)
    return canvas


def write_panel(path, image, true_mask, predicted_mask, caption):
    """Writes `panel(...)` to the PNG `path`."""
    picture = panel(image, true_mask, predicted_mask, caption)
    write_file_atomically(path, lambda temporary: picture.save(temporary, format='PNG'))
