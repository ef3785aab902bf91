"""A whole training cluster on this machine: its processes started, watched and stopped.

    status = launcher.launch(['scripts/train_cifar10_multi_gpu.py', '--max_steps', '1000'],
                             num_ps=1, num_workers=2, num_gpus=2)

`launch` picks free localhost ports, starts the parameter servers and workers as processes of
the training command with their cluster flags (`task_flags`) or, with `use_tf_config`, their
`TF_CONFIG` environment variable (`towers.cluster.tf_config.task_value`: worker 0 is the chief), prints
each process's output lines with its role as prefix ('[ps0] ', '[worker1] ', and '[launcher] '
for its own), and returns the cluster's exit status once it is over.

The processes run in a network of their own whose only interface is loopback
(`towers.cluster.isolation`): TensorFlow's servers listen on every interface and obey whoever connects,
and there nobody outside the cluster can. Where the system allows no such network, one line
says why and what that exposes, or, with `require_isolation`, nothing starts.
"""
import functools
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time

from towers import flags
from towers.cluster import isolation, tf_config
from towers.errors import EXIT_INTERRUPTED, TowersError

EXIT_HUNG = 1
EXIT_TIMEOUT = 124


def task_flags(ps_hosts, worker_hosts, job_name, task_index):
    """The command-line flags that make a training script task `task_index` of `job_name`.

    Args:
      ps_hosts, worker_hosts: lists of 'host:port'.
      job_name: 'ps' or 'worker'.
      task_index: index in that job.

    Returns:
      A list of argv strings for `towers.flags.add_cluster_flags`.
    """
    return ['--job_name', job_name, '--task_index', str(task_index),
            '--ps_hosts', ','.join(ps_hosts), '--worker_hosts', ','.join(worker_hosts)]


def free_local_ports(count):
    """Returns `count` distinct TCP ports on localhost that were free a moment ago."""
    sockets = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(('localhost', 0))
            sockets.append(sock)
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def launch(command, num_ps, num_workers, num_gpus=None, timeout=None, exit_grace=60.0,
           printer=functools.partial(print, flush=True), use_tf_config=False,
           require_isolation=False, num_evaluators=0):
    """Runs a cluster of `num_ps` parameter servers and `num_workers` workers on localhost.

    Every task is a process of `command` with `--num_gpus` (when given) and its `task_flags`
    appended, or with `use_tf_config` its role in its `TF_CONFIG` variable instead, all of
    them in a private network (`towers.cluster.isolation.private_network`) where the system allows
    one, else on the machine's network after a line saying so. The first task to exit with a
    non-zero status ends the cluster: the others are terminated. Ctrl-C (which reaches every
    process of the terminal) gives the tasks `exit_grace` seconds to exit by themselves;
    SIGTERM to the launcher, taken while `launch` runs in the main thread, is forwarded to
    them. Tasks are terminated all at once (a stopping chief still needs the parameter servers
    to write its last checkpoint), and killed when they are still running `exit_grace` seconds
    later.

    Args:
      command: the training program and its flags, e.g. ['scripts/train.py', '--max_steps',
        '10']; a program ending in '.py', or '-m' and a module, is run by this Python
        interpreter.
      num_ps, num_workers: how many tasks of each job (at least 1).
      num_gpus: towers per worker, passed on as `--num_gpus`; None passes nothing.
      timeout: seconds after which every task is terminated; None for no limit.
      exit_grace: seconds a parameter server may run on after every worker has finished,
        and seconds a task may take to exit once terminated (or after Ctrl-C) before it is
        killed.
      printer: called with each output line, without its newline, one line at a time;
        by default the line is printed to standard output.
      use_tf_config: give each task its role in `TF_CONFIG` (as Kubeflow's TFJob does, worker
        0 as the chief) rather than in cluster flags.
      require_isolation: start nothing when the tasks cannot have a private network.
      num_evaluators: tasks of type 'evaluator' beside the cluster (with `use_tf_config`
        only: an Estimator's `train_and_evaluate` evaluates the chief's checkpoints there).

    Returns:
      The exit status: 0 when every task exited with 0; else the first non-zero status of a
      task (128 + N for a task killed by signal N), `EXIT_HUNG` when a parameter server still
      ran `exit_grace` seconds after the workers finished, `EXIT_TIMEOUT` after `timeout`,
      `EXIT_INTERRUPTED` after Ctrl-C, or 128 + SIGTERM after SIGTERM.

    Raises:
      TowersError: with `require_isolation`, the system allows no private network (the message
        says why); evaluators without `use_tf_config`.
    """
    if num_evaluators and not use_tf_config:
        raise TowersError('an evaluator task exists only in TF_CONFIG (type "evaluator"): '
                          'launch it with use_tf_config (--tf_config)')
    ports = free_local_ports(num_ps + num_workers)
    hosts = ['localhost:%d' % port for port in ports]
    ps_hosts, worker_hosts = hosts[:num_ps], hosts[num_ps:]
    processes = []
    for job, count in ((flags.PS_JOB, num_ps), (flags.WORKER_JOB, num_workers),
                       (tf_config.EVALUATOR, num_evaluators)):
        for index in range(count):
            if use_tf_config:
                role_flags, env = [], {tf_config.VARIABLE: tf_config.task_value(
                    ps_hosts, worker_hosts, job, index)}
            else:
                role_flags, env = task_flags(ps_hosts, worker_hosts, job, index), {}
            processes.append(Process('%s%d' % (job, index),
                                     _task_argv(command, num_gpus, role_flags), env,
                                     job == flags.WORKER_JOB))
    heading = 'ps: %s; workers: %s%s' % (','.join(ps_hosts), ','.join(worker_hosts),
                                         '; roles in %s' % tf_config.VARIABLE
                                         if use_tf_config else '')
    return run_processes(processes, ports, heading, timeout, exit_grace, printer,
                         require_isolation)


