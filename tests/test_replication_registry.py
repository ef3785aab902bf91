"""Specification of the replication registry (towers/replication/registry.py): every mode by
name behind one interface, and the one place that says what a mode can train."""
import numpy as np
import pytest

import small_net
import towers
from towers import flags, replication
from towers.compat import tf
from towers.replication import precision, registry
from towers.training import side_by_side


class KerasLikeRecipe(small_net.SmallRecipe):
    """Declares what a recipe calling one Keras model in every tower declares."""
    variables_shared_by_object = True


def assemble(recipe, mode):
    images, labels = small_net.batch(4)
    return towers.assemble(recipe, lambda: (tf.constant(images), tf.constant(labels)),
                           towers.configure_devices(2), mode=mode)


@pytest.mark.parametrize('update', registry.VARIABLE_UPDATES)
def test_every_training_mode_builds_the_towers_behind_one_interface(update):
    images, labels = small_net.batch(4)
    build = registry.get(update).builder()
    replicated = build(small_net.tower_fn, (tf.constant(images), tf.constant(labels)),
                       ['/cpu:0', '/cpu:1'], tf.train.GradientDescentOptimizer(0.1))
    assert len(replicated.towers) == 2
    assert sorted(replicated.grads) == ['total']
    with tf.Session(config=towers.configure_devices(2).config) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.local_variables_initializer())
        before = sess.run(replicated.tower_losses)
        for _ in range(3):
            sess.run(replicated.train_op('total'))
        assert np.mean(sess.run(replicated.tower_losses)) < np.mean(before)


def test_the_variable_update_flag_offers_the_modes_that_train():
    parser = flags.FlagParser()
    flags.add_training_flags(parser)
    choices = next(action.choices for action in parser._actions
                   if action.dest == 'variable_update')
    assert list(choices) == ['parameter_server', 'replicated']
    assert registry.MIRRORED in registry.MODES and not registry.get(registry.MIRRORED).trains
    with pytest.raises(flags.FlagError, match="invalid choice: 'mirrored'"):
        parser.parse_args(['--variable_update', 'mirrored'])


def test_a_recipe_sharing_a_keras_model_by_object_is_refused_the_replicated_mode_by_name():
    with pytest.raises(towers.TowersError, match=r"^KerasLikeRecipe shares one Keras model's "
                                                 r"variables between the towers by object; "
                                                 r"--variable_update replicated copies"):
        assemble(KerasLikeRecipe(), towers.Mode('replicated'))
    assert not tf.global_variables()


def test_a_recipe_sharing_a_keras_model_by_object_is_refused_mixed_precision():
    with pytest.raises(towers.TowersError, match='mixed precision needs float16 towers'):
        assemble(KerasLikeRecipe(), towers.Mode(mixed_precision=True))


def test_a_recipe_sharing_a_keras_model_by_object_trains_in_the_parameter_server_mode_with_xla():
    for mode in (towers.Mode(), towers.Mode(xla=True)):
        assert registry.unsupported(mode, KerasLikeRecipe()) is None


def test_models_side_by_side_are_refused_the_modes_that_sum_the_towers_losses_themselves():
    models = side_by_side.SideBySideRecipe([('small', small_net.SmallRecipe())])
    assert 'sums each model\'s losses inside the shared tower function' in \
        registry.unsupported(towers.Mode('replicated'), models)
    assert 'train it in float32' in registry.unsupported(towers.Mode(mixed_precision=True),
                                                        models)
    assert registry.unsupported(towers.Mode(xla=True), models) is None


def test_a_cluster_task_is_refused_a_mode_that_trains_in_one_process():
    assert registry.unsupported(towers.Mode('replicated'), in_cluster=True).startswith(
        '--variable_update replicated trains in one process')
    assert registry.unsupported(towers.Mode(), in_cluster=True) is None


def test_xla_and_mixed_precision_wrap_the_tower_function_in_one_place():
    images, labels = small_net.batch(4)
    replicated = replication.build(towers.Mode(xla=True, mixed_precision=True),
                                   small_net.tower_fn, (tf.constant(images), tf.constant(labels)),
                                   ['/cpu:0'], replication.wrap_optimizer(
                                       towers.Mode(mixed_precision=True),
                                       tf.train.GradientDescentOptimizer(0.1)))
    compiled = [op for op in tf.get_default_graph().get_operations()
                if op.name.startswith('tower_0/conv/') and op.type == 'Conv2D']
    assert compiled and all(op.get_attr('_XlaCompile') for op in compiled)
    assert {op.get_attr('T') for op in compiled} == {tf.float16}
    assert isinstance(replicated.optimizer, precision.LossScaleOptimizer)
