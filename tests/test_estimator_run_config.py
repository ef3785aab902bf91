"""Specification of `tf.estimator.RunConfig` as TF 1.15 had it: the settings it refuses, what
`replace` allows, and what `TF_CONFIG` makes of a task (cluster, master, chief, global id,
model_dir, service, session config)."""
import json
import types

import pytest

from towers.compat import tf
from towers.legacy.estimator import (Estimator, EstimatorSpec, EvalSpec, RunConfig, TrainSpec,
                                     cluster, train_and_evaluate)

CLUSTER = {'chief': ['host0:0'], 'ps': ['host1:1', 'host2:2'],
           'worker': ['host3:3', 'host4:4', 'host5:5']}


@pytest.fixture
def tf_config(monkeypatch):
    """Sets TF_CONFIG to the JSON of a dict."""
    return lambda value: monkeypatch.setenv('TF_CONFIG', json.dumps(value))


@pytest.fixture(autouse=True)
def no_tf_config(monkeypatch):
    monkeypatch.delenv('TF_CONFIG', raising=False)


@pytest.mark.parametrize('setting, value, phrase', [
    ('model_dir', '', 'model_dir should be non-empty'),
    ('save_summary_steps', -1, 'save_summary_steps should be >= 0'),
    ('save_checkpoints_steps', -1, 'save_checkpoints_steps should be >= 0'),
    ('session_config', {}, 'session_config must be instance of ConfigProto'),
    ('keep_checkpoint_max', -1, 'keep_checkpoint_max should be >= 0'),
    ('keep_checkpoint_every_n_hours', 0, 'keep_checkpoint_every_n_hours should be > 0'),
    ('log_step_count_steps', 0, 'log_step_count_steps should be > 0'),
    ('tf_random_seed', '1', 'tf_random_seed must be integer'),
    ('experimental_max_worker_delay_secs', '5', 'must be an integer if set'),
    ('session_creation_timeout_secs', 0, 'session_creation_timeout_secs should be > 0'),
    ('protocol', 'http', 'protocol should be grpc or grpc[+]verbs'),
])
def test_settings_tf115_refused_raise_value_errors_naming_them(setting, value, phrase):
    with pytest.raises(ValueError, match=phrase):
        RunConfig(**{setting: value})
    with pytest.raises(ValueError, match=phrase):
        RunConfig().replace(**{setting: value})


def test_a_device_fn_must_take_exactly_the_op():
    assert RunConfig(device_fn=lambda op: '/cpu:0').device_fn('any') == '/cpu:0'
    for device_fn in (lambda x: '/cpu:0', lambda op, other: '/cpu:0'):
        with pytest.raises(ValueError, match='device_fn must be callable with exactly one '
                                             'argument "op"'):
            RunConfig(device_fn=device_fn)


def test_none_turns_every_setting_off():
    config = RunConfig(tf_random_seed=None, save_summary_steps=None, save_checkpoints_secs=None,
                       keep_checkpoint_max=None, keep_checkpoint_every_n_hours=None)
    assert (config.save_summary_steps, config.save_checkpoints_secs,
            config.save_checkpoints_steps, config.keep_checkpoint_every_n_hours) == (
                None, None, None, None)


def test_both_checkpoint_intervals_are_refused_in_tf115s_words():
    phrase = '`save_checkpoints_steps` and `save_checkpoints_secs` cannot be both set.'
    with pytest.raises(ValueError, match=phrase):
        RunConfig(save_checkpoints_steps=1, save_checkpoints_secs=2)
    with pytest.raises(ValueError, match=phrase):
        RunConfig().replace(save_checkpoints_steps=1, save_checkpoints_secs=2)


def test_replacing_one_checkpoint_interval_turns_the_other_off():
    steps = RunConfig().replace(save_checkpoints_steps=100)
    assert (steps.save_checkpoints_steps, steps.save_checkpoints_secs) == (100, None)
    secs = steps.replace(save_checkpoints_secs=200)
    assert (secs.save_checkpoints_steps, secs.save_checkpoints_secs) == (None, 200)
    off = secs.replace(save_checkpoints_secs=None)
    assert (off.save_checkpoints_steps, off.save_checkpoints_secs) == (None, None)


