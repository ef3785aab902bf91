"""Scaling reports: a model trained on 1, 2, 4, ... towers for the same number of steps, its
step timing against the number of towers, as a table (markdown and JSON) and a chart.

    runs = scaling.measure(registry.get('fashion_mnist'), [1, 2, 4], batch_size=512, steps=50,
                           data_dir=None, configure=towers.configure_devices)
    print(scaling.format_markdown(runs))
    scaling.save_chart(runs, 'out/scaling.png', 'Fashion-MNIST, 512 images per tower')

Each run is the training loop of every script (`towers.fit`: the model's recipe, its real input
pipeline, checkpoints at the end) in a fresh graph and a temporary train directory, timed by its
`StepTimerHook` with the definitions of the Keras multi-GPU examples' `TimeHistory`: total time
= the sum of the step times, images/sec = the global batch (batch per tower x towers) / the mean
step time. The median step time stands beside them, since one slow step (the first, where
TensorFlow optimises the graph) moves the mean of a short run. Speed-up and efficiency are
taken at the median, against the fewest towers measured: towers that each do one tower's work
per step ideally give N times the images/sec in the same total time.
"""
import collections
import logging
import tempfile

from matplotlib.figure import Figure

import towers
from towers.cluster.roles import SingleProcess
from towers import reports

log = logging.getLogger(__name__)

Run = collections.namedtuple('Run', ['towers', 'global_batch', 'timing'])
Run.__doc__ = """One measured tower count.

Attributes:
  towers: the number of towers.
  global_batch: examples per step, the batch per tower times `towers`.
  timing: the run's `StepTimerHook.summary()`: steps, step_secs, sum_step_sec, mean_step_sec,
    median_step_sec, examples_per_sec_mean, examples_per_sec (at the median), ...
"""


def measure(entry, tower_counts, batch_size, steps, data_dir, configure):
    """Trains `entry`'s recipe for `steps` steps on each number of towers and times it.

    Args:
      entry: a `models.registry.Entry`.
      tower_counts: the numbers of towers, e.g. [1, 2, 4].
      batch_size: examples per tower.
      steps: training steps of every run.
      data_dir: the model's data set, or None for its usual place (see `Entry.real_input`).
      configure: number of towers -> `towers.DeviceSetup`, e.g. `towers.configure_devices`.

    Returns:
      A list of `Run`, in the order of `tower_counts`.
    """
    runs = []
    for count in tower_counts:
        global_batch = batch_size * count
        prefix = 'scaling_%s_%d_' % (entry.name, count)
        with tempfile.TemporaryDirectory(prefix=prefix) as train_dir:
            result = towers.fit(entry.recipe(batch_size),
                                lambda: entry.real_input(data_dir, global_batch),
                                configure(count), SingleProcess(), train_dir, steps, global_batch,
                                objective=entry.objective, save_summaries_steps=steps,
                                save_checkpoint_steps=steps)
        runs.append(Run(count, global_batch, result.timing))
    return runs


def _base(runs):
    return min(runs, key=lambda run: run.towers)


def _speedups(runs):
    """Each run's (speed-up, efficiency): its images/sec at the median over that of the fewest
    towers, and that over the ratio of the towers."""
    base = _base(runs)
    speedups = [run.timing['examples_per_sec'] / base.timing['examples_per_sec'] for run in runs]
    return [(speedup, speedup * base.towers / run.towers)
            for run, speedup in zip(runs, speedups)]


def _ideal_rates(runs):
    """Linear scaling from the fewest towers: N/N0 times its images/sec at the median."""
    base = _base(runs)
    return [base.timing['examples_per_sec'] * run.towers / base.towers for run in runs]


def results_json(runs, model, batch_size, device_kind):
    """The report as JSON: what was measured and every run's timing, with its speed-up.

    Args:
      runs: the `Run`s of `measure`.
      model: the registered model's name.
      batch_size: examples per tower.
      device_kind: what the towers ran on, e.g. '4 virtual CPU devices sharing 2 cores'.

    Returns:
      A dict: model, batch_size, steps, device_kind, and runs: one dict per run with towers,
      global_batch, speedup and efficiency (at the median, against the fewest towers) and the
      run's timing figures (step_secs included).
    """
    return {
        'model': model, 'batch_size': batch_size, 'steps': runs[0].timing['steps'],
        'device_kind': device_kind,
        'runs': [dict(run.timing, towers=run.towers, global_batch=run.global_batch,
                      speedup=speedup, efficiency=efficiency)
                 for run, (speedup, efficiency) in zip(runs, _speedups(runs))],
    }


def format_markdown(runs):
    """The runs as a markdown table: step times, images/sec, speed-up and efficiency."""
    return reports.markdown_table(
        ['towers', 'global batch', 'steps', 'total time (s)', 'mean step (s)',
         'images/sec (mean)', 'median step (s)', 'images/sec (median)', 'speed-up',
         'efficiency'],
        [[run.towers, run.global_batch, run.timing['steps'], run.timing['sum_step_sec'],
          run.timing['mean_step_sec'], run.timing['examples_per_sec_mean'],
          run.timing['median_step_sec'], run.timing['examples_per_sec'], speedup, efficiency]
         for run, (speedup, efficiency) in zip(runs, _speedups(runs))],
        ['%d', '%d', '%d', '%.1f', '%.3f', '%.0f', '%.3f', '%.0f', '%.2f', '%.2f'])


def save_chart(runs, path, title):
    """Saves a PNG of two panels against the number of towers: images/sec (at the mean and at
    the median step time, and the ideal linear line) and total time (the sum of the step times,
    and the ideal: the fewest towers' time, since every tower does one tower's work per step)."""
    counts = [run.towers for run in runs]
    # A bare Figure renders with Agg and leaves pyplot's global state alone.
    figure = Figure(figsize=(10, 4.2))
    rate_axes, time_axes = figure.subplots(1, 2)
    rate_axes.plot(counts, [run.timing['examples_per_sec'] for run in runs], marker='o',
                   label='measured (median step)')
    rate_axes.plot(counts, [run.timing['examples_per_sec_mean'] for run in runs], marker='s',
                   linestyle='--', label='measured (mean step)')
    rate_axes.plot(counts, _ideal_rates(runs), color='grey', linestyle=':',
                   label='ideal (linear)')
    rate_axes.set_ylabel('images/sec')
    base = _base(runs)
    time_axes.plot(counts, [run.timing['sum_step_sec'] for run in runs], marker='o',
                   label='measured (sum of step times)')
    time_axes.plot(counts, [base.timing['sum_step_sec']] * len(runs), color='grey',
                   linestyle=':', label='ideal (the same time)')
    time_axes.set_ylabel('total time of %d steps (s)' % base.timing['steps'])
    for axes in (rate_axes, time_axes):
        axes.set_xticks(counts)
        axes.set_xlabel('towers')
        axes.set_ylim(bottom=0)
        axes.grid(alpha=0.3)
        axes.legend(fontsize='small', loc='upper left')
    figure.suptitle(title, fontsize='medium')
    figure.tight_layout()
    reports.save_figure(path, figure)
