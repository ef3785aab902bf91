"""Starts a whole training cluster on this machine, for a try-out of distributed training.

    python scripts/launch_local_cluster.py --ps 1 --workers 2 --num_gpus 2 -- \
        scripts/train_cifar10_multi_gpu.py --max_steps 1000

Picks free localhost ports, starts the parameter servers and workers as processes of the
training script with the cluster flags (--job_name, --task_index, --ps_hosts, --worker_hosts)
and --num_gpus appended, and streams each process's output with its role as prefix ('[ps0] ',
'[worker1] '). Exits with the first non-zero status of a process, after terminating the
others; or with 0 once every process has exited with 0. A parameter server still running
`--exit_grace` seconds after every worker has finished counts as hung.
"""
import argparse
import os
import queue
import signal
import subprocess
import sys
import threading
import time

from towers import cli, cluster
from towers.errors import TowersError

EXIT_HUNG = 1
EXIT_TIMEOUT = 124


def _parse_args(argv):
    if '--' not in argv:
        raise TowersError('give the training script after "--", e.g. '
                          '`launch_local_cluster.py --ps 1 --workers 2 -- scripts/train.py`')
    split = argv.index('--')
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                     usage='%(prog)s [options] -- SCRIPT [FLAGS...]')
    parser.add_argument('--ps', type=cli.positive_int, default=1,
                        help='Number of parameter servers.')
    parser.add_argument('--workers', type=cli.positive_int, default=2,
                        help='Number of workers.')
    parser.add_argument('--num_gpus', type=cli.positive_int,
                        help='Towers per worker, passed on as --num_gpus.')
    parser.add_argument('--timeout', type=cli.positive_float,
                        help='Seconds after which every process is terminated (no limit by '
                             'default).')
    parser.add_argument('--exit_grace', type=cli.positive_float, default=60.0,
                        help='Seconds the other processes may take to exit after the workers '
                             'have finished, or after a failure, before they are terminated.')
    args = parser.parse_args(argv[:split])
    args.command = argv[split + 1:]
    if not args.command:
        raise TowersError('no training script after "--"')
    return args


class _Task:
    """One process of the cluster, its output streamed line by line with a prefix."""

    def __init__(self, name, argv, exits, output_lock):
        self.name = name
        self.is_worker = name.startswith(cluster.WORKER_JOB)
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, errors='replace',
                                        env=dict(os.environ, PYTHONUNBUFFERED='1'))
        self._reader = threading.Thread(target=self._stream, args=(exits, output_lock),
                                        daemon=True)
        self._reader.start()

    def _stream(self, exits, output_lock):
        for line in self.process.stdout:
            with output_lock:
                print('[%s] %s' % (self.name, line), end='', flush=True)
        exits.put((self, self.process.wait()))

    def wait_until(self, end):
        """Waits for the process to exit until `end` (a `time.monotonic()` time)."""
        try:
            self.process.wait(max(0.0, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass

    def stop(self, grace):
        """Terminates the process if it still runs, and kills it after `grace` seconds."""
        if self.process.poll() is not None:
            return
        self.process.terminate()
        self.wait_until(time.monotonic() + grace)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def _exit_status(returncode):
    # A process killed by signal N reports -N; shells report 128 + N.
    return 128 - returncode if returncode < 0 else returncode


def _task_argv(command, num_gpus, task_flags):
    argv = list(command)
    if argv[0].endswith('.py'):
        argv.insert(0, sys.executable)
    if num_gpus is not None:
        argv += ['--num_gpus', str(num_gpus)]
    return argv + task_flags


def _say(output_lock, message):
    with output_lock:
        print('[launcher] %s' % message, flush=True)


def main(argv):
    args = _parse_args(argv)
    ports = cluster.free_local_ports(args.ps + args.workers)
    hosts = ['localhost:%d' % port for port in ports]
    ps_hosts, worker_hosts = hosts[:args.ps], hosts[args.ps:]
    output_lock = threading.Lock()
    exits = queue.Queue()
    _say(output_lock, 'ps: %s; workers: %s' % (','.join(ps_hosts), ','.join(worker_hosts)))
    tasks = []
    for job, count in ((cluster.PS_JOB, args.ps), (cluster.WORKER_JOB, args.workers)):
        for index in range(count):
            flags = cluster.task_flags(ps_hosts, worker_hosts, job, index)
            tasks.append(_Task('%s%d' % (job, index),
                               _task_argv(args.command, args.num_gpus, flags),
                               exits, output_lock))
    deadline = None if args.timeout is None else time.monotonic() + args.timeout
    try:
        return _wait(tasks, exits, deadline, args.exit_grace, output_lock)
    except KeyboardInterrupt:
        # Ctrl-C reached every process of the terminal's process group: give them the grace
        # period to write their last checkpoint and exit.
        _say(output_lock, 'interrupted; waiting for the processes to stop')
        end = time.monotonic() + args.exit_grace
        for task in tasks:
            task.wait_until(end)
        return cli.EXIT_INTERRUPTED
    finally:
        for task in tasks:
            task.stop(args.exit_grace)


def _wait(tasks, exits, deadline, exit_grace, output_lock):
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
                _say(output_lock, 'timed out; terminating %s' % stuck)
                return EXIT_TIMEOUT
            _say(output_lock, '%s still running %.0f s after the workers finished; '
                              'terminating' % (stuck, exit_grace))
            return EXIT_HUNG
        running.discard(task)
        if returncode:
            _say(output_lock, '%s exited with status %d; terminating the others'
                 % (task.name, returncode))
            return _exit_status(returncode)
        if grace_end is None and not any(t.is_worker for t in running):
            grace_end = time.monotonic() + exit_grace
    _say(output_lock, 'every process exited with status 0')
    return 0


if __name__ == '__main__':
    # Terminating the launcher terminates the cluster (main's `finally`), so that no process
    # is left behind.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    cli.run(main)