def test_replace_refuses_the_cluster_properties_and_unknown_names():
    for name in ('master', 'some_undefined_property'):
        with pytest.raises(ValueError, match='Replacing .*is not supported'):
            RunConfig().replace(**{name: 'x'})


def test_replace_keeps_the_cluster_of_construction(tf_config):
    tf_config({'cluster': CLUSTER, 'task': {'type': 'worker', 'index': 1}})
    config = RunConfig()
    tf_config({})
    assert config.replace(model_dir='/tmp/x').master == 'grpc://host4:4'


def test_tf_config_model_dir_is_the_default_and_must_agree(tf_config):
    tf_config({'model_dir': '/tmp/123'})
    assert RunConfig().model_dir == '/tmp/123'
    assert RunConfig(model_dir='/tmp/123').model_dir == '/tmp/123'
    with pytest.raises(ValueError, match='must have the same value as the model_dir in '
                                         'TF_CONFIG'):
        RunConfig(model_dir='/tmp/456')
    tf_config({'model_dir': ''})
    with pytest.raises(ValueError, match='model_dir in TF_CONFIG should be non-empty'):
        RunConfig()


def test_tf_config_service_is_returned_and_must_be_a_dict(tf_config):
    assert RunConfig().service is None
    tf_config({'service': {'key': [1, 2]}})
    assert RunConfig().service == {'key': [1, 2]}
    tf_config({'service': 789})
    with pytest.raises(TypeError, match='"service" is set in TF_CONFIG, it must be a dict'):
        RunConfig()


def test_without_a_cluster_tf_config_gives_the_masters_and_allows_worker_0_only(tf_config):
    tf_config({'session_master': '_my_master', 'eval_session_master': '_my_eval'})
    config = RunConfig()
    assert (config.master, config.evaluation_master, config.is_chief, config.task_type) == (
        '_my_master', '_my_eval', True, 'worker')
    tf_config({'task': {'type': 'chief', 'index': 0}})
    with pytest.raises(ValueError, match='task type must be WORKER'):
        RunConfig()
    tf_config({'task': {'type': 'worker', 'index': 1}})
    with pytest.raises(ValueError, match='task index must be 0'):
        RunConfig()


def test_a_one_task_cluster_runs_in_process(tf_config):
    for chief in ('chief', 'master'):
        tf_config({'cluster': {chief: ['host0:0']}, 'task': {'type': chief, 'index': 0}})
        config = RunConfig()
        assert (config.master, config.is_chief, config.num_worker_replicas) == ('', True, 1)


def test_tf_config_session_master_overrides_the_tasks_address(tf_config):
    tf_config({'cluster': CLUSTER, 'task': {'type': 'chief', 'index': 0},
               'session_master': '_my_master'})
    assert RunConfig().master == '_my_master'


def test_the_evaluator_is_outside_the_training_cluster(tf_config):
    tf_config({'cluster': CLUSTER, 'task': {'type': 'evaluator', 'index': 12},
               'eval_session_master': 'grpc://123'})
    config = RunConfig()
    assert config.cluster_spec.as_dict() == {}
    assert (config.task_id, config.master, config.evaluation_master, config.is_chief) == (
        12, '', 'grpc://123', False)
    assert (config.num_worker_replicas, config.num_ps_replicas,
            config.global_id_in_cluster, config.session_config) == (0, 0, None, None)