class Process:
    """One process of a job to launch.

    Attributes:
      name: its prefix in the output, e.g. 'worker1', 'rank0'.
      argv: its command line; env: variables added to the launcher's environment.
      finishes: whether the job is over once every such process has exited (a parameter
        server does not finish by itself: it serves until the workers have).
    """

    def __init__(self, name, argv, env, finishes=True):
        self.name, self.argv, self.env, self.finishes = name, argv, env, finishes


def run_processes(processes, ports, heading, timeout=None, exit_grace=60.0,
                  printer=functools.partial(print, flush=True), require_isolation=False,
                  private=True):
    """Runs `processes` (a list of `Process`) as one job, as `launch` describes.

    Args:
      ports: the localhost ports they listen on (for the line of a job that is not isolated).
      heading: the launcher's first line, before what says where the job runs.
      private: run them in a private network (where the system allows one); False runs them
        on the machine's network after a line saying what that exposes (a job of several
        machines).
      timeout, exit_grace, printer, require_isolation: as for `launch`.

    Returns:
      The job's exit status, as `launch` returns it.
    """
    console = _Console(printer)
    exits = queue.Queue()
    network = (_network(ports, require_isolation, console) if private
               else _exposed(ports, 'the job spans several machines', console))
    console.print('launcher', heading + ('; in a private network (loopback only)'
                                         if network.private else ''))
    tasks = []
    stopping = _raise_on_sigterm()
    try:
        for process in processes:
            tasks.append(_Task(process, exits, console, network))
        deadline = None if timeout is None else time.monotonic() + timeout
        return _wait(tasks, exits, deadline, exit_grace, console)
    except KeyboardInterrupt:
        # Ctrl-C reached every process of the terminal's process group: give them the grace
        # period to write their last checkpoint and exit.
        console.print('launcher', 'interrupted; waiting for the processes to stop')
        end = time.monotonic() + exit_grace
        try:
            for task in tasks:
                task.wait_until(end)
        except KeyboardInterrupt:
            pass  # Ctrl-C again: stop them now (below)
        return EXIT_INTERRUPTED
    except _Terminated:
        return _exit_status(-signal.SIGTERM)
    finally:
        restore_sigterm = stopping()
        network.close()
        _stop_all(tasks, exit_grace, console)
        restore_sigterm()


def _network(ports, require_isolation, console):
    """The network the tasks run in: a private one, or where the system allows none, the
    machine's own after one line saying why and what it exposes.

    Raises:
      TowersError: no private network, and `require_isolation`.
    """
    try:
        return isolation.private_network()
    except isolation.IsolationUnavailable as err:
        if require_isolation:
            raise TowersError('--require_isolation: the cluster cannot have a private network: '
                              '%s' % err) from None
        return _exposed(ports, err, console)


def _exposed(ports, why, console):
    """The machine's own network, after one line saying why and what it exposes."""
    console.print('launcher', 'not isolated: %s; the tasks listen on every network '
                              'interface: anyone who can reach this machine on ports %s can '
                              'run any op in them as %s' % (
                                  why, ', '.join(map(str, ports)), isolation.user_name()))
    return isolation.HOST_NETWORK


