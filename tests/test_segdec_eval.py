"""Specification of the detection metrics and figures of the SegDecNet evaluation."""
import json

import numpy as np
from PIL import Image

from models import segdec_eval


def test_perfect_ranking_has_average_precision_one_and_no_errors():
    metrics = segdec_eval.detection_metrics([0, 1, 0, 1], [0.1, 0.8, 0.3, 0.6])
    assert metrics['average_precision'] == 1.0
    assert metrics['false_positives'] == 0 and metrics['false_negatives'] == 0
    assert metrics['best_f_threshold'] == 0.6


def test_average_precision_sums_precision_at_each_recall_step():
    # Ranked: 1 (0.9), 0 (0.8), 1 (0.7), 0 (0.2): precision 1 at recall 1/2, 2/3 at recall 1.
    metrics = segdec_eval.detection_metrics([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.2])
    assert np.isclose(metrics['average_precision'], 0.5 * 1.0 + 0.5 * 2.0 / 3.0)


def test_tied_scores_enter_the_ranking_together():
    metrics = segdec_eval.detection_metrics([1, 0, 1, 0], [0.5, 0.5, 0.5, 0.1])
    assert np.isclose(metrics['average_precision'], 2.0 / 3.0)


def test_errors_are_counted_at_the_threshold_of_the_best_f_measure():
    labels = [1, 1, 1, 0, 0, 0, 0]
    scores = [0.9, 0.8, 0.3, 0.7, 0.2, 0.1, 0.05]
    # Threshold 0.8: P=1, R=2/3, F=0.8; threshold 0.3: P=3/4, R=1, F=6/7 (best).
    metrics = segdec_eval.detection_metrics(labels, scores)
    assert metrics['best_f_threshold'] == 0.3
    assert np.isclose(metrics['best_f_measure'], 6.0 / 7.0)
    assert metrics['false_positives'] == 1 and metrics['false_negatives'] == 0
    assert np.isclose(metrics['accuracy_at_0.5'], 5.0 / 7.0)
    assert np.isclose(metrics['precision_at_0.5'], 2.0 / 3.0)
    assert np.isclose(metrics['recall_at_0.5'], 2.0 / 3.0)


def test_panel_shows_image_true_and_predicted_mask_side_by_side():
    image = np.full([16, 8], 100, np.uint8)
    truth = np.array([[1.0], [0.0]])
    predicted = np.array([[0.0], [1.0]])
    picture = np.asarray(segdec_eval.panel(image, truth, predicted, 'x'))
    body = picture[-16:]
    gap = segdec_eval.PANEL_GAP
    assert body.shape == (16, 3 * 8 + 2 * gap)
    assert (body[:, :8] == 100).all()
    assert (body[:8, 8 + gap:16 + gap] == 255).all() and (body[8:, 8 + gap:16 + gap] == 0).all()
    assert (body[:8, -8:] == 0).all() and (body[8:, -8:] == 255).all()


def test_files_are_complete_when_written_and_leave_no_temporary_behind(tmp_path):
    segdec_eval.write_json(str(tmp_path / 'results.json'), {'average_precision': 0.5})
    segdec_eval.write_pr_curve(str(tmp_path / 'pr.png'), [0, 1], [0.2, 0.9], 'title')
    assert json.loads((tmp_path / 'results.json').read_text()) == {'average_precision': 0.5}
    assert Image.open(str(tmp_path / 'pr.png')).format == 'PNG'
    assert sorted(p.name for p in tmp_path.iterdir()) == ['pr.png', 'results.json']
