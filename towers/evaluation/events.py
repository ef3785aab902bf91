"""An evaluation's figures in TensorBoard, in the `eval` run beside the training's events.

    write_events(checkpoint, results,
                 images={'confusion_matrix': 'out/confusion_matrix.png'},
                 pr_curves={'pr_curve': (labels, scores)})

One event file in `<train_dir>/eval` (the folder of the evaluated checkpoint; TF 1.x's Estimator
kept its evaluations in `<model_dir>/eval` too) at the checkpoint's global step: every number of
`results` (nested dicts give 'unet/iou'; lists, strings and booleans are left out) as a scalar,
each PNG as an image summary, and each (labels, scores) as TensorBoard's PR-curve summary.
Validation while training (`--eval_every_steps`, `towers.training.validation`) writes to the same
run. So that

    tensorboard --logdir /tmp/segdec_train

shows the training's curves and, as the run `eval`, the metrics at each evaluated step. The
results' files (`results.json`, the PNGs) stay in the script's `--out_dir`; a training folder
that cannot be written (a checkpoint read from elsewhere) gets no events, and a line says so.
"""
import logging
import numbers
import os

import numpy as np
from PIL import Image
from tensorboard.plugins.pr_curve import summary as pr_curve_summary

from towers.compat import tf
from towers.training import checkpoints

PR_CURVE_THRESHOLDS = 201
# The TensorBoard run of evaluations and validation, a folder in the training's.
EVAL_RUN = 'eval'

log = logging.getLogger(__name__)


def eval_dir(train_dir):
    """Where evaluations of the checkpoints of `train_dir` write their TensorBoard events."""
    return os.path.join(train_dir, EVAL_RUN)


def write_events(checkpoint, results, images=None, pr_curves=None):
    """Writes the figures of an evaluation of `checkpoint` into the `eval` run beside it (see
    the module docstring).

    Args:
      checkpoint: the evaluated checkpoint's prefix, whose global step the events carry.
      results: dict of the evaluation's figures, as in its results.json.
      images: dict tag -> path of a PNG file.
      pr_curves: dict tag -> (labels [N] of 0/1, scores [N] in [0, 1]).
    """
    values = [tf.Summary.Value(tag=tag, simple_value=float(value))
              for tag, value in _numbers(results)]
    for tag, path in (images or {}).items():
        with open(path, 'rb') as f:
            encoded = f.read()
        with Image.open(path) as image:
            width, height = image.size
        values.append(tf.Summary.Value(tag=tag, image=tf.Summary.Image(
            height=height, width=width, colorspace=4, encoded_image_string=encoded)))
    summary = tf.Summary(value=values)
    for tag, (labels, scores) in (pr_curves or {}).items():
        summary.MergeFromString(_pr_curve(tag, labels, scores).SerializeToString())
    directory = eval_dir(os.path.dirname(checkpoint))
    try:
        writer = tf.summary.FileWriter(directory)
    except (OSError, tf.errors.OpError) as err:
        log.warning('no TensorBoard events of this evaluation: cannot write to %s (%s)',
                    directory, getattr(err, 'strerror', None) or err)
        return
    writer.add_summary(summary, checkpoints.saved_step(checkpoint))
    writer.close()


def _numbers(results, prefix=''):
    for key, value in results.items():
        tag = prefix + str(key)
        if isinstance(value, dict):
            yield from _numbers(value, tag + '/')
        elif isinstance(value, numbers.Number) and not isinstance(value, bool):
            yield tag, value


def _pr_curve(tag, labels, scores):
    """TensorBoard's PR-curve summary of `scores` against `labels` at `PR_CURVE_THRESHOLDS`
    thresholds evenly spaced in [0, 1]."""
    labels = np.asarray(labels).astype(bool)
    scores = np.asarray(scores, np.float64)
    thresholds = np.linspace(0.0, 1.0, PR_CURVE_THRESHOLDS)
    predicted = scores[None, :] >= thresholds[:, None]
    true_positives = (predicted & labels).sum(axis=1)
    false_positives = (predicted & ~labels).sum(axis=1)
    false_negatives = labels.sum() - true_positives
    true_negatives = (~labels).sum() - false_positives
    precision = true_positives / np.maximum(true_positives + false_positives, 1)
    recall = true_positives / np.maximum(labels.sum(), 1)
    return pr_curve_summary.raw_data_pb(
        tag, true_positive_counts=true_positives, false_positive_counts=false_positives,
        true_negative_counts=true_negatives, false_negative_counts=false_negatives,
        precision=precision, recall=recall, num_thresholds=PR_CURVE_THRESHOLDS)
