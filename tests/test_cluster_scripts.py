"""Specification of the training scripts as tasks of a local cluster, through the launcher."""
import os
import re
import socket
import subprocess
import sys
import time

import pytest

from models.datasets.cifar10 import synthetic as cifar10_synthetic
from models.datasets.kolektor import synthetic as kolektor_synthetic
from task_process import Task
from towers.cluster import isolation
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


def children(pid):
    """The process ids whose parent is `pid`."""
    found = []
    for entry in os.listdir('/proc'):
        try:
            with open('/proc/%s/stat' % entry) as f:
                # pid (command) state ppid ...; the command may hold spaces.
                if int(f.read().rsplit(')', 1)[1].split()[1]) == pid:
                    found.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return found


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


def test_a_cifar10_cluster_through_the_launcher_listens_on_no_port_of_this_machine(tmp_path):
    deadline = time.monotonic() + TEST_SECS
    # A small data set fills the input's shuffling buffer at once.
    cifar10_synthetic.generate(str(tmp_path / 'data' / cifar10_synthetic.GENERATED_DIR),
                               records_per_file=20)
    cluster = Task('launcher', [
        sys.executable, LAUNCHER, '--ps', '1', '--workers', '2', '--num_gpus', '1', '--timeout',
        str(TEST_SECS - 30), '--', 'scripts/train_cifar10_multi_gpu.py', '--max_steps', '20',
        '--batch_size', '2', '--train_dir', str(tmp_path / 'train'), '--data_dir',
        str(tmp_path / 'data')], ROOT)
    try:
        ports = [int(port) for port in re.findall(r'localhost:(\d+)', cluster.wait_for_line(
            r'^\[launcher\] ps: .*; in a private network \(loopback only\)$', deadline))]
        for role in ('ps0', 'worker0', 'worker1'):
            cluster.wait_for_line(r'^\[%s\] INFO towers\.cluster\.roles: \S+ \d listens on '
                                  r'\S+(, \S+)* in a network whose only interface is loopback: '
                                  r'reachable only by processes inside it$' % role, deadline)
        # Every server has started; nothing of them is in this machine's own network.
        assert [isolation.listening_addresses(port) for port in ports] == [[]] * 3
        for port in ports:
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection(('127.0.0.1', port), timeout=5)
        # ... while in the tasks' network, they still listen (the launcher's other child, the
        # filter of its C++ log, `towers.console`, is in this machine's network).
        own_network = os.readlink('/proc/self/ns/net')
        task = next(pid for pid in children(cluster.process.pid)
                    if os.readlink('/proc/%d/ns/net' % pid) != own_network)
        assert all(isolation.listening_addresses(port, task) for port in ports)
        assert cluster.exit_status(deadline) == 0, cluster.output()
    finally:
        cluster.kill()
    assert newest_checkpoint(tmp_path / 'train').get_tensor('global_step') == 20
