"""Specification of the TF_CONFIG cluster convention (Kubeflow's TFJob, managed training):
parsed into the cluster flags, flags winning, and a local cluster started through it."""
import json
import os
import subprocess
import sys

import pytest

from towers import flags
from towers import cluster
from towers.cluster import tf_config
from towers.compat import tf
from towers.errors import TowersError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PS = ['ps-0:2222']
CHIEF = ['chief-0:2222']
WORKERS = ['worker-0:2222', 'worker-1:2222']


def value(task_type, index, jobs=None):
    jobs = {'chief': CHIEF, 'worker': WORKERS, 'ps': PS} if jobs is None else jobs
    return json.dumps({'cluster': jobs, 'task': {'type': task_type, 'index': index}})


def parse_flags(argv=()):
    parser = flags.FlagParser()
    flags.add_training_flags(parser)
    return parser.parse_args(list(argv))


def test_the_chief_is_worker_0_and_the_workers_follow_it():
    assert tf_config.cluster_flags(value('chief', 0)) == {
        'job_name': 'worker', 'task_index': 0, 'ps_hosts': PS,
        'worker_hosts': CHIEF + WORKERS}
    assert tf_config.cluster_flags(value('worker', 1))['task_index'] == 2


def test_without_a_chief_worker_0_is_the_chief():
    assert tf_config.cluster_flags(value('worker', 1, {'worker': WORKERS, 'ps': PS})) == {
        'job_name': 'worker', 'task_index': 1, 'ps_hosts': PS, 'worker_hosts': WORKERS}


def test_a_ps_task_is_the_parameter_server_of_its_index():
    assert tf_config.cluster_flags(value('ps', 0))['job_name'] == 'ps'


def test_a_lone_chief_without_parameter_servers_trains_alone():
    assert tf_config.cluster_flags(value('chief', 0, {'chief': CHIEF})) is None


def test_bad_json_is_an_error_naming_tf_config():
    with pytest.raises(TowersError, match=r'^TF_CONFIG is not JSON'):
        tf_config.cluster_flags('{"cluster": ')


def test_a_task_not_in_the_cluster_is_an_error_naming_it():
    with pytest.raises(TowersError, match=r'^TF_CONFIG task worker 2 is not in its cluster: '
                                          r'"worker" lists 2 task\(s\)'):
        tf_config.cluster_flags(value('worker', 2))


def test_an_unknown_task_type_is_an_error_naming_the_known_ones():
    with pytest.raises(TowersError, match=r"^TF_CONFIG task type 'evaluator' is not one of "
                                          r"chief, master, worker, ps"):
        tf_config.cluster_flags(value('evaluator', 0))


def test_a_cluster_without_parameter_servers_is_an_error():
    with pytest.raises(TowersError, match=r'^TF_CONFIG cluster has no "ps"'):
        tf_config.cluster_flags(value('worker', 0, {'chief': CHIEF, 'worker': WORKERS}))


def test_the_launchers_value_reads_back_as_the_same_task():
    ps_hosts, worker_hosts = ['localhost:1'], ['localhost:2', 'localhost:3']
    for job_name, task_index in (('ps', 0), ('worker', 0), ('worker', 1)):
        assert tf_config.cluster_flags(tf_config.task_value(
            ps_hosts, worker_hosts, job_name, task_index)) == {
                'job_name': job_name, 'task_index': task_index, 'ps_hosts': ps_hosts,
                'worker_hosts': worker_hosts}


def test_without_cluster_flags_the_role_comes_from_tf_config():
    role = cluster.from_flags(parse_flags(), {'TF_CONFIG': value('worker', 0)})
    assert (role.task_index, role.num_workers, role.num_ps) == (1, 3, 1)


def test_cluster_flags_win_over_tf_config():
    role = cluster.from_flags(
        parse_flags(['--job_name', 'ps', '--ps_hosts', 'localhost:1',
                     '--worker_hosts', 'localhost:2']),
        {'TF_CONFIG': value('worker', 0)})
    assert role.is_ps and role.num_workers == 1


def test_one_ps_and_two_workers_started_through_tf_config_reach_max_steps(tmp_path):
    command = [sys.executable, os.path.join(ROOT, 'scripts', 'launch_local_cluster.py'),
               '--ps', '1', '--workers', '2', '--num_gpus', '1', '--tf_config',
               '--timeout', '150', '--exit_grace', '30', '--',
               'tests/cluster_train_program.py', '--train_dir', str(tmp_path), '--max_steps', '3']
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    for task in ('[ps0] INFO towers.cluster.task: cluster from TF_CONFIG: ps task 0',
                 '[worker1] INFO towers.cluster.task: cluster from TF_CONFIG: worker task 1'):
        assert task in result.stdout
    reader = tf.train.NewCheckpointReader(tf.train.latest_checkpoint(str(tmp_path)))
    assert reader.get_tensor('global_step') == 3
