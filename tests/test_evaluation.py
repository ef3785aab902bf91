"""Specification of the generic evaluation: predictions from a checkpoint, detection metrics
(pinned against scikit-learn), the precision-recall figure and image panels."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image
from sklearn import metrics as sklearn_metrics

from towers import TowersError, evaluation, reports
from towers.compat import tf


def test_perfect_ranking_has_average_precision_one_and_no_errors():
    metrics = evaluation.detection_metrics([0, 1, 0, 1], [0.1, 0.8, 0.3, 0.6])
    assert metrics['average_precision'] == 1.0
    assert metrics['false_positives'] == 0 and metrics['false_negatives'] == 0
    assert metrics['best_f_threshold'] == 0.6


def test_average_precision_sums_precision_at_each_recall_step():
    # Ranked: 1 (0.9), 0 (0.8), 1 (0.7), 0 (0.2): precision 1 at recall 1/2, 2/3 at recall 1.
    metrics = evaluation.detection_metrics([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.2])
    assert np.isclose(metrics['average_precision'], 0.5 * 1.0 + 0.5 * 2.0 / 3.0)


def test_tied_scores_enter_the_ranking_together():
    metrics = evaluation.detection_metrics([1, 0, 1, 0], [0.5, 0.5, 0.5, 0.1])
    assert np.isclose(metrics['average_precision'], 2.0 / 3.0)


def test_errors_are_counted_at_the_threshold_of_the_best_f_measure():
    labels = [1, 1, 1, 0, 0, 0, 0]
    scores = [0.9, 0.8, 0.3, 0.7, 0.2, 0.1, 0.05]
    # Threshold 0.8: P=1, R=2/3, F=0.8; threshold 0.3: P=3/4, R=1, F=6/7 (best).
    metrics = evaluation.detection_metrics(labels, scores)
    assert metrics['best_f_threshold'] == 0.3
    assert np.isclose(metrics['best_f_measure'], 6.0 / 7.0)
    assert metrics['false_positives'] == 1 and metrics['false_negatives'] == 0
    assert np.isclose(metrics['accuracy_at_0.5'], 5.0 / 7.0)
    assert np.isclose(metrics['precision_at_0.5'], 2.0 / 3.0)
    assert np.isclose(metrics['recall_at_0.5'], 2.0 / 3.0)


def random_labels_and_scores(seed):
    """[n] labels with both classes and [n] scores rounded to one decimal, so many tie."""
    rng = np.random.RandomState(seed)
    n = rng.randint(5, 60)
    labels = np.r_[0, 1, rng.randint(0, 2, n - 2)]
    scores = np.round(rng.rand(n), 1)
    return labels, scores


@pytest.mark.parametrize('seed', range(5))
def test_average_precision_is_scikit_learns(seed):
    labels, scores = random_labels_and_scores(seed)
    assert np.isclose(evaluation.detection_metrics(labels, scores)['average_precision'],
                      sklearn_metrics.average_precision_score(labels, scores), rtol=0, atol=1e-12)


@pytest.mark.parametrize('seed', range(5))
def test_precision_recall_curve_is_scikit_learns_at_every_threshold(seed):
    labels, scores = random_labels_and_scores(seed)
    precision, recall, thresholds = evaluation.precision_recall_curve(labels, scores)[:3]
    expected_precision, expected_recall, expected_thresholds = (
        sklearn_metrics.precision_recall_curve(labels, scores))
    # scikit-learn orders thresholds increasing and ends with the point (precision 1, recall 0).
    np.testing.assert_array_equal(thresholds, expected_thresholds[::-1])
    np.testing.assert_allclose(precision, expected_precision[-2::-1], rtol=0, atol=1e-12)
    np.testing.assert_allclose(recall, expected_recall[-2::-1], rtol=0, atol=1e-12)


def test_importing_leaves_matplotlibs_backend_alone():
    program = ('import matplotlib\n'
               'before = matplotlib.get_backend()\n'
               'import towers.evaluation\n'
               'print(before, matplotlib.get_backend())\n')
    # A backend other than Agg, so that choosing Agg at import would show.
    environment = dict(os.environ, MPLBACKEND='svg')
    result = subprocess.run([sys.executable, '-c', program], env=environment,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ['svg', 'svg']


def test_panel_shows_image_true_and_predicted_mask_side_by_side():
    image = np.full([16, 8], 100, np.uint8)
    truth = np.array([[1.0], [0.0]])
    predicted = np.array([[0.0], [1.0]])
    picture = np.asarray(reports.panel([image, truth, predicted], 'x'))
    body = picture[-16:]
    gap = reports.PANEL_GAP
    assert body.shape == (16, 3 * 8 + 2 * gap)
    assert (body[:, :8] == 100).all()
    assert (body[:8, 8 + gap:16 + gap] == 255).all() and (body[8:, 8 + gap:16 + gap] == 0).all()
    assert (body[:8, -8:] == 0).all() and (body[8:, -8:] == 255).all()


def test_panel_of_five_parts_is_five_images_wide_with_each_mask_enlarged():
    image = np.zeros([16, 8], np.uint8)
    masks = [np.full([2, 1], value) for value in (0.25, 0.5, 0.75, 1.0)]
    picture = np.asarray(reports.panel([image] + masks, 'x'))
    gap = reports.PANEL_GAP
    assert picture.shape == (reports.CAPTION_HEIGHT + 16, 5 * 8 + 4 * gap)
    columns = [picture[-16:, i * (8 + gap):i * (8 + gap) + 8] for i in range(5)]
    assert [int(column.min()) for column in columns] == [0, 63, 127, 191, 255]
    assert all(column.min() == column.max() for column in columns)


def test_panel_with_a_colour_part_is_in_colour():
    image = np.full([4, 4], 100, np.uint8)
    red = np.zeros([2, 2, 3])
    red[..., 0] = 1.0
    picture = np.asarray(reports.panel([image, red], 'x'))
    assert picture.shape == (reports.CAPTION_HEIGHT + 4, 2 * 4 + reports.PANEL_GAP, 3)
    assert (picture[-4:, :4] == 100).all()
    assert (picture[-4:, -4:] == [255, 0, 0]).all()


def test_panel_part_of_another_shape_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r'panel part 1 has shape \(2, 2, 2\)'):
        reports.panel([np.zeros([4, 4], np.uint8), np.zeros([2, 2, 2])], 'x')


def test_pr_curve_is_a_complete_png_and_leaves_no_temporary_behind(tmp_path):
    precision, recall = evaluation.precision_recall_curve([0, 1], [0.2, 0.9])[:2]
    reports.write_pr_curve(str(tmp_path / 'pr.png'), precision, recall, 'title')
    assert Image.open(str(tmp_path / 'pr.png')).format == 'PNG'
    assert sorted(p.name for p in tmp_path.iterdir()) == ['pr.png']


def scale_net(inputs):
    """y = w * x and its sum per row, with w a variable that the checkpoint holds."""
    weight = tf.get_variable('weight', [], initializer=tf.zeros_initializer())
    scaled = weight * tf.cast(inputs, tf.float32)
    return {'scaled': scaled, 'total': tf.reduce_sum(scaled, axis=1)}


def save_weight(path, value):
    """Writes a checkpoint of `scale_net` with weight `value`; returns its prefix."""
    with tf.Graph().as_default():
        scale_net(tf.zeros([1, 1]))
        with tf.Session() as sess:
            sess.run(tf.global_variables()[0].assign(value))
            return tf.train.Saver().save(sess, path)


def test_predictions_come_from_the_checkpoint_in_batches_of_any_size(tmp_path):
    checkpoint = save_weight(str(tmp_path / 'model.ckpt'), 3.0)
    inputs = np.arange(10, dtype=np.uint8).reshape(5, 2)
    outputs = evaluation.predict(scale_net, checkpoint, inputs, batch_size=2)
    assert sorted(outputs) == ['scaled', 'total']
    np.testing.assert_array_equal(outputs['scaled'], 3.0 * inputs)
    np.testing.assert_array_equal(outputs['total'], 3.0 * inputs.sum(axis=1))


def test_predictions_show_their_progress_over_the_batches_on_stderr(tmp_path, capsys):
    checkpoint = save_weight(str(tmp_path / 'model.ckpt'), 1.0)
    evaluation.predict(scale_net, checkpoint, np.ones([5, 2]), batch_size=2)
    out, err = capsys.readouterr()
    assert out == ''
    assert re.search(r'^progress: evaluation 3/3 batches \(100%\), \d+\.\d\d batches/sec, '
                     r'00:00 left$', err, re.MULTILINE), err


def test_batches_of_the_networks_own_input_are_run_as_many_times_as_asked(tmp_path, capsys):
    checkpoint = save_weight(str(tmp_path / 'model.ckpt'), 2.0)
    with evaluation.Restored(lambda: scale_net(tf.ones([2, 3]))['total'], checkpoint) as net:
        totals = list(net.run_batches(4))
    np.testing.assert_array_equal(totals, np.full([4, 2], 6.0))
    assert re.search(r'^progress: evaluation 4/4 batches \(100%\)', capsys.readouterr().err,
                     re.MULTILINE)


def test_predictions_compute_only_the_named_outputs_in_their_own_graph(tmp_path):
    checkpoint = save_weight(str(tmp_path / 'model.ckpt'), 2.0)
    with tf.Graph().as_default() as caller_graph:
        outputs = evaluation.predict(scale_net, checkpoint, np.ones([3, 4]), batch_size=8,
                                     names=['total'])
        assert caller_graph.get_operations() == []
    assert list(outputs) == ['total']
    np.testing.assert_array_equal(outputs['total'], [8.0, 8.0, 8.0])


def test_missing_checkpoint_is_an_error_naming_it(tmp_path):
    checkpoint = str(tmp_path / 'model.ckpt-7')
    with pytest.raises(TowersError, match='cannot restore the network from checkpoint .*'
                                          r'model\.ckpt-7'):
        evaluation.predict(scale_net, checkpoint, np.ones([1, 1]), batch_size=1)


def test_checkpoint_without_the_networks_variables_is_an_error_naming_it(tmp_path):
    checkpoint = save_weight(str(tmp_path / 'model.ckpt'), 1.0)

    def other_net(inputs):
        bias = tf.get_variable('bias', [], initializer=tf.zeros_initializer())
        return {'y': bias + tf.cast(inputs, tf.float32)}

    with pytest.raises(TowersError, match=r"checkpoint .*model\.ckpt does not hold the "
                                          r"network's variables: Key bias not found"):
        evaluation.predict(other_net, checkpoint, np.ones([1, 1]), batch_size=1)


def test_classification_metrics_count_accuracy_overall_per_class_and_the_confusion_matrix():
    results = evaluation.classification_metrics(
        labels=[0, 0, 1, 1, 1, 2], predictions=[0, 1, 1, 1, 0, 2],
        class_names=['CNV', 'DME', 'NORMAL', 'DRUSEN'])
    assert results['num_examples'] == 6
    assert results['accuracy'] == pytest.approx(4 / 6)
    assert results['confusion_matrix'] == [[1, 1, 0, 0], [1, 2, 0, 0], [0, 0, 1, 0],
                                           [0, 0, 0, 0]]
    assert results['per_class']['DME'] == {'examples': 3, 'correct': 2,
                                           'accuracy': pytest.approx(2 / 3)}
    assert results['per_class']['DRUSEN'] == {'examples': 0, 'correct': 0, 'accuracy': None}
