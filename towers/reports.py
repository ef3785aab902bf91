"""Reports: Markdown tables, results JSON, charts and image panels, each written atomically.

    reports.write_results('out/results.json', {'accuracy': 0.91})
    table = reports.markdown_table(['model', 'IoU'], [['Unet', 0.849]])
    reports.write_text('out/comparison.md', table)
    reports.write_curves('out/loss.png', [('unet', steps, losses)], 'Loss', 'cross entropy')
    reports.write_curve_panels('out/curves.png', [(losses, 'Loss', 'BCE', True),
                                                  (ious, 'Validation', 'IoU', False)])
    reports.write_pr_curve('out/pr_curve.png', precision, recall, 'AP 0.97')
    reports.write_confusion_matrix('out/confusion.png', confusion, class_names, 'title')
    reports.write_panel('out/panel.png', [image, true_mask, predicted_mask], 'item 3')
    reports.save_figure('out/chart.png', figure)        # any other matplotlib Figure

Every file goes to a temporary name beside its target and is renamed (`towers.files`), so a
reader finds the old report or the whole new one; each writer makes the folder it needs.
Charts are bare `matplotlib.figure.Figure`s, drawn with Agg, leaving pyplot's global state
and backend alone. Nothing here knows a model, a metric or TensorFlow.
"""
import os
import pathlib

import numpy as np
from matplotlib.figure import Figure
from PIL import Image, ImageDraw

from towers.files import write_file_atomically, write_json

PANEL_GAP = 4
CAPTION_HEIGHT = 14
DPI = 100


def _make_parent(path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)


def write_results(path, results):
    """Writes the dict `results` to the JSON file `path`."""
    _make_parent(path)
    write_json(path, results)


def write_text(path, text):
    """Writes `text` (a Markdown table, say) to `path`."""
    _make_parent(path)
    write_file_atomically(path, lambda temporary: pathlib.Path(temporary).write_text(text))


def markdown_table(header, rows, formats=None):
    """A Markdown table.

    Args:
      header: the column titles.
      rows: lists of cells, one per column.
      formats: one %-format per column (e.g. '%.1f'), or None: numbers with 3 decimals
        (floats), the rest as `str` gives them.

    Returns:
      The text, one line per row, ending with a newline.
    """
    def cell(column, value):
        if formats is not None:
            return formats[column] % value
        return '%.3f' % value if isinstance(value, float) else str(value)
    lines = ['| %s |' % ' | '.join(header), '|%s' % ('---|' * len(header))]
    lines += ['| %s |' % ' | '.join(cell(column, value) for column, value in enumerate(row))
              for row in rows]
    return '\n'.join(lines) + '\n'


def save_figure(path, figure):
    """Writes the matplotlib `figure` to the PNG `path`."""
    _make_parent(path)
    write_file_atomically(path, lambda temporary: figure.savefig(temporary, format='png',
                                                                 dpi=DPI))


def write_curves(path, curves, title, ylabel, log_scale=False):
    """Draws several curves on one chart to the PNG `path`.

    Args:
      path: the PNG to write.
      curves: a list of (label, steps, values), e.g. each model's training loss.
      title, ylabel: of the chart; the x axis is the step.
      log_scale: a logarithmic y axis.
    """
    write_curve_panels(path, [(curves, title, ylabel, log_scale)])


def write_curve_panels(path, panels):
    """Draws charts of curves one above the other, on one step axis, to the PNG `path`.

    Args:
      path: the PNG to write.
      panels: a list of (curves, title, ylabel, log_scale), each chart as `write_curves`
        takes it; e.g. each model's training loss above its validation metric.
    """
    figure = Figure(figsize=(6, 1 + 3 * len(panels)))
    for axes, (curves, title, ylabel, log_scale) in zip(
            np.atleast_1d(figure.subplots(len(panels), 1, sharex=True)), panels):
        for label, steps, values in curves:
            axes.plot(steps, values, label=label, marker='o' if len(steps) < 20 else None)
        if log_scale:
            axes.set_yscale('log')
        axes.set_ylabel(ylabel)
        axes.set_title(title)
        axes.grid(True, alpha=0.3)
        axes.legend()
    axes.set_xlabel('step')
    figure.tight_layout()
    save_figure(path, figure)


def write_pr_curve(path, precision, recall, title):
    """Draws a step-wise precision-recall curve to the PNG `path`.

    Args:
      path: the PNG to write.
      precision, recall: [k] each, at thresholds in decreasing order (as
        `towers.evaluation.precision_recall_curve` gives them).
      title: the figure's title.
    """
    figure = Figure(figsize=(5, 4))
    axes = figure.subplots()
    axes.step(np.r_[0.0, recall], np.r_[1.0, precision], where='pre')
    axes.set_xlabel('recall')
    axes.set_ylabel('precision')
    axes.set_xlim(0, 1.01)
    axes.set_ylim(0, 1.01)
    axes.set_title(title)
    axes.grid(True, alpha=0.3)
    save_figure(path, figure)


def write_confusion_matrix(path, confusion, class_names, title):
    """Draws a confusion matrix to the PNG `path`: counts in the cells, shaded by the fraction
    of their true class (row), so that classes of any size read alike.

    Args:
      path: the PNG to write.
      confusion: k lists of k counts, row = true class, column = predicted class.
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
    save_figure(path, figure)


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
    _make_parent(path)
    write_file_atomically(path, lambda temporary: picture.save(temporary, format='PNG'))
