"""Specification of the replicated mode: a copy of the variables per tower, gradients
all-reduced, checkpoints interchangeable with the parameter-server mode's."""
import os
import subprocess
import sys

import numpy as np
import pytest

import small_net
import towers
from models.datasets.cifar10 import synthetic as cifar10_synthetic
from towers import flags
from towers import cluster
from towers.compat import tf
from towers.replication.registry import PARAMETER_SERVER, REPLICATED, Mode
from towers.replication.all_reduce import communication

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEPS = 5


@pytest.fixture(scope='module')
def both_modes():
    """The small net trained STEPS steps on 3 towers in each mode."""
    return {update: small_net.train(Mode(update), num_towers=3, steps=STEPS, examples=12)
            for update in (PARAMETER_SERVER, REPLICATED)}


def test_replicated_training_reaches_the_parameter_server_variables(both_modes):
    _, ps_variables, _ = both_modes[PARAMETER_SERVER]
    _, replicated_variables, _ = both_modes[REPLICATED]
    assert set(replicated_variables) == set(ps_variables)
    for name, value in ps_variables.items():
        np.testing.assert_allclose(replicated_variables[name], value, rtol=1e-5, atol=1e-7,
                                   err_msg=name)


def test_replicated_training_logs_the_parameter_server_losses(both_modes):
    np.testing.assert_allclose(both_modes[REPLICATED][0], both_modes[PARAMETER_SERVER][0],
                               rtol=1e-5)


def test_every_tower_copy_equals_tower_0_variables_after_training(both_modes):
    _, variables, copies = both_modes[REPLICATED]
    assert [sorted(tower) for tower in copies] == [[], sorted(variables), sorted(variables)]
    for tower in copies:
        for name, value in tower.items():
            np.testing.assert_array_equal(value, variables[name], err_msg=name)


def test_tower_copies_are_local_variables_on_their_tower_devices():
    training, _ = small_net.assemble(Mode(REPLICATED), num_towers=2)
    copies = training.replicated.copies[1]
    assert sorted(c.op.name for c in copies.values()) == [
        'tower_1/conv/weights', 'tower_1/dense/biases', 'tower_1/dense/weights']
    local = tf.local_variables()
    for copy in copies.values():
        assert any(copy is v for v in local)
        assert tf.DeviceSpec.from_string(copy.device).device_index == 1


def test_tower_0s_all_reduced_gradients_can_be_fetched_without_the_train_op():
    # As the histograms of the averaged gradients are, by a summary run after the last step.
    training, setup = small_net.assemble(Mode(REPLICATED), num_towers=2)
    gradients = [grad for grad, _ in training.replicated.grads['total']]
    with tf.train.SingularMonitoredSession(config=setup.config) as session:
        values = session.run(gradients, options=tf.RunOptions(timeout_in_ms=60000))
    assert [value.shape for value in values] == [
        tuple(var.shape.as_list()) for _, var in training.replicated.grads['total']]


def test_the_saved_variables_are_those_of_the_parameter_server_mode():
    ps_names = small_net.saved_names(Mode(PARAMETER_SERVER))
    assert small_net.saved_names(Mode(REPLICATED)) == ps_names
    assert 'conv/weights/Momentum' in ps_names


def fit(mode, train_dir, max_steps):
    setup = towers.configure_devices(2)
    images, labels = small_net.batch(8)
    return towers.fit(small_net.SmallRecipe(),
                      lambda: (tf.constant(images), tf.constant(labels)), setup,
                      cluster.SingleProcess(), str(train_dir), max_steps, examples_per_step=8,
                      mode=mode, printer=lambda *args, **kwargs: None)


def checkpoint_values(train_dir):
    reader = tf.train.load_checkpoint(str(train_dir))
    return {name: reader.get_tensor(name) for name in reader.get_variable_to_shape_map()}


@pytest.mark.parametrize('first, second', [(PARAMETER_SERVER, REPLICATED),
                                           (REPLICATED, PARAMETER_SERVER)])
def test_a_checkpoint_written_in_one_mode_resumes_in_the_other(first, second, tmp_path):
    fit(Mode(PARAMETER_SERVER), tmp_path / 'straight', max_steps=4)
    fit(Mode(first), tmp_path / 'switched', max_steps=2)
    result = fit(Mode(second), tmp_path / 'switched', max_steps=4)
    assert result.steps_done == 4
    straight = checkpoint_values(tmp_path / 'straight')
    switched = checkpoint_values(tmp_path / 'switched')
    assert sorted(switched) == sorted(straight)
    for name, value in straight.items():
        # Momentum carries over: the copies' slots are set from tower 0's on restore.
        np.testing.assert_allclose(switched[name], value, rtol=1e-5, atol=1e-7, err_msg=name)


def test_a_model_sharing_its_variables_by_object_is_refused():
    shared = []

    def tower_fn(shard):
        images, labels = shard
        if not shared:
            with tf.name_scope(None):
                shared.append(tf.Variable(tf.zeros([small_net.CHANNELS, small_net.CLASSES]),
                                          name='shared_weights'))
        logits = tf.matmul(tf.reduce_mean(images, [1, 2]), shared[0])
        tf.losses.sparse_softmax_cross_entropy(labels, logits)

    images, labels = small_net.batch(4)
    with pytest.raises(towers.TowersError, match='tower 1 computes with shared_weights itself'):
        towers.build_replicated(tower_fn, (tf.constant(images), tf.constant(labels)),
                                ['/cpu:0', '/cpu:1'], tf.train.GradientDescentOptimizer(0.1))


def test_the_replicated_mode_is_refused_for_a_cluster_task():
    parser = flags.FlagParser()
    flags.add_training_flags(parser)
    args = parser.parse_args(['--variable_update', 'replicated', '--job_name', 'worker',
                              '--ps_hosts', 'localhost:2222', '--worker_hosts', 'localhost:2223'])
    with pytest.raises(towers.TowersError, match='--variable_update replicated trains in one '
                                                 'process'):
        cluster.from_flags(args, environ={})


@pytest.mark.parametrize('devices, physical_gpus, expected', [
    (['/cpu:0', '/cpu:1'], 0, 'ring'),
    (['/gpu:0', '/gpu:1', '/gpu:2', '/gpu:3'], 4, 'nccl'),
    (['/gpu:0', '/gpu:1', '/gpu:2', '/gpu:3'], 2, 'ring'),  # logical GPUs sharing one
])
def test_gradients_are_all_reduced_with_nccl_only_across_gpus_of_their_own(devices,
                                                                           physical_gpus,
                                                                           expected):
    assert communication(devices, physical_gpus) == expected


def test_the_cifar10_script_trains_in_the_mode_its_flags_name(tmp_path):
    batches_dir = tmp_path / cifar10_synthetic.GENERATED_DIR
    cifar10_synthetic.generate(str(batches_dir), records_per_file=5)
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, 'scripts', 'train_cifar10_multi_gpu.py'),
         '--num_gpus', '2', '--batch_size', '2', '--max_steps', '2', '--data_dir',
         str(tmp_path), '--train_dir', str(tmp_path / 'train'), '--variable_update=replicated',
         '--mixed_precision', '--noxla'],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert '2 towers: replicated, mixed precision' in result.stderr
    saved = set(tf.train.load_checkpoint(str(tmp_path / 'train')).get_variable_to_shape_map())
    assert {'conv1/weights', 'conv1/weights/ExponentialMovingAverage',
            'global_step'} <= saved
    assert not any(name.startswith('tower_') or 'loss_scale' in name for name in saved)
