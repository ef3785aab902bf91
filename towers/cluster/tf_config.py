"""The cluster convention of the ecosystem: the `TF_CONFIG` environment variable.

Kubeflow's TFJob and managed training services tell each process its cluster and role in
`TF_CONFIG`, JSON such as

    {"cluster": {"chief": ["job-chief-0:2222"], "worker": ["job-worker-0:2222"],
                 "ps": ["job-ps-0:2222"]},
     "task": {"type": "worker", "index": 0}}

As TFJob defines it, the chief ("master" in TF 1.x) is worker 0 of the distributed runtime and
the workers follow it (worker i is task i + 1); without a chief, worker 0 is the chief. An
"evaluator" is not part of training and is left out of the cluster. `cluster_flags` turns a
value into the cluster flags of `towers.flags.add_cluster_flags` (`towers.cluster.from_flags`
reads it when no cluster flag is given); `task_value` is the inverse, for the launcher.
"""
import argparse
import json

from towers import flags
from towers.errors import TowersError

VARIABLE = 'TF_CONFIG'
CHIEF = 'chief'
_CHIEFS = (CHIEF, 'master')
_JOBS = _CHIEFS + (flags.WORKER_JOB, flags.PS_JOB)
EVALUATOR = 'evaluator'


def _error(message, *values):
    return TowersError('%s %s' % (VARIABLE, message % values))


def _hosts(cluster, job):
    hosts = cluster.get(job, [])
    if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
        raise _error('cluster: "%s" must be a list of "host:port" strings, got %r', job, hosts)
    try:
        return flags.host_list(','.join(hosts))
    except argparse.ArgumentTypeError as err:
        raise _error('cluster: "%s": %s', job, err) from None


def cluster_flags(text):
    """The cluster flags that a `TF_CONFIG` value describes.

    Args:
      text: the value of TF_CONFIG.

    Returns:
      None when the cluster is one chief or worker and no parameter server (or there is no
      cluster): the process trains alone. Else a dict of the values of the flags of
      `add_cluster_flags`: 'job_name', 'task_index', 'ps_hosts', 'worker_hosts'.

    Raises:
      TowersError: naming TF_CONFIG and what is wrong: not JSON, an unknown job or task type,
        more than one chief, a task that is not in the cluster, no parameter server.
    """
    try:
        config = json.loads(text)
    except ValueError as err:
        raise _error('is not JSON (%s): %r', err, text) from None
    if not isinstance(config, dict):
        raise _error('must be a JSON object with "cluster" and "task", got %r', text)
    cluster = config.get('cluster') or {}
    if not isinstance(cluster, dict):
        raise _error('"cluster" must map job names to lists of "host:port", got %r', cluster)
    unknown = sorted(set(cluster) - set(_JOBS) - {EVALUATOR})
    if unknown:
        raise _error('cluster has the job(s) %s; towers trains with %s', ', '.join(unknown),
                     ', '.join(_JOBS))
    chiefs = [host for job in _CHIEFS for host in _hosts(cluster, job)]
    if len(chiefs) > 1:
        raise _error('cluster has %d chiefs (%s); there may be one', len(chiefs),
                     ', '.join(chiefs))
    workers = chiefs + _hosts(cluster, flags.WORKER_JOB)
    ps_hosts = _hosts(cluster, flags.PS_JOB)
    if not ps_hosts and len(workers) <= 1:
        return None
    task = config.get('task')
    if not isinstance(task, dict):
        raise _error('has no "task" ({"type": ..., "index": ...}) saying which task this is')
    task_type, index = task.get('type'), task.get('index', 0)
    if task_type not in _JOBS:
        raise _error('task type %r is not one of %s%s', task_type, ', '.join(_JOBS),
                     ' (evaluate beside the training with the model\'s evaluation script)'
                     if task_type == EVALUATOR else '')
    listed = len(cluster.get(task_type, []))
    if not isinstance(index, int) or not 0 <= index < listed:
        raise _error('task %s %r is not in its cluster: "%s" lists %d task(s)', task_type,
                     index, task_type, listed)
    if not ps_hosts:
        raise _error('cluster has no "ps": the variables live on parameter servers, so list '
                     'at least one')
    if task_type == flags.PS_JOB:
        job_name, task_index = flags.PS_JOB, index
    else:
        job_name = flags.WORKER_JOB
        task_index = index if task_type in _CHIEFS else len(chiefs) + index
    return {'job_name': job_name, 'task_index': task_index, 'ps_hosts': ps_hosts,
            'worker_hosts': workers}


def task_value(ps_hosts, worker_hosts, job_name, task_index):
    """The TF_CONFIG of one task, as a TFJob with a chief sets it: worker 0 is the chief.

    Args:
      ps_hosts, worker_hosts: lists of 'host:port'.
      job_name: 'ps', 'worker', or 'evaluator' (a task outside the cluster, which an
        Estimator's `train_and_evaluate` runs as its evaluator).
      task_index: index in that job.

    Returns:
      The JSON string; `cluster_flags` of it gives back these four values (but for an
      evaluator).
    """
    cluster = {CHIEF: worker_hosts[:1], flags.PS_JOB: list(ps_hosts)}
    if len(worker_hosts) > 1:
        cluster[flags.WORKER_JOB] = list(worker_hosts[1:])
    if job_name in (flags.PS_JOB, EVALUATOR):
        task = {'type': job_name, 'index': task_index}
    elif task_index == 0:
        task = {'type': CHIEF, 'index': 0}
    else:
        task = {'type': flags.WORKER_JOB, 'index': task_index - 1}
    return json.dumps({'cluster': cluster, 'task': task})
