"""Specification of device placement: variables on the parameter device, tower ops on their own."""
import logging

import numpy as np
import pytest

import towers
from towers.compat import tf

# Tower devices distinct from the parameter device, so that a variable left on tower 0 shows.
PS_DEVICE = '/cpu:0'
TOWER_DEVICES = ['/cpu:1', '/cpu:2']
SESSION_CONFIG = tf.ConfigProto(device_count={'CPU': 3})


def build(use_resource):
    def conv_tower(shard):
        weights = tf.get_variable('conv/weights', [3, 3, 2, 4], use_resource=use_resource)
        conv = tf.nn.conv2d(shard, weights, [1, 1, 1, 1], 'SAME')
        tf.losses.add_loss(tf.reduce_mean(conv ** 2))
        return {}

    images = tf.constant(np.ones([4, 5, 5, 2], np.float32))
    return towers.build_towers(conv_tower, images, TOWER_DEVICES,
                               tf.train.GradientDescentOptimizer(0.1), ps_device=PS_DEVICE)


def placed_devices(fetch):
    """Maps node name -> the device the runtime ran it on, from the partition graphs."""
    options = tf.RunOptions(output_partition_graphs=True)
    metadata = tf.RunMetadata()
    with tf.Session(config=SESSION_CONFIG) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(fetch, options=options, run_metadata=metadata)
    return {node.name: node.device for graph in metadata.partition_graphs for node in graph.node}


@pytest.mark.parametrize('use_resource, variable_op', [(False, 'VariableV2'),
                                                      (True, 'VarHandleOp')])
def test_variable_ops_are_assigned_to_the_parameter_device(use_resource, variable_op):
    build(use_resource)
    variable_ops = [op for op in tf.get_default_graph().get_operations()
                    if op.type == variable_op]
    assert [op.name for op in variable_ops] == ['conv/weights']
    assert variable_ops[0].device == PS_DEVICE


@pytest.mark.parametrize('use_resource', [False, True])
def test_each_tower_computes_on_its_own_device(use_resource):
    build(use_resource)
    convs = [op for op in tf.get_default_graph().get_operations() if op.type == 'Conv2D']
    assert sorted((op.name.split('/')[0], op.device) for op in convs) == [
        ('tower_0', '/cpu:1'), ('tower_1', '/cpu:2')]


@pytest.mark.parametrize('use_resource', [False, True])
def test_runtime_places_variables_on_parameter_device_and_towers_on_theirs(use_resource):
    replicated = build(use_resource)
    placed = placed_devices(replicated.train_op())
    assert placed['conv/weights'].endswith('CPU:0')
    assert placed['tower_0/Conv2D'].endswith('CPU:1')
    assert placed['tower_1/Conv2D'].endswith('CPU:2')


def test_classic_variable_op_types_are_parameter_ops():
    assert {'VariableV2', 'VarHandleOp'} <= towers.PS_OPS
    device_fn = towers.assign_to_device('/gpu:3', ps_device='/cpu:0')
    assert device_fn(tf.NodeDef(op='VarHandleOp')) == '/cpu:0'
    assert device_fn(tf.NodeDef(op='MatMul')) == '/gpu:3'


def test_no_gpu_gives_virtual_cpu_devices_and_says_so_in_one_log_line(caplog):
    with caplog.at_level(logging.INFO, logger='towers'):
        setup = towers.configure_devices(4, physical_gpus=0)
    assert [r.getMessage() for r in caplog.records] == [
        'devices: 4 towers on 4 virtual CPU devices (no GPU found); variables on /cpu:0']
    assert setup.tower_devices == ['/cpu:0', '/cpu:1', '/cpu:2', '/cpu:3']
    assert setup.config.device_count['CPU'] == 4
    assert 'virtual CPU' in setup.description
    with tf.Session(config=setup.config) as sess:
        assert sum('CPU' in d.name for d in sess.list_devices()) == 4


def test_enough_gpus_give_one_tower_per_gpu():
    setup = towers.configure_devices(2, physical_gpus=4)
    assert setup.tower_devices == ['/gpu:0', '/gpu:1']
    assert not setup.config.gpu_options.experimental.virtual_devices


def test_fewer_gpus_than_towers_are_split_into_logical_gpus():
    setup = towers.configure_devices(5, physical_gpus=2, logical_gpu_memory_mb=1000)
    assert setup.tower_devices == ['/gpu:%d' % i for i in range(5)]
    virtual = setup.config.gpu_options.experimental.virtual_devices
    assert [list(v.memory_limit_mb) for v in virtual] == [[1000.0] * 3, [1000.0] * 2]
    assert 'logical GPUs' in setup.description


def test_session_config_carries_placement_logging_and_thread_pools():
    setup = towers.configure_devices(1, log_device_placement=True, intra_op_threads=2,
                                     inter_op_threads=3, physical_gpus=0)
    assert setup.config.log_device_placement
    assert setup.config.allow_soft_placement
    assert setup.config.intra_op_parallelism_threads == 2
    assert setup.config.inter_op_parallelism_threads == 3


def test_zero_towers_is_an_error_naming_the_flag():
    with pytest.raises(towers.TowersError, match='--num_gpus'):
        towers.configure_devices(0)
