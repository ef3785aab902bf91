"""TF 2.15's RNN estimators (`tf.estimator.experimental.RNNClassifier`, `RNNEstimator`, under
`--tf2`): their variables are TF 2.15's names and shapes, evaluation gives TF 2.15's keys and
figures from the same checkpoint, and padded steps do not count.

The figures were measured on TensorFlow 2.15.1 + tensorflow-estimator 2.15.0 (/tmp/tf215): the
same input, the same checkpoint (written by `_write_checkpoint` with TF 2.15's variable list),
`evaluate`, `train(steps=3)` by the default 'Adagrad' (0.05, clip norm 5), `evaluate` again,
and the first prediction of `predict` then.
"""
import itertools

import numpy as np
import pytest

from towers.compat import tf
from towers.legacy.estimator.canned.head_v2 import RegressionHead
from towers.legacy.estimator.canned.rnn import RNNClassifier, RNNEstimator
from towers.legacy.estimator.namespace import Namespace
from towers.legacy.estimator.spec import EstimatorError
from towers.legacy.modules import Usage

LENGTHS = [4, 2, 3, 1, 4, 3, 2, 4]
LABELS = {'binary': [[0], [1], [1], [0], [1], [0], [0], [1]],
          'three': [[0], [2], [1], [0], [2], [1], [0], [2]],
          'regression': [[0.5], [-1.0], [0.25], [2.0], [0.0], [-0.5], [1.0], [1.5]]}
BINARY_KEYS = {'accuracy', 'accuracy_baseline', 'auc', 'auc_precision_recall', 'average_loss',
               'global_step', 'label/mean', 'loss', 'precision', 'prediction/mean', 'recall'}
CLASS_PREDICTIONS = {'all_class_ids', 'all_classes', 'class_ids', 'classes', 'logits',
                     'probabilities'}
_EMBEDDING = {'sequence_features/tok_embedding/embedding_weights': [5, 3]}


def _model_variables(rnn, cell, cell_width, classes):
    """TF 2.15's model variables (name -> shape) of an RNN of 4 units over x and tok."""
    return dict(_EMBEDDING, **{
        'rnn_model/%s/%s/kernel' % (rnn, cell): [4, cell_width],
        'rnn_model/%s/%s/recurrent_kernel' % (rnn, cell): [4, cell_width],
        'rnn_model/%s/%s/bias' % (rnn, cell): [2, 12] if cell == 'gru_cell' else [cell_width],
        'rnn_model/logits/kernel': [4, classes], 'rnn_model/logits/bias': [classes]})


# case -> (labels, units, cell_type, TF 2.15's model variables, its evaluation at step 0,
# after 3 steps, and the first example's prediction then ('logits' or 'predictions')).
CASES = {
    'lstm_binary': ('binary', 4, 'lstm', _model_variables('lstm', 'lstm_cell', 16, 1), {
        'accuracy': 0.75, 'accuracy_baseline': 0.5, 'auc': 0.75,
        'auc_precision_recall': 0.6273963451385498, 'average_loss': 0.6837548017501831,
        'label/mean': 0.5, 'loss': 0.6837548017501831, 'precision': 0.75,
        'prediction/mean': 0.49679845571517944, 'recall': 0.75, 'global_step': 0}, {
        'accuracy': 0.75, 'accuracy_baseline': 0.5, 'auc': 0.78125,
        'auc_precision_recall': 0.7523963451385498, 'average_loss': 0.6825571656227112,
        'label/mean': 0.5, 'loss': 0.6825571656227112, 'precision': 0.75,
        'prediction/mean': 0.4969126582145691, 'recall': 0.75, 'global_step': 3},
        [-0.08232669532299042]),
    'gru_three': ('three', 4, 'gru', _model_variables('gru', 'gru_cell', 12, 3), {
        'accuracy': 0.25, 'average_loss': 1.1857775449752808, 'loss': 1.1857775449752808,
        'global_step': 0}, {
        'accuracy': 0.25, 'average_loss': 1.1544694900512695, 'loss': 1.1544694900512695,
        'global_step': 3}, [-0.7135775089263916, 0.005485355854034424, -0.3776048719882965]),
    'lstm_list_three': ('three', [4], 'lstm', _model_variables('rnn', 'lstm_cell', 16, 3), {
        'accuracy': 0.25, 'average_loss': 1.1562892198562622, 'loss': 1.1562892198562622,
        'global_step': 0}, {
        'accuracy': 0.25, 'average_loss': 1.1366405487060547, 'loss': 1.1366405487060547,
        'global_step': 3}, [-0.1536230742931366, -0.1260261833667755, -0.48960503935813904]),
    'gru_regression': ('regression', 4, 'gru', _model_variables('gru', 'gru_cell', 12, 1), {
        'average_loss': 2.1800243854522705, 'label/mean': 0.46875, 'loss': 2.1800243854522705,
        'prediction/mean': -0.5892118215560913, 'global_step': 0}, {
        'average_loss': 1.531877875328064, 'label/mean': 0.46875, 'loss': 1.531877875328064,
        'prediction/mean': -0.2524416148662567, 'global_step': 3}, [-0.5867717266082764]),
}


def _columns():
    return [tf.feature_column.sequence_numeric_column('x'), tf.feature_column.embedding_column(
        tf.feature_column.sequence_categorical_column_with_identity('tok', 5), 3)]


