"""Specification of `tf.estimator.train_and_evaluate` across processes: one TF 1.x program run as
every task of a TF_CONFIG cluster (chief, two workers, a parameter server, an evaluator) through
the launcher reaches max_steps with its evaluations written; a worker killed with kill -9 ends
the cluster with one line naming it, and a rerun resumes from the chief's last checkpoint."""
import json
import os
import re
import signal
import subprocess
import sys
import time

from towers.compat import tf

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAM = os.path.join(REPO, 'tests', 'data', 'legacy', 'estimator_cluster_program.py')
TEST_SECS = 240


def launch(model_dir, max_steps, workers=3, evaluators=1, strategy=''):
    """The launcher running the program as ps, chief, workers and evaluators."""
    return subprocess.Popen(
        [sys.executable, os.path.join(REPO, 'scripts', 'launch_local_cluster.py'), '--ps', '1',
         '--workers', str(workers), '--evaluators', str(evaluators), '--tf_config',
         '--exit_grace', '60', '--', '-m', 'towers.legacy', PROGRAM, '--model_dir', model_dir,
         '--max_steps', str(max_steps), '--save_checkpoints_steps', '20',
         '--strategy', strategy],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def task_pid(model_dir, task_type, index):
    """The process of the cluster of `model_dir` whose TF_CONFIG task is (`task_type`, `index`)."""
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open('/proc/%s/cmdline' % pid, 'rb') as f:
                if model_dir.encode() not in f.read():
                    continue
            with open('/proc/%s/environ' % pid, 'rb') as f:
                environ = dict(item.split(b'=', 1) for item in f.read().split(b'\0')
                               if b'=' in item)
        except OSError:
            continue
        task = json.loads(environ.get(b'TF_CONFIG', b'{}')).get('task', {})
        if task == {'type': task_type, 'index': index}:
            return int(pid)
    raise AssertionError('no process of task %s %d' % (task_type, index))


def newest_step(model_dir):
    return int(tf.train.load_variable(tf.train.latest_checkpoint(model_dir), 'global_step'))


def test_a_cluster_trains_evaluates_and_survives_a_killed_worker_by_resuming(tmp_path):
    model_dir = str(tmp_path / 'model')
    cluster = launch(model_dir, 100000)
    seen = []
    deadline = time.monotonic() + TEST_SECS
    for line in cluster.stdout:
        seen.append(line)
        step = re.search(r'\[worker0\] INFO:tensorflow:loss = \S+, step = (\d+)', line)
        if step and int(step.group(1)) >= 60 or time.monotonic() > deadline:
            break
    os.kill(task_pid(model_dir, 'worker', 0), signal.SIGKILL)
    output = ''.join(seen) + cluster.communicate(timeout=TEST_SECS)[0]
    assert cluster.returncode == 128 + signal.SIGKILL, output[-3000:]
    launcher_lines = re.findall(r'\[launcher\] .*', output)
    assert launcher_lines[-2:] == [
        '[launcher] worker1 exited with status 137 (killed by SIGKILL); terminating the others',
        '[launcher] terminated ps0 (status 143), worker0 (status 143), worker2 (status 143), '
        'evaluator0 (status 143)']
    assert not re.search(r'^\[\w+\] (Traceback|error:)', output, re.M), output[-3000:]
    # The chief saved the step it stopped at: nothing past the last checkpoint is lost.
    stopped = re.search(r'\[worker0\] .*stopped by SIGTERM at step (\d+); last checkpoint '
                        r'\S+model\.ckpt-(\d+)', output)
    assert stopped, output[-3000:]
    assert tf.train.latest_checkpoint(model_dir).endswith('model.ckpt-' + stopped.group(2))
    assert int(stopped.group(2)) >= 60
    # The step stored in it may be past its name's: the saver names the file, then reads the
    # variables while the other (asynchronous) worker's steps still land, as in TF 1.x.
    stopped_at = newest_step(model_dir)
    assert stopped_at >= int(stopped.group(2))

    # Resumed with two replicas in each worker: the variables keep their names.
    resumed = launch(model_dir, stopped_at + 40, strategy='parameter_server')
    output = resumed.communicate(timeout=TEST_SECS)[0]
    assert resumed.returncode == 0, output[-3000:]
    assert '[launcher] every process exited with status 0' in output
    final = newest_step(model_dir)
    assert final >= stopped_at + 40
    evaluations = re.findall(r'\[evaluator0\] evaluation: accuracy (\S+) loss \S+ global_step '
                             r'(\d+)', output)
    assert len(evaluations) == 1 and int(evaluations[0][1]) == final
    assert float(evaluations[0][0]) > 0.8
    assert any(name.startswith('events.out.tfevents')
               for name in os.listdir(os.path.join(model_dir, 'eval')))
    assert re.search(r'\[ps0\] .*ps 0: all 3 worker\(s\) finished', output)
    assert re.search(r'\[worker0\] .*on 2 tower\(s\)', output)


def test_collective_all_reduce_workers_train_in_step_through_the_parameter_servers(tmp_path):
    model_dir = str(tmp_path / 'model')
    cluster = launch(model_dir, 30, workers=2, evaluators=0, strategy='collective_all_reduce')
    output = cluster.communicate(timeout=TEST_SECS)[0]
    assert cluster.returncode == 0, output[-3000:]
    assert re.search(r'\[worker1\] .*worker 1 of 2 at \S+ \(not chief\), 1 parameter '
                     r'server\(s\), synchronous updates', output)
    # Synchronous: one global step per step of both workers, none past max_steps.
    assert newest_step(model_dir) == 30
    assert re.search(r'\[worker0\] .*on 2 tower\(s\)', output)
