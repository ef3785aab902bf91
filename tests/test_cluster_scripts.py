"""Specification of the training scripts as tasks of a local cluster, through the launcher."""
import os
import subprocess
import sys

from models.datasets.kolektor import synthetic as kolektor_synthetic
from towers.compat import tf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAUNCHER = os.path.join(ROOT, 'scripts', 'launch_local_cluster.py')
TEST_SECS = 240


def launch(script_and_flags, num_gpus):
    """Runs 1 ps + 2 workers of `script_and_flags`; returns the launcher's output, asserting
    that every task printed and exited with status 0."""
    command = [sys.executable, LAUNCHER, '--ps', '1', '--workers', '2', '--num_gpus',
               str(num_gpus), '--timeout', str(TEST_SECS - 30), '--'] + script_and_flags
    finished = subprocess.run(command, cwd=ROOT, capture_output=True, text=True,
                              timeout=TEST_SECS)
    output = finished.stdout + finished.stderr
    assert finished.returncode == 0, output
    for role in ('[ps0]', '[worker0]', '[worker1]'):
        assert any(line.startswith(role) for line in output.splitlines()), role
    assert 'every process exited with status 0' in output
    return output


def newest_checkpoint(train_dir):
    return tf.train.NewCheckpointReader(tf.train.latest_checkpoint(str(train_dir)))


def test_cifar10_script_trains_as_one_ps_and_two_workers_and_every_task_exits(tmp_path):
    output = launch(['scripts/train_cifar10_multi_gpu.py', '--max_steps', '12',
                     '--batch_size', '8', '--train_dir', str(tmp_path / 'train'),
                     '--data_dir', str(tmp_path / 'data')], num_gpus=2)
    assert 'step 10, loss = ' in output
    # The chief alone wrote the checkpoint; synchronous updates: one global step per step.
    reader = newest_checkpoint(tmp_path / 'train')
    assert reader.get_tensor('global_step') == 12.0
    assert reader.has_tensor('conv1/weights/ExponentialMovingAverage')


def test_segdec_script_trains_both_stages_as_a_cluster_and_every_task_exits(tmp_path):
    data_dir = str(tmp_path / 'kolektor')
    kolektor_synthetic.write_dataset(data_dir, num_items=5, parts_per_item=4, height=256,
                                     width=128, defect_fraction=0.3)
    output = launch(['scripts/train_segdec.py', '--image_height', '128', '--image_width', '64',
                     '--max_steps', '4', '--decision_steps', '3', '--data_dir', data_dir,
                     '--train_dir', str(tmp_path / 'train')], num_gpus=1)
    assert output.count('stage decision: until global step 7') == 2
    assert newest_checkpoint(tmp_path / 'train').get_tensor('global_step') == 7
