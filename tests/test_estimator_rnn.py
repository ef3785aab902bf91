"""TF 2.15's RNN estimators (`tf.estimator.experimental.RNNClassifier`, `RNNEstimator`, under
`--tf2`): their variables are TF 2.15's names and shapes, evaluation gives TF 2.15's keys and
figures from the same checkpoint, padded steps do not count, and many-to-many (`return_sequences`)
classifiers predict every step and count the masked ones as TF 2.15.

The figures were measured on TensorFlow 2.15.1 + tensorflow-estimator 2.15.0 (/tmp/tf215): the
same input, the same checkpoint (written by `_write_checkpoint` with TF 2.15's variable list),
`evaluate`, `train(steps=3)` by the default 'Adagrad' (0.05, clip norm 5), `evaluate` again,
and the first prediction of `predict` then.
"""
import itertools

import numpy as np
import pytest

from towers.compat import tf
from towers.legacy.estimator.canned.head_sequential import SequentialHeadWrapper
from towers.legacy.estimator.canned.head_v2 import RegressionHead
from towers.legacy.estimator.canned.head_v2_multi import MultiHead
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


# Many-to-many (`return_sequences=True`): case -> (cell_type, classes, whether a weight per
# step 'w' is the weight column, whether the features give the mask 'sequence_mask' (each
# example's length less one step), and TF 2.15's evaluation at step 0, after 3 steps, and the
# first example's logits then (4 steps)), from the checkpoint of `_write_checkpoint`.
MANY_TO_MANY = {
    'lstm_binary': ('lstm', 2, False, False, {
        'accuracy': 0.6521739363670349, 'accuracy_baseline': 0.5652173757553101,
        'auc': 0.684615433216095, 'auc_precision_recall': 0.5671035051345825,
        'average_loss': 0.683784008026123, 'global_step': 0, 'label/mean': 0.43478259444236755,
        'loss': 0.683784008026123, 'precision': 0.6666666865348816,
        'prediction/mean': 0.4917692244052887, 'recall': 0.4000000059604645}, {
        'accuracy': 0.6086956262588501, 'accuracy_baseline': 0.5652173757553101,
        'auc': 0.7000000476837158, 'auc_precision_recall': 0.5721689462661743,
        'average_loss': 0.6819530725479126, 'global_step': 3, 'label/mean': 0.43478259444236755,
        'loss': 0.6819530725479126, 'precision': 0.6666666865348816,
        'prediction/mean': 0.4848921298980713, 'recall': 0.20000000298023224},
        [[-0.10616010427474976], [-0.06324580311775208], [-0.06245863065123558],
         [-0.10656954348087311]]),
    'gru_three_weighted': ('gru', 3, True, False, {
        'accuracy': 0.3215927183628082, 'average_loss': 1.129757046699524, 'global_step': 0,
        'loss': 1.451511263847351}, {
        'accuracy': 0.3966567814350128, 'average_loss': 1.0864629745483398, 'global_step': 3,
        'loss': 1.3958871364593506},
        [[-0.7036774158477783, -0.19678884744644165, -0.40391480922698975],
         [-0.6232874989509583, -0.3480268716812134, -0.3917079567909241],
         [-0.7248626351356506, -0.2128448486328125, -0.3089306652545929],
         [-0.8667441606521606, 0.04442387819290161, -0.26315662264823914]]),
    'lstm_binary_given_mask': ('lstm', 2, False, True, {
        'accuracy': 0.5, 'accuracy_baseline': 0.625, 'auc': 0.5249999761581421,
        'auc_precision_recall': 0.3593694567680359, 'average_loss': 0.6877167224884033,
        'global_step': 0, 'label/mean': 0.375, 'loss': 0.6877167224884033, 'precision': 0.0,
        'prediction/mean': 0.4887486696243286, 'recall': 0.0}, {
        'accuracy': 0.5625, 'accuracy_baseline': 0.625, 'auc': 0.5583332777023315,
        'auc_precision_recall': 0.37067633867263794, 'average_loss': 0.6823235154151917,
        'global_step': 3, 'label/mean': 0.375, 'loss': 0.6823235154151917, 'precision': 0.0,
        'prediction/mean': 0.4765521287918091, 'recall': 0.0},
        [[-0.1255003958940506], [-0.08446435630321503], [-0.08249052613973618],
         [-0.12454862892627716]]),
}


