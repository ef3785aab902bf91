"""Specification of SegDecNet on towers: the three train ops and the tower equivalence."""
import types

import numpy as np
import pytest

import towers
from models.segdec import model as segdec
from models.segdec.recipe import SegDecRecipe
from models.segdec.regression import regression_batch, regression_initial_values
from towers.compat import tf

# The smallest square input on which every layer gets a gradient: at 64x64 the decision net's
# last convolution has one output pixel, which batch norm over one image maps to its beta.
SIZE = 128


def _build(num_towers):
    """SegDecNet's training graph on virtual CPU towers of one image each, fed by
    placeholders."""
    setup = towers.configure_devices(num_towers)
    inputs = (tf.placeholder(tf.float32, [num_towers, SIZE, SIZE, 1]),
              tf.placeholder(tf.float32, [num_towers, SIZE // 8, SIZE // 8, 1]),
              tf.placeholder(tf.int32, [num_towers]))
    graph = towers.assemble(SegDecRecipe(segdec.SegDecNet(), 0.01), lambda: inputs, setup)
    return graph, inputs, setup.config


def _start(sess):
    """Initialises every variable to the regression recipe's values (seed 0)."""
    variables = tf.global_variables()
    initial = regression_initial_values({v.op.name: v.shape.as_list() for v in variables})
    for variable in variables:
        variable.load(initial[variable.op.name], sess)


@pytest.fixture(scope='module')
def ops():
    """One 2-tower graph: what each train op averages gradients for, and which variables one
    step of it changes (each op from the same start)."""
    with tf.Graph().as_default():
        graph, inputs, config = _build(2)
        variables = tf.global_variables()
        feed = dict(zip(inputs, regression_batch(0, 2, SIZE, SIZE)))
        changed = {}
        with tf.Session(config=config) as sess:
            for name, train_op in graph.train_ops.items():
                _start(sess)
                before = sess.run(variables)
                sess.run(train_op, feed)
                changed[name] = {v.op.name for v, b, a in zip(variables, before,
                                                              sess.run(variables))
                                 if not np.array_equal(b, a)}
        return types.SimpleNamespace(
            changed=changed,
            trained={name: {v.op.name for _, v in pairs}
                     for name, pairs in graph.replicated.grads.items()},
            variables={scope: {v.op.name for v in tf.global_variables(scope + '/')}
                       for scope in ('segment', 'decision')},
            trainable={scope: {v.op.name for v in tf.trainable_variables(scope + '/')}
                       for scope in ('segment', 'decision')})


def test_segment_op_changes_segmentation_variables_and_statistics_only(ops):
    assert ops.changed['segment'] == ops.variables['segment'] | {'global_step'}


def test_decision_op_changes_decision_variables_and_statistics_only(ops):
    assert ops.changed['decision'] == ops.variables['decision'] | {'global_step'}


def test_total_op_changes_every_variable(ops):
    assert ops.changed['total'] == (ops.variables['segment'] | ops.variables['decision']
                                    | {'global_step'})


def test_each_objective_averages_the_gradients_of_its_own_scope(ops):
    assert ops.trained['segment'] == ops.trainable['segment']
    assert ops.trained['decision'] == ops.trainable['decision']
    assert ops.trained['total'] == ops.trainable['segment'] | ops.trainable['decision']


def test_two_tower_gradients_average_the_single_tower_gradients_of_their_shards():
    """With batch norm on batch statistics, two towers of one image each compute the mean of
    the gradients that one tower computes on each image alone (not the gradient of the
    two-image batch, whose statistics would mix the images)."""
    batch = regression_batch(0, 2, SIZE, SIZE)

    def gradients(num_towers, feeds):
        with tf.Graph().as_default():
            graph, inputs, config = _build(num_towers)
            pairs = sorted(graph.replicated.grads['total'], key=lambda p: p[1].op.name)
            with tf.Session(config=config) as sess:
                _start(sess)
                return [sess.run([g for g, _ in pairs], dict(zip(inputs, feed)))
                        for feed in feeds]

    [together] = gradients(2, [batch])
    alone = gradients(1, [[array[i:i + 1] for array in batch] for i in range(2)])
    assert len(together) == 30
    for index, gradient in enumerate(together):
        expected = (alone[0][index] + alone[1][index]) / 2
        assert np.abs(gradient).max() > 0
        np.testing.assert_allclose(gradient, expected, rtol=1e-3,
                                   atol=1e-4 * np.abs(expected).max())
