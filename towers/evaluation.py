"""Evaluating a trained network: its outputs from a checkpoint, detection and classification
scores, figures.

    outputs = restore_and_predict(lambda x: net(x, is_training=False), checkpoint, images,
                                  batch_size=8, names=['score'])
    metrics = detection_metrics(labels, outputs['score'])   # average precision, errors, ...
    metrics = classification_metrics(labels, predicted_classes, class_names)  # per class
    metrics = segmentation_metrics(true_masks, outputs['mask'])   # IoU, Dice, pixel accuracy
    write_pr_curve('pr_curve.png', labels, outputs['score'], 'my detector')
    write_confusion_matrix('confusion.png', metrics['confusion_matrix'], class_names, 'title')
    write_panel('panel.png', [image, true_mask, predicted_mask], 'item 3')

Nothing here knows a model or a data set. Average precision and the precision-recall curve equal
scikit-learn's `average_precision_score` and `precision_recall_curve` (tests/test_evaluation.py
pins them), without making scikit-learn a dependency. Every file is written to a temporary name
beside its target and renamed, so a reader never sees half a file.
"""
import logging
import time

import numpy as np
from matplotlib.figure import Figure
from PIL import Image, ImageDraw

from towers.training import checkpoints
from towers.compat import tf
from towers.errors import TowersError
from towers.files import write_file_atomically

log = logging.getLogger(__name__)

PANEL_GAP = 4
CAPTION_HEIGHT = 14


def require_variables(checkpoint, names, what):
    """Raises `TowersError` naming the variables of `names` that `checkpoint` lacks.

    Args:
      checkpoint: a checkpoint prefix.
      names: the checkpoint names a restore will read.
      what: what the checkpoint should be, for the message (e.g. 'the CIFAR-10 model').
    """
    stored = tf.train.NewCheckpointReader(checkpoint).get_variable_to_shape_map()
    missing = sorted(set(names) - set(stored))
    if missing:
        raise TowersError('checkpoint %s is not one of %s: it lacks %s'
                          % (checkpoint, what, ', '.join(missing)))


def checkpoint_to_evaluate(checkpoint_path, train_dir, train_script):
    """`checkpoint_path` when given, else the newest checkpoint of `train_dir` that reads whole
    (`towers.training.checkpoints.newest_readable`).

    Raises:
      TowersError: `train_dir` holds no checkpoint; the message says to train first with
        `train_script`. Or every checkpoint there is damaged.
    """
    checkpoint = checkpoint_path or checkpoints.newest_readable(train_dir)
    if not checkpoint:
        raise TowersError('no checkpoint in --train_dir %s; train first with %s --train_dir %s'
                          % (train_dir, train_script, train_dir))
    return checkpoint


def poll_checkpoints(checkpoint_dir, evaluate, run_once, interval_secs, sleep=time.sleep):
    """Evaluates the newest checkpoint of `checkpoint_dir` once, or again every interval.

    As the TF1 evaluation scripts did beside a running training: without `run_once` it never
    returns, and waits (logging it) while the directory has no checkpoint yet. The newest
    checkpoint is the newest that reads whole (`towers.training.checkpoints.newest_readable`); one that
    the training deletes while `evaluate` reads it (it keeps only its newest few) is logged and
    left for the newest one then.

    Args:
      checkpoint_dir: the training's directory.
      evaluate: called with the newest checkpoint's prefix.
      run_once: evaluate once and return.
      interval_secs: seconds between evaluations.
      sleep: how to wait (for tests).

    Raises:
      TowersError: with `run_once`, when the directory is missing or holds no checkpoint; or
        every checkpoint there is damaged.
    """
    while True:
        checkpoint = checkpoints.newest_readable(checkpoint_dir)
        if checkpoint is not None:
            try:
                evaluate(checkpoint)
            except (TowersError, tf.errors.OpError):
                if checkpoints.exists(checkpoint):
                    raise
                log.warning('checkpoint %s was deleted while it was read (the training keeps '
                            'only its newest ones); reading the newest one now', checkpoint)
                continue
        elif run_once:
            raise TowersError('no checkpoint in --checkpoint_dir %s (expected model.ckpt-<step> '
                              'files and a `checkpoint` index written by the training)'
                              % checkpoint_dir)
        else:
            log.info('no checkpoint in %s yet; waiting', checkpoint_dir)
        if run_once:
            return
        sleep(interval_secs)