class _Console:
    """Passes whole lines from several threads to one printer, each with its source's prefix."""

    def __init__(self, printer):
        self._printer = printer
        self._lock = threading.Lock()

    def print(self, source, line):
        with self._lock:
            self._printer('[%s] %s' % (source, line))


class _Task:
    """One process of the cluster, its output streamed line by line to the console."""

    def __init__(self, process, exits, console, network):
        self.name = process.name
        self.finishes = process.finishes
        self.process = subprocess.Popen(network.command(process.argv), stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, errors='replace',
                                        env=dict(os.environ, PYTHONUNBUFFERED='1',
                                                 **process.env),
                                        pass_fds=network.pass_fds)
        self._reader = threading.Thread(target=self._stream, args=(exits, console),
                                        daemon=True)
        self._reader.start()

    def _stream(self, exits, console):
        for line in self.process.stdout:
            console.print(self.name, line.rstrip('\n'))
        exits.put((self, self.process.wait()))

    def wait_until(self, end):
        """Waits for the process to exit until `end` (a `time.monotonic()` time)."""
        try:
            self.process.wait(max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass


class _Terminated(Exception):
    """The launcher received SIGTERM."""


def _raise_on_sigterm():
    """Makes SIGTERM raise `_Terminated` in the main thread until the launcher starts to stop its
    tasks; returns what marks that start, which returns what undoes it all.

    By default SIGTERM would end the launcher at once and leave its tasks running; as an
    exception it unwinds through `launch`, which forwards it to them.
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: lambda: None  # only the main thread may set signal handlers

    state = {'stopping': False}

    def handler(signum, frame):
        # Once the launcher is stopping its tasks, a second SIGTERM (`timeout` signals the
        # whole process group) must not interrupt that.
        if not state['stopping']:
            raise _Terminated()

    def stopping():
        state['stopping'] = True
        return lambda: signal.signal(signal.SIGTERM, previous)

    previous = signal.signal(signal.SIGTERM, handler)
    return stopping


def _stop_all(tasks, grace, console):
    """Sends SIGTERM to every task still running, at once; kills those still running `grace`
    seconds later; prints how each of them ended."""
    running = [task for task in tasks if task.process.poll() is None]
    for task in running:
        task.process.terminate()
    end = time.monotonic() + grace
    for task in running:
        task.wait_until(end)
    killed = [task for task in running if task.process.poll() is None]
    for task in killed:
        task.process.kill()
        task.process.wait()
    if running:
        console.print('launcher', 'terminated %s' % ', '.join(
            '%s (status %d%s)' % (task.name, _exit_status(task.process.returncode),
                                  ', killed after %.0f s' % grace if task in killed else '')
            for task in running))


def _killed_by(returncode):
    """' (killed by SIGKILL)' for a process a signal ended, else ''."""
    if returncode >= 0:
        return ''
    try:
        return ' (killed by %s)' % signal.Signals(-returncode).name
    except ValueError:
        return ' (killed by signal %d)' % -returncode


def _exit_status(returncode):
    # A process killed by signal N reports -N; shells report 128 + N.
    return 128 - returncode if returncode < 0 else returncode


def _task_argv(command, num_gpus, cluster_flags):
    argv = list(command)
    if argv[0].endswith('.py') or argv[0] == '-m':
        argv.insert(0, sys.executable)
    if num_gpus is not None:
        argv += ['--num_gpus', str(num_gpus)]
    return argv + cluster_flags


def _wait(tasks, exits, deadline, exit_grace, console):
    """Waits for the tasks to exit; returns the launcher's exit status."""
    running = set(tasks)
    grace_end = None
    while running:
        ends = [t for t in (deadline, grace_end) if t is not None]
        try:
            task, returncode = exits.get(timeout=max(0.0, min(ends) - time.monotonic())
                                         if ends else None)
        except queue.Empty:
            stuck = ', '.join(sorted(t.name for t in running))
            if deadline is not None and time.monotonic() >= deadline:
                console.print('launcher', 'timed out; terminating %s' % stuck)
                return EXIT_TIMEOUT
            console.print('launcher', '%s still running %.0f s after the workers finished; '
                                      'terminating' % (stuck, exit_grace))
            return EXIT_HUNG
        running.discard(task)
        if returncode:
            console.print('launcher', '%s exited with status %d%s; terminating the others'
                          % (task.name, _exit_status(returncode), _killed_by(returncode)))
            return _exit_status(returncode)
        if grace_end is None and not any(t.finishes for t in running):
            grace_end = time.monotonic() + exit_grace
    console.print('launcher', 'every process exited with status 0')
    return 0
