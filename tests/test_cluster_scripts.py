"""Specification of the training scripts as tasks of a local cluster, through the launcher."""
import os
import subprocess
import sys

from towers.compat import tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAUNCHER = os.path.join(ROOT, 'scripts', 'launch_local_cluster.py')
TEST_SECS = 240


def test_cifar10_script_trains_as_one_ps_and_two_workers_and_every_task_exits(tmp_path):
    train_dir = tmp_path / 'train'
    command = [sys.executable, LAUNCHER, '--ps', '1', '--workers', '2', '--num_gpus', '2',
               '--timeout', str(TEST_SECS - 30), '--',
               'scripts/train_cifar10_multi_gpu.py', '--max_steps', '12', '--batch_size', '8',
               '--train_dir', str(train_dir), '--data_dir', str(tmp_path / 'data')]
    finished = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                              timeout=TEST_SECS)
    output = finished.stdout + finished.stderr
    assert finished.returncode == 0, output
    for role in ('[ps0]', '[worker0]', '[worker1]'):
        assert any(line.startswith(role) for line in output.splitlines()), role
    assert '[worker0] ' in output and 'step 10, loss = ' in output
    assert 'every process exited with status 0' in output
    # The chief alone wrote the checkpoint; synchronous updates: one global step per step.
    reader = tf.train.NewCheckpointReader(tf.train.latest_checkpoint(str(train_dir)))
    assert reader.get_tensor('global_step') == 12.0
    assert reader.has_tensor('conv1/weights/ExponentialMovingAverage')