def restore_and_sum(saver, checkpoint, tensor, num_batches, final_fetches=None, config=None):
    """Restores `checkpoint` into the default graph and sums `tensor` over `num_batches` runs.

    Args:
      saver: a `tf.train.Saver` of the default graph that restores the network.
      checkpoint: the checkpoint prefix.
      tensor: what to sum over its first axis, e.g. [batch] bool of correct predictions from an
        input pipeline, or [batch, k] for k sums at once.
      num_batches: runs of `tensor`.
      final_fetches: fetched once after the runs (e.g. summaries), or None.
      config: the session's `tf.ConfigProto`, or None.

    Returns:
      (the sum: a Python number, or a [k] array for a [batch, k] tensor; the values of
      `final_fetches`).
    """
    with tf.Session(config=config) as sess:
        restore_checkpoint(saver, sess, checkpoint)
        total = sum(np.sum(sess.run(tensor), axis=0) for _ in range(num_batches))
        final = None if final_fetches is None else sess.run(final_fetches)
    return total.item() if isinstance(total, np.generic) else total, final


def restore_and_predict(build_fn, checkpoint, inputs, batch_size, config=None, names=None):
    """Runs a network restored from `checkpoint` on `inputs`, `batch_size` rows at a time.

    The network is built in a graph of its own, so the caller's default graph is left as it
    was, and all its global variables are restored.

    Args:
      build_fn: called once with a placeholder [b, ...] of `inputs`' dtype and row shape;
        builds the network in test mode (no dropout, batch-norm moving statistics) and returns
        a dict of tensors [b, ...].
      checkpoint: the checkpoint prefix to restore, e.g. '/tmp/train/model.ckpt-1000'.
      inputs: [n, ...] array, n >= 1.
      batch_size: rows per run; the results do not depend on it in test mode.
      config: the `tf.ConfigProto` of the session (devices, threads), or None.
      names: the keys of `build_fn`'s dict to compute; None for all of them.

    Returns:
      A dict from each of `names` to a numpy array [n, ...].

    Raises:
      TowersError: naming `checkpoint`, when it is missing or does not hold the network's
        variables.
    """
    inputs = np.asarray(inputs)
    with tf.Graph().as_default():
        placeholder = tf.placeholder(tf.as_dtype(inputs.dtype), (None,) + inputs.shape[1:],
                                     name='inputs')
        outputs = build_fn(placeholder)
        fetches = {name: outputs[name] for name in (outputs if names is None else names)}
        saver = tf.train.Saver(tf.global_variables())
        with tf.Session(config=config) as sess:
            restore_checkpoint(saver, sess, checkpoint)
            batches = [sess.run(fetches, {placeholder: inputs[start:start + batch_size]})
                       for start in range(0, len(inputs), batch_size)]
    return {name: np.concatenate([batch[name] for batch in batches]) for name in fetches}


def restore_checkpoint(saver, sess, checkpoint):
    """`saver.restore`, with its failures as one line naming `checkpoint`."""
    try:
        saver.restore(sess, checkpoint)
    except ValueError as err:
        raise TowersError('cannot restore the network from checkpoint %s: %s'
                          % (checkpoint, err))
    except (tf.errors.NotFoundError, tf.errors.InvalidArgumentError) as err:
        # TensorFlow's message is a paragraph of advice; the cause is its last unindented line
        # (e.g. "Key conv1/weights not found in checkpoint").
        cause = [line for line in err.message.split('\n') if line[:1].strip()][-1]
        raise TowersError("checkpoint %s does not hold the network's variables: %s"
                          % (checkpoint, cause))


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


def markdown_table(header, rows):
    """A Markdown table: `header` a list of column titles, `rows` lists of cells (strings, or
    numbers written with 3 decimals). Returns the text, one line per row."""
    def cell(value):
        return '%.3f' % value if isinstance(value, float) else str(value)
    lines = ['| %s |' % ' | '.join(header), '|%s' % ('---|' * len(header))]
    lines += ['| %s |' % ' | '.join(cell(value) for value in row) for row in rows]
    return '\n'.join(lines) + '\n'


def write_curves(path, curves, title, ylabel, log_scale=False):
    """Draws several curves on one chart to the PNG `path`.

    Args:
      path: the PNG to write.
      curves: a list of (label, steps, values), e.g. each model's training loss.
      title, ylabel: of the chart; the x axis is the step.
      log_scale: a logarithmic y axis.
    """
    figure = Figure(figsize=(6, 4))
    axes = figure.subplots()
    for label, steps, values in curves:
        axes.plot(steps, values, label=label)
    if log_scale:
        axes.set_yscale('log')
    axes.set_xlabel('step')
    axes.set_ylabel(ylabel)
    axes.set_title(title)
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    write_file_atomically(path, lambda temporary: figure.savefig(temporary, format='png',
                                                                 dpi=100))


