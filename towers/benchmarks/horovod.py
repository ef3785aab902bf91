"""Horovod's ranks against towers in one process and against one device: what a rank costs.

    for line in horovod.report(registry.get('cifar10'), batch_size=32, num_ranks=2, plan=QUICK):
        print(line)

One TF1 program (`horovod_program.py`), the model's step on an in-memory batch, runs under
`towers-legacy` in four configurations, each a process (or a job of processes) started once,
warmed up, then timed in turns: every round times `plan.steps_per_repeat` steps of each, one
configuration after the other, the order rotating (A B C D, B C D A, ...), through files in a
folder of its own (`go-<name>-<round>` starts a configuration's round; it answers with its
time):
- 'horovod': N ranks (`--np N`), each `batch_size` examples a step, gradients through
  `hvd.DistributedOptimizer`;
- 'towers': one process of N towers (`--legacy_devices N`), each `batch_size` examples,
  gradients averaged on the CPU: the same global batch;
- 'one device': one process, one device, N * `batch_size` examples: the same global batch;
- 'one rank's share': one process, `batch_size` examples, with a rank's share of the threads:
  a rank's computation without its collectives and without the other ranks beside it.
A ratio is the median over rounds of the ratio within each round, with its quartiles. Then,
the others ended, the ranks time where their step goes (`go-<name>-breakdown`): the step, the
same step without collectives, and an allreduce of a buffer of the gradients' size alone.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

from towers.benchmarks.measure import TimedSession, matmul_step, rounds_ratio
from towers.compat import tf
from towers.errors import TowersError

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'horovod_program.py')
# How long a configuration may take to start, or to time one round, before the run fails.
ROUND_TIMEOUT = 600.0
NAMES = ('horovod', 'towers', 'one device', "one rank's share")


def _commands(model, batch_size, num_ranks, plan, sync_dir):
    share = max(1, len(os.sched_getaffinity(0)) // num_ranks)
    common = ['--model', model, '--warmup_steps', str(plan.warmup_steps), '--steps',
              str(plan.steps_per_repeat), '--rounds', str(plan.repeats), '--sync_dir', sync_dir]
    legacy = [sys.executable, '-m', 'towers.legacy']
    return {
        'horovod': legacy + ['--np', str(num_ranks), PROGRAM, '--batch_size', str(batch_size)],
        'towers': legacy + ['--legacy_devices', str(num_ranks), PROGRAM, '--towers',
                            str(num_ranks), '--batch_size', str(batch_size)],
        'one device': legacy + [PROGRAM, '--batch_size', str(batch_size * num_ranks)],
        "one rank's share": legacy + [PROGRAM, '--batch_size', str(batch_size), '--threads',
                                      str(share)],
    }, common


def run(model, batch_size, num_ranks, plan):
    """Times the four configurations in turns.

    Returns:
      (rates, breakdown): dict name -> list of examples/sec, one per round (rounds in order);
      dict of the ranks' 'step', 'computation' and 'allreduce' (median ms) and
      'gradient_bytes' (see `_breakdown`).

    Raises:
      TowersError: a configuration failed or did not answer within `ROUND_TIMEOUT`.
    """
    with tempfile.TemporaryDirectory(prefix='towers-horovod-benchmark-') as sync_dir:
        commands, common = _commands(model, batch_size, num_ranks, plan, sync_dir)
        processes = {}
        try:
            for name, command in commands.items():
                label = name.replace(' ', '_').replace("'", '')
                processes[name] = (label, subprocess.Popen(
                    command + common + ['--name', label], stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE, text=True))
            rates = {name: [] for name in commands}
            for round_index in range(plan.repeats):
                order = NAMES[round_index % len(NAMES):] + NAMES[:round_index % len(NAMES)]
                for name in order:
                    label, process = processes[name]
                    rates[name].append(_time_round(sync_dir, label, round_index, process, name))
            for name, (_, process) in processes.items():
                if name != 'horovod':
                    process.wait(ROUND_TIMEOUT)
            label, process = processes['horovod']
            breakdown = _breakdown(sync_dir, label, process)
            process.wait(ROUND_TIMEOUT)
            return rates, breakdown
        finally:
            for _, process in processes.values():
                if process.poll() is None:
                    process.kill()
                    process.wait()


def _time_round(sync_dir, label, round_index, process, name):
    timed = _answer(sync_dir, label, round_index, process, name)
    return timed['examples'] / timed['seconds']


def _breakdown(sync_dir, label, process):
    """After the rounds, the others ended: the ranks' step, its computation without collectives
    and the allreduce of a buffer of its gradients' size alone, timed in turns (median ms)."""
    timed = _answer(sync_dir, label, 'breakdown', process, 'horovod')
    return dict(gradient_bytes=timed['gradient_bytes'], **{
        name: sorted(values)[len(values) // 2] for name, values in timed['milliseconds'].items()})


def _answer(sync_dir, label, round_id, process, name):
    """Starts a configuration's round (`go-<label>-<round_id>`) and returns its answer."""
    open(os.path.join(sync_dir, 'go-%s-%s' % (label, round_id)), 'w').close()
    result = os.path.join(sync_dir, '%s-%s.json' % (label, round_id))
    deadline = time.monotonic() + ROUND_TIMEOUT
    while not os.path.exists(result):
        if process.poll() is not None:
            raise TowersError('the %s configuration failed (status %d): %s' % (
                name, process.returncode, process.stderr.read()[-2000:]))
        if time.monotonic() > deadline:
            raise TowersError('the %s configuration did not finish round %s within %.0f s'
                              % (name, round_id, ROUND_TIMEOUT))
        time.sleep(0.01)
    with open(result) as f:
        return json.load(f)


def matmul_rate(size):
    """This machine's float32 matmul rate (FLOP/s) on all its cores, before the timed runs."""
    with tf.Graph().as_default():
        op, flops = matmul_step(size)
        with TimedSession(op, flops, tf.ConfigProto()) as session:
            session.warm_up(2)
            return session.run(5)


def report(entry, batch_size, num_ranks, plan, matmul_size=4096):
    """The benchmark's lines: each configuration's examples/sec, and the ratios."""
    rate = matmul_rate(matmul_size)
    rates, breakdown = run(entry.name, batch_size, num_ranks, plan)
    lines = ['%s, %d examples per rank or tower, %d ranks or towers (global batch %d); %d rounds '
             'of %d steps in turns; matmul %.0f GFLOP/s on this machine (%d cores)' % (
                 entry.title, batch_size, num_ranks, batch_size * num_ranks, plan.repeats,
                 plan.steps_per_repeat, rate / 1e9, len(os.sched_getaffinity(0)))]
    for name in NAMES:
        lines.append('  %-17s %8.1f examples/sec (median of %s)' % (
            name, sorted(rates[name])[len(rates[name]) // 2],
            ', '.join('%.1f' % rate for rate in rates[name])))
    for numerator, denominator, what in (
            ('horovod', 'towers', 'target >= 0.9'), ('horovod', 'one device', ''),
            ('towers', 'one device', ''),
            ('horovod', "one rank's share", "a rank's step against its computation alone, "
                                            'x %d ranks' % num_ranks)):
        scale = 1.0 / num_ranks if denominator == "one rank's share" else 1.0
        ratio = rounds_ratio([scale * a / b for a, b in zip(rates[numerator],
                                                            rates[denominator])])
        lines.append('  %s / %s: %.2f [%.2f, %.2f]%s' % (
            numerator, denominator, ratio.median, ratio.low, ratio.high,
            ' (%s)' % what if what else ''))
    lines.append('  where a rank\'s step goes (ms, medians, timed in turns after the rounds): a step '
                 '%.1f; its computation without collectives, the other ranks beside it, %.1f; an '
                 'allreduce of its gradients\' %.1f MB alone %.1f' % (
                     breakdown['step'], breakdown['computation'],
                     breakdown['gradient_bytes'] / 1e6, breakdown['allreduce']))
    return lines
