"""Specification of what a TF1 program under `--legacy_devices N` sees of its devices: the N GPUs
it was promised (virtual CPU devices listed as the GPUs they stand in for), and TF 1.x's mutable
`DeviceSpec` at its private path; then one run under the runner of a 2018-style program that
counts its GPUs, places variables with `GreedyLoadBalancingStrategy` and trains through
`learn_runner`."""
import json
import subprocess
import sys
import textwrap

from towers.compat import tf
from towers.legacy import devices
from towers.legacy.devices import device_lib, framework_device
from towers.legacy.modules import Usage


def test_virtual_cpu_devices_are_listed_as_the_gpus_they_stand_in_for():
    listed = devices.DeviceMap(2, Usage(), physical_gpus=0).local_devices(
        device_lib.list_local_devices)
    assert [(device.name, device.device_type) for device in listed] == [
        ('/device:CPU:0', 'CPU'), ('/device:GPU:0', 'GPU'), ('/device:GPU:1', 'GPU')]
    assert listed[2].physical_device_desc.startswith('virtual CPU device /device:CPU:1 standing '
                                                     'in for /gpu:1')


def test_logical_gpus_are_the_gpus_a_session_of_the_script_gets():
    device_map = devices.DeviceMap(3, Usage(), physical_gpus=0)
    assert device_map.logical_devices(device_lib.list_local_devices, 'GPU') == [
        tf.config.LogicalDevice('/device:GPU:%d' % i, 'GPU') for i in range(3)]
    assert [device.device_type for device in device_map.logical_devices(
        device_lib.list_local_devices)] == ['CPU', 'GPU', 'GPU', 'GPU']


def test_split_gpus_are_listed_with_the_scripts_session_config_and_its_virtual_devices():
    configs = []
    devices.DeviceMap(4, Usage(), physical_gpus=2).local_devices(
        lambda config: configs.append(config) or [], tf.ConfigProto(allow_soft_placement=True))
    assert configs[0].allow_soft_placement
    assert len(configs[0].gpu_options.experimental.virtual_devices) == 2


def test_the_private_device_spec_is_tf1s_mutable_one(monkeypatch):
    monkeypatch.setattr(framework_device, 'DeviceSpec', framework_device.DeviceSpec)
    devices.use_tf1_device_spec()
    spec = framework_device.DeviceSpec.from_string('/gpu:1')
    spec.merge_from(framework_device.DeviceSpec.from_string('/job:worker/task:2'))
    spec.device_index = 0
    assert spec.to_string() == '/job:worker/task:2/device:GPU:0'
    assert tf.DeviceSpec is framework_device.DeviceSpec


PROGRAM = '''
import json
import sys

import tensorflow as tf
from tensorflow.contrib.learn.python.learn import learn_runner
from tensorflow.python.client import device_lib
from tensorflow.python.framework import device as pydev

tf.logging.set_verbosity(tf.logging.INFO)
found = {'gpu_available': tf.test.is_gpu_available(),
         'built_with_cuda': tf.test.is_built_with_cuda(),
         'local': [d.name for d in device_lib.list_local_devices()],
         'logical_gpus': len(tf.config.list_logical_devices('GPU'))}
spec = pydev.DeviceSpec.from_string('/gpu:1')
spec.merge_from(pydev.DeviceSpec.from_string('/job:localhost'))
found['merged'] = spec.to_string()
try:
    tf.contrib.nn.something_missing
except AttributeError as err:
    found['missing'] = str(err)


def input_fn():
    x = tf.random_uniform([8, 4], seed=1)
    return {'x': x}, tf.cast(x[:, 0] > 0.5, tf.int64)


def device_setter(worker_device, ps_strategy):
    def choose(op):
        current = pydev.DeviceSpec.from_string(op.device or '')
        if op.node_def.op in ('VariableV2', 'VarHandleOp'):
            chosen = pydev.DeviceSpec.from_string('/gpu:%d' % ps_strategy(op))
        else:
            chosen = pydev.DeviceSpec.from_string(worker_device)
        chosen.merge_from(current)
        return chosen.to_string()
    return choose


def model_fn(features, labels, mode, params):
    strategy = tf.contrib.training.GreedyLoadBalancingStrategy(
        2, tf.contrib.training.byte_size_load_fn)
    losses, logits = [], []
    for i, (x, y) in enumerate(zip(tf.split(features['x'], 2), tf.split(labels, 2))):
        with tf.variable_scope('net', reuse=i > 0):
            with tf.device(device_setter('/gpu:%d' % i, strategy)):
                hidden = tf.layers.dense(x, params.units, tf.nn.selu, name='hidden')
                hidden = tf.contrib.nn.alpha_dropout(hidden, 0.9)
                logits.append(tf.layers.dense(hidden, 2, name='logits'))
            losses.append(tf.losses.sparse_softmax_cross_entropy(y, logits[-1]))
    found['variables'] = sorted({v.device for v in tf.global_variables() if 'net' in v.name})
    loss = tf.add_n(losses) / 2
    train_op = tf.train.AdamOptimizer(0.05).minimize(loss, tf.train.get_global_step(),
                                                     colocate_gradients_with_ops=True)
    accuracy = tf.metrics.accuracy(labels, tf.argmax(tf.concat(logits, 0), 1))
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op,
                                      eval_metric_ops={'accuracy': accuracy})


def experiment_fn(run_config, hparams):
    estimator = tf.estimator.Estimator(model_fn, config=run_config, params=hparams)
    return tf.contrib.learn.Experiment(estimator, input_fn, input_fn, train_steps=4,
                                       eval_steps=2)


result, _ = learn_runner.run(experiment_fn, run_config=tf.contrib.learn.RunConfig(
    model_dir=sys.argv[1]), hparams=tf.contrib.training.HParams(units=8))
found['global_step'] = int(result['global_step'])
print('FOUND ' + json.dumps(found))
'''


def test_a_2018_program_counts_its_gpus_balances_variables_and_runs_its_experiment(tmp_path):
    script = tmp_path / 'program.py'
    script.write_text(textwrap.dedent(PROGRAM))
    run = subprocess.run([sys.executable, '-m', 'towers.legacy', '--legacy_devices', '2',
                          str(script), str(tmp_path / 'model')],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    found = json.loads(run.stdout.split('FOUND ', 1)[1])
    assert found['gpu_available'] and found['logical_gpus'] == 2
    assert found['built_with_cuda'] == tf.test.is_built_with_cuda()
    assert found['local'] == ['/device:CPU:0', '/device:GPU:0', '/device:GPU:1']
    assert found['merged'] == '/job:localhost/device:GPU:1'
    assert found['missing'] == ("tf.contrib.nn.something_missing is not available: "
                                "towers-legacy's tf.contrib.nn does not have it; use tf.nn")
    assert found['variables'] == ['/device:CPU:0', '/device:CPU:1']
    assert found['global_step'] == 4
    assert 'Validation (step 1): ' in run.stderr