def write_pr_curve(path, labels, scores, title):
    """Draws the precision-recall curve of `scores` ([n], with `labels` [n] 0/1) to the PNG
    `path`, titled `title`."""
    precision, recall = precision_recall_curve(labels, scores)[:2]
    # A bare Figure renders with Agg and leaves pyplot's global state and backend alone.
    figure = Figure(figsize=(5, 4))
    axes = figure.subplots()
    axes.step(np.r_[0.0, recall], np.r_[1.0, precision], where='pre')
    axes.set_xlabel('recall')
    axes.set_ylabel('precision')
    axes.set_xlim(0, 1.01)
    axes.set_ylim(0, 1.01)
    axes.set_title(title)
    axes.grid(True, alpha=0.3)
    write_file_atomically(path, lambda temporary: figure.savefig(temporary, format='png',
                                                                 dpi=100))


def write_confusion_matrix(path, confusion, class_names, title):
    """Draws a confusion matrix to the PNG `path`: counts in the cells, shaded by the fraction
    of their true class (row), so that classes of any size read alike.

    Args:
      path: the PNG to write.
      confusion: k lists of k counts, row = true class, column = predicted class (as
        `classification_metrics` gives it).
      class_names: the k class names, in index order.
      title: the figure's title.
    """
    confusion = np.asarray(confusion, np.int64)
    fractions = confusion / np.maximum(confusion.sum(axis=1, keepdims=True), 1)
    size = 2.5 + 0.6 * len(class_names)
    figure = Figure(figsize=(size + 1, size))
    axes = figure.subplots()
    image = axes.imshow(fractions, cmap='Blues', vmin=0, vmax=1)
    for (row, column), count in np.ndenumerate(confusion):
        axes.text(column, row, str(count), ha='center', va='center', fontsize='small',
                  color='white' if fractions[row, column] > 0.5 else 'black')
    ticks = np.arange(len(class_names))
    axes.set_xticks(ticks)
    axes.set_xticklabels(class_names, rotation=45, ha='right', fontsize='small')
    axes.set_yticks(ticks)
    axes.set_yticklabels(class_names, fontsize='small')
    axes.set_xlabel('predicted class')
    axes.set_ylabel('true class')
    axes.set_title(title, fontsize='medium')
    figure.colorbar(image, ax=axes, label='fraction of the true class')
    figure.tight_layout()
    write_file_atomically(path, lambda temporary: figure.savefig(temporary, format='png',
                                                                 dpi=100))


def panel(parts, caption):
    """Pictures side by side, e.g. [image | true mask | predicted mask 1 | ...], captioned.

    Args:
      parts: a list of arrays, each [h, w] (grey) or [h, w, 3] (colour). The first is the
        image, values 0..255, whose [H, W] every column takes; the others are masks, values in
        [0, 1] (shown as 0..255), enlarged to [H, W] without smoothing so each cell stays
        visible.
      caption: one line of text, drawn above the pictures.

    Returns:
      A PIL image [CAPTION_HEIGHT + H, len(parts) * W + (len(parts) - 1) * PANEL_GAP], grey
      unless a part is in colour.

    Raises:
      ValueError: a part is neither [h, w] nor [h, w, 3].
    """
    for index, part in enumerate(parts):
        shape = np.shape(part)
        if not (len(shape) == 2 or (len(shape) == 3 and shape[2] == 3)):
            raise ValueError('panel part %d has shape %s; expected [h, w] or [h, w, 3]'
                             % (index, shape))
    height, width = np.shape(parts[0])[:2]
    pictures = [Image.fromarray(np.clip(np.asarray(part, np.float64) * scale, 0, 255)
                                .astype(np.uint8)).resize((width, height), Image.NEAREST)
                for part, scale in zip(parts, [1.0] + [255.0] * (len(parts) - 1))]
    mode = 'RGB' if any(picture.mode == 'RGB' for picture in pictures) else 'L'
    canvas = Image.new(mode, (len(parts) * width + (len(parts) - 1) * PANEL_GAP,
                              CAPTION_HEIGHT + height), color='white')
    for column, picture in enumerate(pictures):
        canvas.paste(picture.convert(mode), (column * (width + PANEL_GAP), CAPTION_HEIGHT))
    ImageDraw.Draw(canvas).text((2, 1), caption, fill='black')
    return canvas


def write_panel(path, parts, caption):
    """Writes `panel(parts, caption)` to the PNG `path`."""
    picture = panel(parts, caption)
    write_file_atomically(path, lambda temporary: picture.save(temporary, format='PNG'))