@pytest.mark.parametrize('cluster, task, phrase', [
    ({'worker': ['a:1']}, {'type': 'worker', 'index': 0},
     'If "cluster" is set .* it must have one "chief" node'),
    ({'chief': ['a:1', 'b:1']}, {'type': 'chief', 'index': 0},
     'The "cluster" in TF_CONFIG must have only one "chief" node'),
    ({'master': ['a:1', 'b:1']}, {'type': 'master', 'index': 0},
     'The "cluster" in TF_CONFIG must have only one "master" node'),
    ({'master': ['a:1'], 'chief': ['b:1']}, {'type': 'master', 'index': 0},
     'If `master` node exists in `cluster`, job `chief` is not supported'),
    ({'master': ['a:1']}, {'type': 'evaluator', 'index': 0},
     'If `master` node exists in `cluster`, task_type `evaluator` is not supported'),
    ({'chief': ['a:1']}, {}, 'If "cluster" is set .* task type must be set'),
    ({'chief': ['a:1']}, {'type': 'chief'}, 'If "cluster" is set .* task index must be set'),
    ({'chief': ['a:1']}, {'type': 'evaluator', 'index': -1},
     'Task index must be non-negative number'),
    ({'chief': ['a:1']}, {'type': 'chief', 'index': 1}, 'is not a valid task_id'),
    ({'chief': ['a:1']}, {'type': 'worker', 'index': 0}, 'is not a valid task_type'),
])
def test_a_tf_config_cluster_tf115_refused_raises_its_value_error(tf_config, cluster, task,
                                                                   phrase):
    tf_config({'cluster': cluster, 'task': task})
    with pytest.raises(ValueError, match=phrase):
        RunConfig()


def test_global_ids_put_the_chief_first_other_jobs_by_name_and_the_ps_last(tf_config):
    jobs = dict(CLUSTER, other_type=['host6:1', 'host7:2'])
    ids = {}
    for task_type, index in (('chief', 0), ('other_type', 1), ('worker', 2), ('ps', 1)):
        tf_config({'cluster': jobs, 'task': {'type': task_type, 'index': index}})
        ids[task_type] = RunConfig().global_id_in_cluster
    assert ids == {'chief': 0, 'other_type': 2, 'worker': 5, 'ps': 7}


@pytest.mark.parametrize('task_type, index, filters', [
    ('chief', 0, ['/job:ps', '/job:chief']),
    ('worker', 1, ['/job:ps', '/job:worker/task:1']),
    ('ps', 1, ['/job:ps', '/job:worker', '/job:chief', '/job:master']),
])
def test_a_cluster_task_without_a_session_config_sees_only_the_parameter_servers(
        tf_config, task_type, index, filters):
    tf_config({'cluster': CLUSTER, 'task': {'type': task_type, 'index': index}})
    config = RunConfig().session_config
    assert list(config.device_filters) == filters
    assert config.allow_soft_placement
    assert config.graph_options.rewrite_options.meta_optimizer_iterations == 1
    given = tf.ConfigProto(log_device_placement=True)
    assert RunConfig(session_config=given).session_config is given


def test_train_and_evaluate_refuses_a_task_type_tf115_did_not_run(tf_config, tmp_path):
    tf_config({'cluster': dict(CLUSTER, other_type=['host6:1']),
               'task': {'type': 'other_type', 'index': 0}})

    def model_fn(features, labels, mode):
        loss = tf.reduce_sum(tf.get_variable('w', [1]) * features)
        return EstimatorSpec(mode, loss=loss, train_op=tf.no_op())

    estimator = Estimator(model_fn, str(tmp_path))
    with pytest.raises(ValueError, match='Task type other_type is not supported'):
        train_and_evaluate(estimator, TrainSpec(lambda: tf.ones([1])),
                           EvalSpec(lambda: tf.ones([1])))


def test_a_cluster_worker_keeps_only_its_roles_device_filters():
    role = types.SimpleNamespace(master='grpc://w:1', is_chief=False, hooks=[],
                                 wrap_optimizer=None)
    setup = types.SimpleNamespace(config=tf.ConfigProto(device_filters=['/job:ps',
                                                                        '/job:worker/task:2']),
                                  ps_device='/job:ps/task:0', tower_devices=[])
    given = tf.ConfigProto(device_filters=['/job:ps', '/job:worker/task:1'],
                           allow_soft_placement=True)
    placement = cluster.worker_placement(role, setup, given, replicated=False)
    assert list(placement.session_config.device_filters) == ['/job:ps', '/job:worker/task:2']
    assert placement.session_config.allow_soft_placement
