"""Specification of a worker's graph: where its variables and ops go, its optimizer and hooks,
and the session closing that keeps the SyncReplicas chief from hanging at the end."""
import time

import numpy as np
import pytest

import towers
from towers import cluster
from towers.devices import VariablePlacement
from towers.training.stopping import CloseSessionOnStopHook
from towers.compat import tf

WORKER = '/job:worker/task:1'
TOWER_DEVICES = [WORKER + '/cpu:0', WORKER + '/cpu:1']
SPEC = tf.train.ClusterSpec({'ps': ['localhost:2222', 'localhost:2223'],
                             'worker': ['localhost:2224', 'localhost:2225']})


def dense(inputs, units, name):
    with tf.variable_scope(name):
        kernel = tf.get_variable('kernel', [inputs.shape[1], units])
        bias = tf.get_variable('bias', [units], initializer=tf.zeros_initializer())
    return tf.matmul(inputs, kernel, name=name + '/MatMul') + bias


def two_layer_tower(shard):
    logits = dense(dense(shard, 3, 'hidden'), 2, 'logits')
    tf.losses.add_loss(tf.reduce_mean(logits ** 2))
    return {}


def build(placement, optimizer=None):
    """Builds the towers the way a script may: all of the graph in `tf.device(placement)`."""
    with tf.device(placement):
        global_step = tf.train.get_or_create_global_step()
        inputs = tf.constant(np.ones([4, 5], np.float32))
        optimizer = optimizer or tf.train.GradientDescentOptimizer(0.1)
        replicated = towers.build_towers(two_layer_tower, inputs, TOWER_DEVICES, optimizer,
                                         ps_device=placement)
        return replicated.train_op('total', global_step)


def canonical(device):
    return tf.DeviceSpec.from_string(device).to_string()


def devices_of(op_type):
    return {op.name: op.device for op in tf.get_default_graph().get_operations()
            if op.type == op_type}


def test_variables_go_round_robin_over_the_parameter_servers():
    build(VariablePlacement(2, WORKER))
    assert devices_of('VariableV2') == {
        'global_step': '/job:ps/task:0',
        'hidden/kernel': '/job:ps/task:1', 'hidden/bias': '/job:ps/task:0',
        'logits/kernel': '/job:ps/task:1', 'logits/bias': '/job:ps/task:0'}


def test_tower_ops_run_on_the_workers_tower_devices():
    build(VariablePlacement(2, WORKER))
    matmuls = devices_of('MatMul')
    assert [canonical(matmuls['tower_%d/hidden/MatMul' % i]) for i in (0, 1)] == [
        canonical(device) for device in TOWER_DEVICES]


def test_input_split_and_gradient_averaging_run_on_the_worker():
    build(VariablePlacement(2, WORKER))
    assert {op.device for op in tf.get_default_graph().get_operations()
            if op.name.startswith(('split', 'average_total/'))} == {WORKER}


def test_assign_to_device_asks_a_device_function_for_each_variable():
    device_fn = towers.assign_to_device('/gpu:0', ps_device=lambda op: '/job:ps/task:7')
    assert device_fn(tf.NodeDef(op='VariableV2')) == '/job:ps/task:7'
    assert device_fn(tf.NodeDef(op='Conv2D')) == '/gpu:0'


def test_sync_replicas_queues_live_on_the_parameter_servers_and_each_local_step_on_its_worker():
    worker = cluster.Worker(SPEC, 1, sync=True)
    optimizer = worker.wrap_optimizer(tf.train.GradientDescentOptimizer(0.1))
    assert isinstance(optimizer, tf.train.SyncReplicasOptimizer)
    build(VariablePlacement(2, WORKER), optimizer)
    assert devices_of('VariableV2')['sync_rep_local_step'] == WORKER
    assert devices_of('FIFOQueueV2')['sync_token_q'].startswith('/job:ps/')
    assert all(device.startswith('/job:ps/')
               for device in devices_of('ConditionalAccumulator').values())


def test_asynchronous_workers_keep_the_optimizer_and_need_no_hooks():
    worker = cluster.Worker(SPEC, 0, sync=False)
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    assert worker.wrap_optimizer(optimizer) is optimizer
    assert worker.hooks == []


def test_while_watching_the_parameter_servers_a_worker_tells_the_watch_of_each_session():
    worker = cluster.Worker(SPEC, 1, sync=False)
    with worker.watch_parameter_servers(60.0):
        hook_types = [type(h).__name__ for h in worker.hooks]
    assert hook_types == ['_ReachedHook']
    assert worker.hooks == []


def test_only_the_chief_closes_its_session_on_stop():
    hook_types = {}
    for index in (0, 1):
        worker = cluster.Worker(SPEC, index, sync=True)
        worker.wrap_optimizer(tf.train.GradientDescentOptimizer(0.1))
        hook_types[index] = [type(h).__name__ for h in worker.hooks]
    assert hook_types == {0: ['_SyncReplicasOptimizerHook', 'CloseSessionOnStopHook'],
                          1: ['_SyncReplicasOptimizerHook']}


def test_synchronous_hooks_need_the_wrapped_optimizer():
    with pytest.raises(towers.TowersError, match='wrap_optimizer'):
        cluster.Worker(SPEC, 0, sync=True).hooks


def test_master_needs_the_server_of_configure_devices():
    with pytest.raises(towers.TowersError, match='configure_devices'):
        cluster.Worker(SPEC, 0, sync=True).master


class _StartRunner(tf.train.SessionRunHook):
    def __init__(self, runner):
        self._runner = runner

    def after_create_session(self, session, coord):
        self._runner.create_threads(session, coord=coord, daemon=True, start=True)


def test_closing_cancels_a_queue_runner_waiting_for_gradients_at_once_and_without_error():
    # The SyncReplicas chief's queue runner: it waits in an accumulator for gradients that,
    # after the last step, never come.
    accumulator = tf.ConditionalAccumulator(tf.float32, shape=[])
    started = tf.FIFOQueue(1, tf.int32, shapes=[])
    with tf.control_dependencies([started.enqueue(1)]):
        taken = accumulator.take_grad(1)
    queue = tf.FIFOQueue(-1, tf.float32, shapes=[])
    runner = tf.train.QueueRunner(queue, [queue.enqueue(taken)])
    runner_started = started.dequeue()
    grace_secs = 60
    session = tf.train.MonitoredSession(
        hooks=[_StartRunner(runner), CloseSessionOnStopHook()],
        stop_grace_period_secs=grace_secs)
    session.run(runner_started)
    begin = time.monotonic()
    session.close()
    assert time.monotonic() - begin < grace_secs / 2
