"""Specification of mixed precision: float16 towers from float32 master weights, dynamic loss
scaling, training that stays close to float32's."""
import numpy as np
import pytest

import small_net
import towers
from towers.compat import tf
from towers.replication.registry import Mode
from towers.replication.precision import LossScaleOptimizer

STEPS = 30
# Measured: after 30 steps on 2 towers the losses of the two precisions differ by at most
# 4.9e-4 and each variable by 4.4e-4 of its norm; the tolerances leave a factor of 10.
LOSS_TOLERANCE = 5e-3
VARIABLE_TOLERANCE = 5e-3


@pytest.fixture(scope='module')
def float32_and_mixed():
    return [small_net.train(Mode(mixed_precision=mixed), num_towers=2, steps=STEPS,
                            examples=32) for mixed in (False, True)]


def test_mixed_precision_training_follows_the_float32_losses(float32_and_mixed):
    (float32_losses, _, _), (mixed_losses, _, _) = float32_and_mixed
    assert mixed_losses[-1] < 0.3 * mixed_losses[0]
    np.testing.assert_allclose(mixed_losses, float32_losses, rtol=0, atol=LOSS_TOLERANCE)


def test_mixed_precision_training_reaches_the_float32_variables(float32_and_mixed):
    (_, float32_variables, _), (_, mixed_variables, _) = float32_and_mixed
    for name, value in float32_variables.items():
        assert np.linalg.norm(mixed_variables[name] - value) <= (
            VARIABLE_TOLERANCE * np.linalg.norm(value)), name


def test_towers_compute_in_float16_from_float32_master_weights():
    small_net.assemble(Mode(mixed_precision=True), num_towers=2)
    convolutions = [op for op in tf.get_default_graph().get_operations()
                    if op.type == 'Conv2D']
    assert [op.name.split('/')[0] for op in convolutions] == ['tower_0', 'tower_1']
    assert all(op.get_attr('T') == tf.float16 for op in convolutions)
    assert {v.op.name: v.dtype.base_dtype for v in tf.trainable_variables()} == {
        'conv/weights': tf.float32, 'dense/weights': tf.float32, 'dense/biases': tf.float32}


def test_mixed_precision_saves_the_variables_of_a_float32_run():
    assert small_net.saved_names(Mode(mixed_precision=True)) == small_net.saved_names(Mode())


def loss_scaled_step(growth_interval=2000):
    """A variable w = 1, the loss w * x for a fed x, one loss-scaled gradient-descent step."""
    weight = tf.get_variable('w', [], initializer=tf.ones_initializer())
    x = tf.placeholder(tf.float32, [])
    global_step = tf.train.get_or_create_global_step()
    optimizer = LossScaleOptimizer(tf.train.GradientDescentOptimizer(0.5),
                                   initial_scale=1024.0, growth_interval=growth_interval)
    step = optimizer.apply_gradients(optimizer.compute_gradients(weight * x, [weight]),
                                     global_step)
    return weight, x, global_step, optimizer.loss_scale, step


def test_a_step_with_a_non_finite_gradient_is_skipped_and_halves_the_loss_scale():
    weight, x, global_step, loss_scale, step = loss_scaled_step()
    with tf.train.SingularMonitoredSession() as session:
        session.run(step, {x: np.inf})
        assert session.run([weight, global_step, loss_scale]) == [1.0, 1, 512.0]
        session.run(step, {x: 2.0})
        # The gradient is unscaled again: w - 0.5 * 2.
        assert session.run([weight, global_step, loss_scale]) == [0.0, 2, 512.0]


def test_the_loss_scale_doubles_after_growth_interval_finite_steps():
    _, x, _, loss_scale, step = loss_scaled_step(growth_interval=3)
    with tf.train.SingularMonitoredSession() as session:
        scales = []
        for _ in range(7):
            session.run(step, {x: 1.0})
            scales.append(session.run(loss_scale))
    assert scales == [1024.0, 1024.0, 2048.0, 2048.0, 2048.0, 4096.0, 4096.0]


class GradientHistogramRecipe(small_net.SmallRecipe):
    """The small net with the CIFAR-10 tutorial's histograms of the averaged gradients."""

    def summaries(self, replicated, learning_rate):
        return [tf.summary.histogram(var.op.name + '/gradients', grad)
                for grad, var in replicated.grads['total']]


@pytest.mark.parametrize('variable_update', ['parameter_server', 'replicated'])
def test_a_skipped_step_shows_zero_gradients_in_the_recipes_summaries(variable_update):
    # An image of 1e4 overflows the float16 logits: the gradients are not finite, the step is
    # skipped, and the tutorial's gradient histograms must not stop the run.
    images, labels = small_net.batch(4)
    images[0] = 1e4
    setup = towers.configure_devices(2)
    training = towers.assemble(GradientHistogramRecipe(),
                               lambda: (tf.constant(images), tf.constant(labels)), setup,
                               mode=Mode(variable_update, mixed_precision=True))
    with tf.train.SingularMonitoredSession(config=setup.config) as session:
        before = {v.op.name: session.run(v) for v in tf.trainable_variables()}
        _, summary = session.run([training.train_ops['total'], training.summary_op])
        after = {v.op.name: session.run(v) for v in tf.trainable_variables()}
    event = tf.Summary.FromString(summary)
    histograms = {value.tag: value.histo for value in event.value if value.HasField('histo')}
    assert set(histograms) == {name + '/gradients' for name in before}
    assert all(h.min == h.max == 0 for h in histograms.values())
    for name, value in before.items():
        np.testing.assert_array_equal(after[name], value)
