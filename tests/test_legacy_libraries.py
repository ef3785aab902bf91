"""Specification of `towers.legacy.libraries`: under the runner, a TF1-era evaluation hands
`np.matrix` objects to scikit-learn's metrics, `float()` and matplotlib's `plot` as it did in
2019, with the results of the arrays they hold, and the exit line names each piece used."""
import json
import os
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

from towers.legacy import libraries
from towers.legacy.modules import Usage

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIECES = ('sklearn.metrics.precision_recall_curve(np.matrix)',
          'sklearn.metrics.roc_curve(np.matrix)', 'sklearn.metrics.auc(np.matrix)',
          'sklearn.metrics.roc_auc_score(np.matrix)',
          'sklearn.metrics.average_precision_score(np.matrix)', 'float(1x1 np.matrix)',
          'int(1x1 np.matrix)', 'matplotlib.lines.Line2D(np.matrix)')

# Each entry of `results` holds what a call with matrices gave, then the same call with the
# arrays they hold.
EVALUATION = '''
    import json
    import sys

    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    import numpy as np
    import tensorflow as tf
    from sklearn.metrics import (auc, average_precision_score, precision_recall_curve,
                                 roc_auc_score, roc_curve)

    labels = [0, 1, 1, 0, 1, 0, 1, 1]
    logits = tf.constant([[-2.0], [1.5], [0.3], [-0.2], [2.0], [0.8], [-1.0], [1.1]])
    with tf.Session() as sess:
        scores = sess.run(tf.sigmoid(logits))
    y_true, y_score = np.matrix(labels).T, np.matrix(scores)
    true_array, score_array = np.array(labels), scores.ravel()


    def listed(values):
        return [np.asarray(value).tolist() for value in values]


    def lines(plotted):
        return [line.get_xydata().tolist() for line in plotted]


    precision, recall, _ = precision_recall_curve(y_true, y_score)
    fpr, tpr, _ = roc_curve(y_true, y_score)
    results = {
        'precision_recall_curve': [listed(precision_recall_curve(y_true, y_score)),
                                   listed(precision_recall_curve(true_array, score_array))],
        'roc_curve': [listed(roc_curve(y_true, y_score)),
                      listed(roc_curve(true_array, score_array))],
        'auc': [auc(np.matrix(fpr).T, np.matrix(tpr).T), auc(fpr, tpr)],
        'roc_auc_score': [roc_auc_score(y_true, y_score),
                          roc_auc_score(true_array, score_array)],
        'average_precision_score': [average_precision_score(y_true, y_score=y_score),
                                    average_precision_score(true_array, score_array)],
        'float': [float(y_score.T * y_score), float((scores.T @ scores)[0, 0])],
        'int': [int(np.matrix([[7.9]])), int(7.9)],
        'plot of columns': [lines(plt.plot(np.matrix(recall).T, np.matrix(precision).T, 'b-')),
                            lines(plt.plot(recall, precision, 'b-'))],
        'plot of rows': [lines(plt.plot(np.matrix([1, 2, 3]), np.matrix([4, 5, 6]), 'o')),
                         lines(plt.plot(np.array([[1, 2, 3]]), np.array([[4, 5, 6]]), 'o'))],
    }
    plt.savefig(sys.argv[1])
    print(json.dumps(results))
    '''


@pytest.fixture(scope='module')
def evaluation_run(tmp_path_factory):
    """The evaluation, run once under the runner: (its process, its results, its figure)."""
    folder = tmp_path_factory.mktemp('legacy_libraries')
    script, figure = folder / 'evaluate.py', folder / 'curves.png'
    script.write_text(textwrap.dedent(EVALUATION))
    result = subprocess.run([sys.executable, '-m', 'towers.legacy', str(script), str(figure)],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result, json.loads(result.stdout.strip().splitlines()[-1]), figure


@pytest.mark.parametrize('call', ['precision_recall_curve', 'roc_curve', 'auc', 'roc_auc_score',
                                  'average_precision_score'])
def test_sklearn_metrics_take_matrix_columns_as_the_arrays_they_hold(evaluation_run, call):
    with_matrices, with_arrays = evaluation_run[1][call]
    assert with_matrices == with_arrays


def test_float_and_int_of_a_one_by_one_matrix_give_its_element(evaluation_run):
    results = evaluation_run[1]
    assert results['float'][0] == results['float'][1]
    assert results['int'] == [7, 7]


def test_plot_draws_a_matrix_column_as_one_line_as_its_array_does(evaluation_run):
    with_matrices, with_arrays = evaluation_run[1]['plot of columns']
    assert len(with_matrices) == 1 and with_matrices == with_arrays


def test_plot_draws_a_matrix_row_as_2019_did_one_line_per_column(evaluation_run):
    with_matrices, with_arrays = evaluation_run[1]['plot of rows']
    assert with_matrices == with_arrays == [[[1.0, 4.0]], [[2.0, 5.0]], [[3.0, 6.0]]]


def test_the_figure_is_written(evaluation_run):
    assert evaluation_run[2].stat().st_size > 0


def test_the_exit_line_lists_each_piece_used(evaluation_run):
    last = evaluation_run[0].stderr.strip().splitlines()[-1]
    assert last.startswith('towers-legacy: compatibility pieces used: ')
    for piece in PIECES:
        assert piece in last


@pytest.mark.filterwarnings('ignore::PendingDeprecationWarning')  # np.matrix's own
def test_a_function_taking_matrices_gets_arrays_and_records_only_calls_with_one():
    usage = Usage()
    shapes = libraries.taking_matrices(
        lambda *args, **kwargs: [(type(value).__name__, np.shape(value))
                                 for value in args + tuple(kwargs.values())],
        'f(np.matrix)', usage)
    assert shapes(np.array([1, 2]), [3]) == [('ndarray', (2,)), ('list', (1,))]
    assert usage.pieces == []
    assert shapes(np.matrix([1, 2]).T, y=np.matrix([[3]])) == [('ndarray', (2, 1)),
                                                                ('ndarray', (1, 1))]
    assert usage.pieces == ['f(np.matrix)']


def test_after_import_changes_a_module_after_its_own_code_ran_on_its_first_import(
        tmp_path, monkeypatch):
    name = 'legacy_after_import_probe'
    (tmp_path / (name + '.py')).write_text('VALUE = 1\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, 'meta_path', [libraries.AfterImport(
        {name: lambda module: setattr(module, 'VALUE', module.VALUE * 10)})] + sys.meta_path)
    try:
        module = __import__(name)
        assert module.VALUE == 10
        assert type(module.__loader__).__name__ == 'SourceFileLoader'
        del sys.modules[name]
        assert __import__(name).VALUE == 1
    finally:
        sys.modules.pop(name, None)


def test_cpuinfo_answers_with_the_keys_of_its_versions_before_7_too():
    usage = Usage()
    module = types.SimpleNamespace(get_cpu_info=lambda: {
        'brand_raw': 'AMD EPYC', 'hz_advertised': [2445428000, 0], 'count': 2})
    libraries._old_cpuinfo_keys(module, usage)
    info = module.get_cpu_info()
    assert usage.pieces == []
    assert (info['brand_raw'], info['count']) == ('AMD EPYC', 2)
    assert info['brand'] == 'AMD EPYC' and info['hz_advertised_raw'] == (2445428000, 0)
    assert usage.pieces == ["cpuinfo's pre-7 keys"]
