"""Specification of the ResNet recipe: the warmup + cosine schedule, its scaling with the global
batch, and the momentum optimizer."""
import math

import numpy as np
import pytest

import towers
from models.imagenet import model, recipe
from towers.compat import tf


def rates(schedule, steps):
    step = tf.placeholder(tf.int64, [])
    rate = schedule(step)
    with tf.Session() as sess:
        return [sess.run(rate, {step: s}) for s in steps]


def test_schedule_warms_up_linearly_then_follows_the_cosine_down_to_alpha():
    # Peak 0.1, warmup 10 steps, cosine over steps 10..110 down to 0.01 x 0.1.
    schedule = recipe.Schedule(peak=0.1, warmup_steps=10, total_steps=110, alpha=0.01)
    expected = {
        0: 0.0,                                       # warmup starts at 0
        5: 0.05,                                      # halfway up
        10: 0.1,                                      # end of warmup: the peak
        35: 0.1 * (0.99 * 0.5 * (1 + math.cos(math.pi / 4)) + 0.01),
        60: 0.1 * (0.99 * 0.5 + 0.01),                # mid-cosine
        110: 0.001,                                   # end: alpha x peak
        500: 0.001,                                   # and there it stays
    }
    np.testing.assert_allclose(rates(schedule, list(expected)), list(expected.values()),
                               rtol=1e-6, atol=1e-9)


def test_reference_schedule_on_imagenet_is_one_warmup_epoch_of_10009_steps_in_50():
    schedule = recipe.Schedule.from_epochs(1281167, 128)
    assert schedule == recipe.Schedule(0.05, 10009, 50 * 10009, 1e-4)


def test_learning_rate_scales_with_the_global_batch_unless_given():
    assert recipe.Schedule.from_epochs(1281167, 8 * 64).peak == pytest.approx(0.2)
    assert recipe.Schedule.from_epochs(1281167, 8 * 64, learning_rate=0.3).peak == 0.3
    on_towers = recipe.ResNetRecipe(model.ResNet(), batch_size=64, examples_per_epoch=1281167)
    assert on_towers.schedule(num_towers=4) == recipe.Schedule.from_epochs(1281167, 256)


def test_epochs_count_steps_of_the_global_batch():
    schedule = recipe.Schedule.from_epochs(1000, 32, epochs=10, warmup_epochs=0.5)
    assert (schedule.warmup_steps, schedule.total_steps) == (15, 310)


def test_a_global_batch_larger_than_an_epoch_is_an_error():
    with pytest.raises(towers.TowersError, match='global batch of 256 examples is larger than '
                                                 'the 100 examples of an epoch'):
        recipe.Schedule.from_epochs(100, 256)


@pytest.mark.parametrize('nesterov, second_step', [(False, 1.9), (True, 0.9 * 1.9 + 1)])
def test_optimizer_is_sgd_with_momentum_0_9(nesterov, second_step):
    # The loss w has gradient 1: plain momentum moves by 1 then 1.9 learning rates.
    weight = tf.get_variable('w', [], initializer=tf.zeros_initializer())
    optimizer = recipe.ResNetRecipe(model.ResNet(), 1, 1, nesterov=nesterov).optimizer(0.1)
    step = optimizer.minimize(weight)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(step)
        first = sess.run(weight)
        sess.run(step)
        second = sess.run(weight)
    assert first == pytest.approx(-0.1 * (1.9 if nesterov else 1.0))
    assert second - first == pytest.approx(-0.1 * second_step)