def _step_data(classes):
    """A label per step [8, 4] (padded steps too) and a weight per step, drawn after x and tok
    from the same generator."""
    rng = np.random.RandomState(0)
    rng.randn(8, 4), rng.randint(0, 5, size=(8, 4))
    labels = rng.randint(0, classes, size=(8, 4)).astype(np.int64)
    return labels, rng.uniform(0.5, 2.0, size=(8, 4)).astype(np.float32)


@pytest.mark.parametrize('case', sorted(MANY_TO_MANY))
def test_many_to_many_classifiers_evaluate_train_and_predict_each_step_as_tf215(case, tmp_path):
    cell_type, classes, weighted, given_mask, at_start, after_3, first = MANY_TO_MANY[case]
    rnn, cell, width = {'lstm': ('lstm', 'lstm_cell', 16), 'gru': ('gru', 'gru_cell', 12)}[
        cell_type]
    model_variables = _model_variables(rnn, cell, width, 1 if classes == 2 else classes)
    _write_checkpoint(tmp_path, _tf215_variables(model_variables))
    labels, weights = _step_data(classes)
    mask = np.arange(4)[None, :] < np.maximum(np.array(LENGTHS) - 1, 1)[:, None]

    def features():
        found = _features()
        if weighted:
            found['w'] = tf.constant(weights)
        if given_mask:
            found['sequence_mask'] = tf.constant(mask)
        return found

    estimator = RNNClassifier(_columns(), units=4, cell_type=cell_type, return_sequences=True,
                              model_dir=str(tmp_path), n_classes=classes,
                              weight_column='w' if weighted else None)
    input_fn = lambda: (features(), tf.constant(labels))  # noqa: E731
    assert estimator.evaluate(input_fn, steps=1) == pytest.approx(at_start, rel=1e-5)
    estimator.train(input_fn, steps=3)
    assert estimator.evaluate(input_fn, steps=1) == pytest.approx(after_3, rel=1e-5)
    prediction = next(estimator.predict(features))
    np.testing.assert_allclose(prediction['logits'], first, rtol=1e-5, atol=1e-6)
    # Every step is predicted; the mask (given, or each example's length) comes with them.
    assert prediction['class_ids'].shape == (4, 1)
    np.testing.assert_array_equal(prediction['sequence_mask'],
                                  mask[0] if given_mask else [True] * 4)
    assert dict(tf.train.list_variables(estimator.model_dir)) == _tf215_variables(
        model_variables)


def test_a_many_to_many_estimator_needs_a_sequential_head():
    with pytest.raises(EstimatorError, match='must be a `_SequentialHead` object'):
        RNNEstimator(RegressionHead(), _columns(), units=4, cell_type='lstm',
                     return_sequences=True)
    head = SequentialHeadWrapper(RegressionHead(), 'mask')
    assert RNNEstimator(head, _columns(), units=4, cell_type='lstm', return_sequences=True)
    with pytest.raises(EstimatorError, match='`MultiHead` is not supported'):
        SequentialHeadWrapper(MultiHead([RegressionHead(name='a'), RegressionHead(name='b')]))


def test_tf2_face_gives_rnn_estimators_in_experimental_only():
    namespace = Namespace(Usage(), tf2=True)
    experimental = namespace.root.experimental
    assert (experimental.RNNClassifier, experimental.RNNEstimator) == (RNNClassifier,
                                                                      RNNEstimator)
    assert not hasattr(namespace.v1.experimental, 'RNNClassifier')
    # TF 2.15's estimator_lib held them too.
    library = namespace.resolve('tensorflow_estimator.python.estimator.estimator_lib')
    assert (library.RNNClassifier, library.RNNEstimator) == (RNNClassifier, RNNEstimator)
