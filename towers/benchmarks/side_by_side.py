"""What training several models side by side costs, against running them apart.

Three ways to train k models for the same steps on the same towers:

  side_by_side   one process, `towers.training.side_by_side`: one `session.run` steps all k models;
  sequential     k processes one after another, each training one model;
  concurrent     k processes at once, each training one model, sharing the machine.

Every process is a child that builds its step, runs untimed warm-up steps (graph optimisation,
allocation), waits at a barrier for the other processes of its configuration, so that the
concurrent ones time the same moments, times `steps` steps and prints one JSON line
(`measure_child`). The parent (`compare`) runs the configurations `repeats` times, rotating their
order each time so that a slow spell of a shared machine falls on different configurations, and
reports the median of each figure:

  steps_sec     time of the timed steps: side_by_side its own; sequential the sum of the
                processes'; concurrent from the first start of timing to the last end.
  wall_sec      from starting the configuration's first process to the end of its last
                (imports, graph building and warm-up included).
  peak_rss_mb   peak resident memory: side_by_side the process's; sequential the largest of
                the processes'; concurrent the sum of the processes' peaks, which the machine
                must hold when they peak together (their timed steps run at once).
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

from towers import bars, reports
from towers.training import side_by_side
from towers.compat import tf
from towers.errors import TowersError

CONFIGURATIONS = ('side_by_side', 'sequential', 'concurrent')
FIGURES = ('steps_sec', 'wall_sec', 'peak_rss_mb')
BARRIER_POLL_SECS = 0.05
BARRIER_TIMEOUT_SECS = 30 * 60


def peak_rss_mb():
    """This process's peak resident memory so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def wait_at_barrier(directory, count, index):
    """Marks process `index` ready in `directory` and waits until `count` processes are."""
    open(os.path.join(directory, 'ready_%d' % index), 'w').close()
    deadline = time.time() + BARRIER_TIMEOUT_SECS
    while len([n for n in os.listdir(directory) if n.startswith('ready_')]) < count:
        if time.time() > deadline:
            raise TowersError('gave up waiting for %d benchmark processes at %s'
                              % (count, directory))
        time.sleep(BARRIER_POLL_SECS)


def measure_child(models, input_fn, setup, warmup_steps, steps, barrier=None):
    """Times side-by-side training of `models` in this process (a child of `compare`).

    Args:
      models, input_fn, setup: as for `towers.training.side_by_side.assemble` (one model for the
        sequential and concurrent configurations).
      warmup_steps: untimed steps first.
      steps: timed steps.
      barrier: (directory, count, index) for `wait_at_barrier` before timing, or None.

    Returns:
      A dict: steps_sec, timed_start and timed_end (seconds since the epoch), peak_rss_mb.
    """
    with tf.Graph().as_default():
        train_op = side_by_side.assemble(models, input_fn, setup).train_ops[
            side_by_side.TRAIN_OP]
        with tf.Session(config=setup.config) as session:
            session.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
            for _ in range(warmup_steps):
                session.run(train_op)
            if barrier is not None:
                wait_at_barrier(*barrier)
            start = time.time()
            for _ in range(steps):
                session.run(train_op)
            end = time.time()
    return {'steps_sec': end - start, 'timed_start': start, 'timed_end': end,
            'peak_rss_mb': peak_rss_mb()}


def _start(command):
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(process, command):
    """The JSON a child printed last, once it has exited."""
    out, err = process.communicate()
    if process.returncode:
        raise TowersError('benchmark process %s failed (exit %d): %s'
                          % (' '.join(command), process.returncode,
                             err.strip().split('\n')[-1] if err.strip() else 'no output'))
    return json.loads(out.strip().split('\n')[-1])


def _run(commands):
    """Runs `commands` all at once; returns their results and the wall time."""
    start = time.time()
    processes = [_start(command) for command in commands]
    results = [_finish(process, command) for process, command in zip(processes, commands)]
    return results, time.time() - start


def _configuration(kind, child_command, names):
    """Measures one configuration; returns its figures."""
    with tempfile.TemporaryDirectory(prefix='side_by_side_barrier_') as barrier_dir:
        if kind == 'side_by_side':
            results, wall = _run([child_command(names, barrier_dir, 1, 0)])
            steps = results[0]['steps_sec']
        elif kind == 'sequential':
            results, wall = [], 0.0
            for name in names:
                result, seconds = _run([child_command([name], barrier_dir, 1, 0)])
                results += result
                wall += seconds
            steps = sum(r['steps_sec'] for r in results)
        else:
            results, wall = _run([child_command([name], barrier_dir, len(names), index)
                                  for index, name in enumerate(names)])
            steps = (max(r['timed_end'] for r in results)
                     - min(r['timed_start'] for r in results))
    peaks = [r['peak_rss_mb'] for r in results]
    return {'steps_sec': steps, 'wall_sec': wall,
            'peak_rss_mb': sum(peaks) if kind == 'concurrent' else max(peaks)}


def compare(child_command, names, repeats):
    """Measures the three configurations `repeats` times, interleaved; each one's figures and
    the progress over the rounds go to stderr.

    Args:
      child_command: (names, barrier directory, barrier count, index) -> the command line
        (a list) of a child that trains the models `names` and prints `measure_child`'s dict
        as its last line of output.
      names: the models.
      repeats: rounds; round r measures the configurations in `CONFIGURATIONS` order rotated
        by r.

    Returns:
      A dict: each configuration -> {'runs': the figures of each round, and the median of
      each figure of `FIGURES`}; 'ratios' -> sequential and concurrent over side_by_side, of
      the medians of steps_sec and wall_sec.
    """
    runs = {kind: [] for kind in CONFIGURATIONS}
    for round_index in bars.bar(range(repeats), 'side-by-side benchmark', 'rounds'):
        shift = round_index % len(CONFIGURATIONS)
        for kind in CONFIGURATIONS[shift:] + CONFIGURATIONS[:shift]:
            figures = _configuration(kind, child_command, names)
            bars.write('round %d, %s: %s' % (round_index + 1, kind, ', '.join(
                '%s %.1f' % (key, figures[key]) for key in FIGURES)), sys.stderr)
            runs[kind].append(figures)
    results = {kind: dict({key: float(np.median([r[key] for r in runs[kind]]))
                           for key in FIGURES}, runs=runs[kind]) for kind in CONFIGURATIONS}
    results['ratios'] = {'%s/side_by_side %s' % (kind, key):
                         results[kind][key] / results['side_by_side'][key]
                         for kind in ('sequential', 'concurrent')
                         for key in ('steps_sec', 'wall_sec')}
    return results


def format_table(results, names, steps):
    """The medians as a Markdown table, with each time's ratio to side by side."""
    base = results['side_by_side']
    return reports.markdown_table(
        ['%d models (%s), %d steps' % (len(names), ', '.join(names), steps), 'steps (s)',
         'vs side by side', 'whole run (s)', 'vs side by side', 'peak memory (MiB)'],
        [[kind.replace('_', ' '), results[kind]['steps_sec'],
          results[kind]['steps_sec'] / base['steps_sec'], results[kind]['wall_sec'],
          results[kind]['wall_sec'] / base['wall_sec'], results[kind]['peak_rss_mb']]
         for kind in CONFIGURATIONS],
        ['%s', '%.1f', '%.2f', '%.1f', '%.2f', '%.0f'])
