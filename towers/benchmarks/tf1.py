"""The same unchanged TF1 program on real TensorFlow 1.15.5 and under the runner on TensorFlow
2.21, and a port of it beside them: their step times, in turns.

    python scripts/benchmark.py --tf1_program cifar10_multi_gpu_train.py \
        --tf1_flags '--max_steps 60' --tf1_port scripts/train_cifar10_multi_gpu.py \
        --tf1_port_flags '--max_steps 60' --repeats 5 --warmup_steps 10

Each round runs each way once, in turns (TF 1.15, the runner, the port, then again): the
program as `towers-legacy --compare_tf1` runs its two sides (`towers.legacy.compare.sides`: in
a namespace of its own, so that a fixed output folder is new in every run, and with the probe,
which times every run of the training step, the run made most often with the same fetches);
the port under the runner too, only for the probe. A run's figure is the median of its steps
after the first `warmup_steps`; the ratios are of step rates, round by round (median and
quartiles).
"""
import os
import shlex
import shutil
import tempfile

import numpy as np

from towers import bars
from towers.errors import TowersError
from towers.legacy.compare import probe, sides, tf1

TF1, RUNNER, PORT = 'TF 1.15', 'runner', 'port'


def add_flags(parser):
    """Adds `--tf1_program`, `--tf1_flags`, `--tf1_port`, `--tf1_port_flags`, `--tf1_python`."""
    parser.add_argument('--tf1_program', help='Instead of the rows above: this TF1 program '
                        'on real TensorFlow 1.15.5 against under the runner, in turns '
                        '(towers.benchmarks.tf1).')
    parser.add_argument('--tf1_flags', default='', help='The program\'s flags, one string.')
    parser.add_argument('--tf1_port', help='With --tf1_program: a port of it timed beside.')
    parser.add_argument('--tf1_port_flags', default='', help='The port\'s flags, one string.')
    parser.add_argument('--tf1_python', help='A Python 3.7 for TensorFlow 1.15 (default: found '
                        'as towers-legacy --compare_tf1 finds it).')


def _median_step(way, shown, side, root, warmup_steps):
    """The median step seconds of a finished run of `way` (`shown`: its script and flags), after
    its first `warmup_steps`."""
    if side.returncode != 0:
        raise TowersError('%s failed (%s, exit status %d): %s'
                          % (shown, way, side.returncode, side.last_line()))
    seconds = probe.read_record(side.folder(root))['step_seconds'][warmup_steps:]
    if not seconds:
        raise TowersError('%s made no more than %d steps (%s): give it more steps (its flags)'
                          % (shown, warmup_steps, way))
    return float(np.median(seconds))


def run(program, flags, repeats, warmup_steps, python, port=None, port_flags=()):
    """The median step seconds of each way, per round.

    Args:
      program, flags: the TF1 program and its flags (a list).
      repeats: rounds.
      warmup_steps: steps of each run left out of its median.
      python: a Python with TensorFlow 1.15 (`towers.legacy.compare.tf1.python`).
      port, port_flags: a port of the program and its flags, or None.

    Returns:
      A dict way (`TF1`, `RUNNER`, `PORT`) -> list of each round's median step seconds.

    Raises:
      TowersError: a run failed (its last line quoted) or made too few steps.
    """
    ways = [(TF1, program, flags, sides.tf1_command(python, program, flags)),
            (RUNNER, program, flags, sides.runner_command(program, flags))]
    if port:
        ways.append((PORT, port, port_flags, sides.runner_command(port, port_flags)))
    environment = tf1.environment()
    medians = {way[0]: [] for way in ways}
    with bars.bar(repeats * len(ways), 'rounds in turns', 'runs') as progress:
        for _ in range(repeats):
            for way, script, script_flags, command in ways:
                root = os.path.realpath(tempfile.mkdtemp(prefix='benchmark_tf1_'))
                try:
                    side = sides.Side('run', command,
                                      dict(environment, **{probe.OUT: '{root}/run'}))
                    sides.run(side, root, os.getcwd())
                    shown = ' '.join([os.path.basename(script)] + list(script_flags))
                    medians[way].append(_median_step(way, shown, side, root, warmup_steps))
                finally:
                    shutil.rmtree(root, ignore_errors=True)
                progress.update()
    return medians


def report(program, flags, repeats, warmup_steps, python, port=None, port_flags=()):
    """Yields the lines of `scripts/benchmark.py --tf1_program`: each way's median step
    seconds per round, and the runner's and the port's step rates over TF 1.15's."""
    medians = run(program, flags, repeats, warmup_steps, python, port, port_flags)
    yield ('%s %s, %d rounds in turns, the median step after %d warm-up steps of each run:'
           % (program, ' '.join(flags), repeats, warmup_steps))
    for way, seconds in medians.items():
        yield '  %-8s median step %.4f s (rounds: %s)' % (
            way, float(np.median(seconds)), ', '.join('%.4f' % each for each in seconds))
    for way in (RUNNER, PORT):
        if way in medians:
            ratios = np.asarray(medians[TF1]) / np.asarray(medians[way])
            low, median, high = np.percentile(ratios, [25, 50, 75])
            yield ('%s step rate / TF 1.15\'s: %.3f (quartiles %.3f-%.3f)'
                   % ('the runner\'s' if way == RUNNER else 'the port\'s', median, low, high))


def report_of_flags(args, plan):
    """`report` as `scripts/benchmark.py`'s parsed flags `args` (`add_flags`) and its `Plan`
    ask for it: its rounds, and its warm-up steps in each run."""
    return report(args.tf1_program, shlex.split(args.tf1_flags), plan.repeats,
                  plan.warmup_steps, tf1.python(args.tf1_python), args.tf1_port,
                  shlex.split(args.tf1_port_flags))