def _features(lengths=LENGTHS, rows=None):
    """x and tok of 8 examples of `lengths` steps (padded to 4), or the examples `rows`."""
    rng = np.random.RandomState(0)
    x, tok = rng.randn(8, 4).astype(np.float32), rng.randint(0, 5, size=(8, 4))
    rows = range(8) if rows is None else rows
    indices = [[i, t] for i, row in enumerate(rows) for t in range(lengths[row])]
    steps = max(lengths[row] for row in rows)
    picked = [(rows[i], t) for i, t in indices]
    return {'x': tf.SparseTensor(indices, [x[r, t] for r, t in picked], [len(rows), steps]),
            'tok': tf.SparseTensor(indices, [tok[r, t] for r, t in picked], [len(rows), steps])}


def _input_fn(labels):
    return lambda: (_features(), tf.constant(LABELS[labels]))


def _estimator(case, model_dir):
    labels, units, cell_type = CASES[case][:3]
    if labels == 'regression':
        return RNNEstimator(RegressionHead(), _columns(), units=units, cell_type=cell_type,
                            model_dir=model_dir)
    return RNNClassifier(_columns(), units=units, cell_type=cell_type, model_dir=model_dir,
                         n_classes=2 if labels == 'binary' else 3)


def _tf215_variables(model_variables):
    """All the variables TF 2.15's checkpoint held: the model's, Adagrad's and global_step."""
    return dict(model_variables, global_step=[], **{
        'training/Adagrad/decay': [], 'training/Adagrad/learning_rate': []}, **{
        'training/Adagrad/%s/accumulator' % name: shape
        for name, shape in model_variables.items()})


def _write_checkpoint(model_dir, variables):
    """model.ckpt-0 of `variables` (name -> shape): the model's drawn uniformly in
    [-0.5, 0.5) in name order (seed 1), Adagrad's accumulators 0.1, learning rate 0.05."""
    fixed = {'global_step': np.int64(0), 'training/Adagrad/learning_rate': np.float32(0.05),
             'training/Adagrad/decay': np.float32(0)}
    rng = np.random.RandomState(1)
    with tf.Graph().as_default():
        made = []
        for name in sorted(variables):
            if name in fixed:
                value = fixed[name]
            elif name.endswith('/accumulator'):
                value = np.full(variables[name], 0.1, np.float32)
            else:
                value = rng.uniform(-0.5, 0.5, variables[name]).astype(np.float32)
            made.append(tf.Variable(value, name=name))
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            tf.train.Saver(made).save(session, str(model_dir / 'model.ckpt'), global_step=0)


def _from_checkpoint(case, tmp_path):
    model_dir = tmp_path / case
    _write_checkpoint(model_dir, _tf215_variables(CASES[case][3]))
    return _estimator(case, str(model_dir))


@pytest.mark.parametrize('case', sorted(CASES))
def test_rnn_estimators_evaluate_and_train_as_tf215_from_the_same_checkpoint(case, tmp_path):
    labels, _, _, model_variables, at_start, after_3, first = CASES[case]
    estimator = _from_checkpoint(case, tmp_path)
    assert estimator.evaluate(_input_fn(labels), steps=1) == pytest.approx(at_start, rel=1e-5)
    estimator.train(_input_fn(labels), steps=3)
    assert estimator.evaluate(_input_fn(labels), steps=1) == pytest.approx(after_3, rel=1e-5)
    prediction = next(estimator.predict(lambda: _features()))
    assert prediction.get('logits', prediction.get('predictions')) == pytest.approx(
        first, rel=1e-5, abs=1e-6)
    assert dict(tf.train.list_variables(estimator.model_dir)) == _tf215_variables(
        model_variables)


def test_rnn_classifier_evaluation_and_predictions_have_tf215_keys(tmp_path):
    estimator = _estimator('lstm_binary', str(tmp_path))
    estimator.train(_input_fn('binary'), steps=1)
    assert set(estimator.evaluate(_input_fn('binary'), steps=1)) == BINARY_KEYS
    assert set(next(estimator.predict(lambda: _features()))) == CLASS_PREDICTIONS | {
        'logistic'}


def test_steps_past_an_example_length_do_not_change_its_prediction(tmp_path):
    estimator = _from_checkpoint('gru_regression', tmp_path)
    # Example 1 has 2 steps: beside example 6's 2, and beside example 0's 4 (padded to 4).
    # (A batch of one fails in Keras' while loop, on TF 2.15 too.)
    unpadded, padded = (
        list(itertools.islice(estimator.predict(lambda rows=rows: _features(rows=rows)), 2))
        for rows in ([1, 6], [0, 1]))
    assert padded[1]['predictions'] == pytest.approx(unpadded[0]['predictions'], abs=1e-6)


def test_rnn_cell_fn_with_units_or_cell_type_is_refused():
    with pytest.raises(EstimatorError, match='units and cell_type must not be specified'):
        RNNClassifier(_columns(), units=[4], rnn_cell_fn=lambda: None)


def test_many_to_many_is_refused_with_the_missing_piece_named():
    with pytest.raises(EstimatorError, match='SequentialHeadWrapper'):
        RNNClassifier(_columns(), units=4, cell_type='lstm', return_sequences=True)
    with pytest.raises(EstimatorError, match='must be a `_SequentialHead` object'):
        RNNEstimator(RegressionHead(), _columns(), units=4, cell_type='lstm',
                     return_sequences=True)


def test_tf2_face_gives_rnn_estimators_in_experimental_only():
    namespace = Namespace(Usage(), tf2=True)
    experimental = namespace.root.experimental
    assert (experimental.RNNClassifier, experimental.RNNEstimator) == (RNNClassifier,
                                                                      RNNEstimator)
    assert not hasattr(namespace.v1.experimental, 'RNNClassifier')
