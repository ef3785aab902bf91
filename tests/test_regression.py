"""Specification of the generic regression: the same start and batches through two builders,
figures compared with tolerances, the shared report, and checkpoints evaluated with a var list."""
import numpy as np
import pytest

import towers
from towers import regression
from towers.compat import tf

NUM_TOWERS = 2
_rng = np.random.RandomState(0)
BATCHES = [(_rng.standard_normal([4, 3]).astype(np.float32),
            _rng.standard_normal([4, 1]).astype(np.float32)) for _ in range(2)]
WEIGHTS = {'linear/w': _rng.standard_normal([3, 1]).astype(np.float32),
           'linear/b': np.array([0.5], np.float32)}


class LinearRecipe(towers.Recipe):
    """A linear regression whose prediction is scaled by a constant, the port's "detail"."""

    def __init__(self, scale=1.0):
        self.scale = scale

    def learning_rate(self, global_step, num_towers):
        return 0.1

    def tower_fn(self, batch):
        x, y = batch
        with tf.variable_scope('linear'):
            w = tf.get_variable('w', [3, 1])
            b = tf.get_variable('b', [1])
        tf.losses.mean_squared_error(y, self.scale * tf.matmul(x, w) + b)
        return {}


def _tower_losses(replay):
    """Each tower's loss fetched with each of the two training steps, by 'step <s>, tower <t>'."""
    figures = {}
    for step, batch in enumerate(BATCHES):
        losses, _ = replay.run((replay.training.replicated.tower_losses,
                                replay.training.train_ops['total']), batch)
        figures.update({'step %d, tower %d' % (step, tower): float(loss)
                        for tower, loss in enumerate(losses)})
    return figures


def _measure(recipe, initial_values=lambda shapes: WEIGHTS, measure=_tower_losses):
    return regression.measure_training(recipe, BATCHES[0], NUM_TOWERS, initial_values, measure)


def _compare(original, port):
    comparison = regression.Comparison('linear')
    comparison.close_each('tower losses', 'steps and towers with a loss', 'tower loss at %s',
                          _measure(original), _measure(port), 1e-6)
    return comparison.deviations


def test_equal_builders_pass_every_figure(capsys):
    deviations = _compare(LinearRecipe(), LinearRecipe())
    assert len(deviations) == 1 + 2 * NUM_TOWERS
    assert not [d for d in deviations if d.failed]
    assert regression.report(deviations)
    assert 'OK: all 5 figures within tolerance' in capsys.readouterr().out


def test_a_changed_constant_fails_naming_the_figures(capsys):
    deviations = _compare(LinearRecipe(), LinearRecipe(scale=1.01))
    failed = [d.what for d in deviations if d.failed]
    assert failed and all(what.startswith('tower loss at step') for what in failed)
    assert not regression.report(deviations)
    out = capsys.readouterr().out
    assert 'FAILED: %d of 5 figures beyond tolerance' % len(failed) in out
    assert 'tower loss at step 0, tower 0' in out


def test_a_missing_initial_value_is_an_error_naming_the_variable():
    with pytest.raises(towers.TowersError, match='no initial value for variable.* linear/b'):
        _measure(LinearRecipe(), lambda shapes: {'linear/w': WEIGHTS['linear/w']})


def test_an_initial_value_of_another_shape_is_an_error_naming_the_variable():
    values = dict(WEIGHTS, **{'linear/w': np.zeros([3, 2], np.float32)})
    with pytest.raises(towers.TowersError, match=r'linear/w has shape \[3, 2\], the variable '
                                                 r'\[3, 1\]'):
        _measure(LinearRecipe(), lambda shapes: values)


def test_initial_values_are_asked_for_with_every_variable_but_the_global_step():
    asked = []
    _measure(LinearRecipe(), lambda shapes: asked.append(shapes) or WEIGHTS,
             lambda replay: None)
    assert asked == [{'linear/w': [3, 1], 'linear/b': [1]}]


def test_restart_sets_the_variables_and_global_step_back():
    def measure(replay):
        replay.run(replay.training.train_ops['total'], BATCHES[0])
        replay.restart()
        return replay.run((tf.global_variables('linear/'), replay.training.global_step))

    (w, b), step = _measure(LinearRecipe(), measure=measure)
    np.testing.assert_array_equal(w, WEIGHTS['linear/w'])
    np.testing.assert_array_equal(b, WEIGHTS['linear/b'])
    assert step == 0


def test_a_figure_reported_only_never_fails_and_is_not_ranked(capsys):
    comparison = regression.Comparison('1')
    comparison.close('sums', 'sum of w', 1.0, 2.0, None, relative=True)
    comparison.exact('steps', 'decay steps', 100, 100)
    assert comparison.deviations[0].error == 1.0 and not comparison.deviations[0].failed
    assert regression.report(comparison.deviations)
    out = capsys.readouterr().out
    assert 'sum of w' not in out
    assert 'OK: all 1 figures within tolerance (1 more reported only)' in out


def test_a_failed_exact_check_ranks_first(capsys):
    comparison = regression.Comparison('1')
    comparison.close('losses', 'loss', 1.0, 1.5, 1.0)
    comparison.exact('names', 'variables', ['a', 'b'], ['a'])
    assert not regression.report(comparison.deviations, show=1)
    out = capsys.readouterr().out
    assert 'run 1  variables' in out and 'run 1  loss' not in out
    assert 'FAILED: 1 of 2 figures beyond tolerance' in out


def test_a_checkpoint_is_evaluated_with_the_var_list_given(tmp_path):
    prefix = str(tmp_path / 'model.ckpt')
    with tf.Graph().as_default():
        shadow = tf.get_variable('w/shadow', initializer=np.float32([[2.0], [0.0], [1.0]]))
        with tf.Session() as sess:
            sess.run(shadow.initializer)
            tf.train.Saver([shadow]).save(sess, prefix)

    def build(batch):
        x, _ = batch
        w = tf.get_variable('w', [3, 1])
        return {'prediction': tf.matmul(x, w)}

    outputs = regression.evaluate_checkpoint(
        build, prefix, BATCHES, lambda: {'w/shadow': tf.global_variables()[0]})
    for output, (x, _) in zip(outputs, BATCHES):
        np.testing.assert_allclose(output['prediction'], x.dot([[2.0], [0.0], [1.0]]),
                                   rtol=1e-6)


def test_a_checkpoint_without_the_networks_variables_is_an_error_naming_it(tmp_path):
    with pytest.raises(towers.TowersError, match='nothing.ckpt'):
        regression.evaluate_checkpoint(
            lambda batch: {'w': tf.get_variable('w', [1])}, str(tmp_path / 'nothing.ckpt'),
            BATCHES)
