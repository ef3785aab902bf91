"""The throughput benchmark's results: its rows, the table, the targets, the JSON and the chart.

    print(report.format_table(rows, matmul_rate, train_flops_per_example))
    print(report.format_targets(report.targets(rows, matmul_rate, train_flops_per_example)))
    report.save_chart(rows, 'out/benchmark.png', 'CIFAR-10 training')
    report.save_results('out/benchmark.json', rows, matmul_rate, train_flops_per_example)
"""
import collections
import os

from matplotlib.figure import Figure

from towers.files import write_file_atomically, write_json

# The keys of the results: methods measured per number of devices, then single figures.
PER_DEVICE_COUNT = ('single_device', 'towers', 'mirrored')
SINGLE_FIGURES = ('input_only', 'end_to_end', 'in_memory_step')

Row = collections.namedtuple(
    'Row', ['key', 'label', 'devices', 'global_batch', 'parallel_devices', 'throughput'])
Row.__doc__ = """One measured configuration.

Attributes:
  key: a name of `PER_DEVICE_COUNT` or `SINGLE_FIGURES`.
  label: how the table names it.
  devices: the device count it stands for: the global batch is that many towers' batches
    (which the single device runs as one).
  global_batch: examples per step.
  parallel_devices: physical devices computing at once (1 for virtual CPU devices, which share
    the machine's cores), for the fraction of the matmul rate; 0 where no model runs.
  throughput: the `towers.benchmark.Throughput`.
"""


def results_json(rows, matmul_rate, train_flops_per_example):
    """The results as the JSON of the benchmark: images/sec per method and device count.

    Returns:
      A dict: each of `PER_DEVICE_COUNT` -> {'<devices>': examples/sec}, each of
      `SINGLE_FIGURES` -> examples/sec, 'matmul_flops' and 'model_train_flops_per_example'.
    """
    results = {key: {} for key in PER_DEVICE_COUNT}
    for row in rows:
        if row.key in PER_DEVICE_COUNT:
            results[row.key][str(row.devices)] = row.throughput.examples_per_sec
        else:
            results[row.key] = row.throughput.examples_per_sec
    results['matmul_flops'] = matmul_rate
    results['model_train_flops_per_example'] = train_flops_per_example
    return results


def save_results(path, rows, matmul_rate, train_flops_per_example):
    """Writes `results_json` to `path` atomically, creating its folder if missing."""
    _make_parent_dir(path)
    write_json(path, results_json(rows, matmul_rate, train_flops_per_example))


def _baseline(rows, devices):
    return next(r.throughput.examples_per_sec for r in rows
                if r.key == 'single_device' and r.devices == devices)


def _fraction_of_matmul(row, matmul_rate, train_flops_per_example):
    achieved = row.throughput.examples_per_sec * train_flops_per_example
    return achieved / (matmul_rate * row.parallel_devices)


def format_table(rows, matmul_rate, train_flops_per_example):
    """The measurements as a text table with the ratio of each to the single device.

    Each row's ratio is against the single device with the same global batch; 'of matmul' is
    the model's achieved FLOP/s over the matmul rate of the devices computing at once.
    """
    lines = ['%-34s %7s %6s %10s %19s %7s %9s' % ('method', 'devices', 'batch', 'images/s',
                                                  '(min - max)', 'vs (a)', 'of matmul')]
    for row in rows:
        rate = row.throughput.examples_per_sec
        fraction = ('%9.2f' % _fraction_of_matmul(row, matmul_rate, train_flops_per_example)
                    if row.parallel_devices else '%9s' % '-')
        lines.append('%-34s %7d %6d %10.1f %19s %7.2f %s' % (
            row.label, row.devices, row.global_batch, rate,
            '(%.1f - %.1f)' % (min(row.throughput.repeat_rates),
                               max(row.throughput.repeat_rates)),
            rate / _baseline(rows, row.devices), fraction))
    lines.append('matmul rate %.1f GFLOP/s; model %.1f MFLOP per training example'
                 % (matmul_rate / 1e9, train_flops_per_example / 1e6))
    return '\n'.join(lines)


Target = collections.namedtuple('Target', ['name', 'value', 'threshold'])
Target.__doc__ = """A target of the benchmark: met when `value >= threshold`."""


def targets(rows, matmul_rate, train_flops_per_example):
    """The throughput targets, checked at the largest number of devices measured.

    - towers reach 0.95x the single device with the same global batch;
    - towers are at least as fast as MirroredStrategy;
    - the step with real input reaches 0.9x the step on data in memory;
    - the towers' training step reaches 0.75 of the matmul rate.

    Returns:
      A list of `Target`.
    """
    def row(key, devices=None):
        return next(r for r in rows if r.key == key and devices in (None, r.devices))

    most = max(r.devices for r in rows if r.key == 'towers')
    towers = row('towers', most)
    rate = towers.throughput.examples_per_sec
    return [
        Target('towers %d / single device, batch %d' % (most, towers.global_batch),
               rate / _baseline(rows, most), 0.95),
        Target('towers %d / MirroredStrategy %d' % (most, most),
               rate / row('mirrored', most).throughput.examples_per_sec, 1.0),
        Target('real input / data in memory',
               row('end_to_end').throughput.examples_per_sec
               / row('in_memory_step').throughput.examples_per_sec, 0.9),
        Target('towers %d FLOP/s / matmul FLOP/s' % most,
               _fraction_of_matmul(towers, matmul_rate, train_flops_per_example), 0.75),
    ]


def format_targets(target_list):
    """One line per `Target`: its value, its threshold, and whether it is met."""
    return '\n'.join('%-44s %6.2f (target >= %.2f) %s'
                     % (t.name, t.value, t.threshold,
                        'met' if t.value >= t.threshold else 'MISSED')
                     for t in target_list)


def save_chart(rows, path, title):
    """Saves a PNG of examples/sec against devices, creating its folder if missing: a line per
    method of `PER_DEVICE_COUNT`, points for the model steps of `SINGLE_FIGURES`; the input
    pipeline's rate, often far above, is written in the corner instead of stretching the
    scale."""
    # A bare Figure renders with Agg and leaves pyplot's global state alone.
    figure = Figure(figsize=(7, 4.5))
    axes = figure.subplots()
    for key in PER_DEVICE_COUNT:
        points = sorted((r.devices, r.throughput.examples_per_sec) for r in rows if r.key == key)
        label = next(r.label for r in rows if r.key == key)
        axes.plot(*zip(*points), marker='o', label=label)
    for row in rows:
        if row.key == 'input_only':
            axes.text(0.99, 0.02, '%s: %.0f images/sec' % (row.label,
                                                           row.throughput.examples_per_sec),
                      transform=axes.transAxes, ha='right', va='bottom', fontsize='small')
        elif row.key in SINGLE_FIGURES:
            axes.plot([row.devices], [row.throughput.examples_per_sec], marker='s',
                      linestyle='none', label=row.label)
    axes.set_xticks(sorted({r.devices for r in rows}))
    axes.set_xlabel('devices')
    axes.set_ylabel('images/sec')
    axes.set_ylim(bottom=0)
    axes.set_title(title, fontsize='medium')
    axes.grid(alpha=0.3)
    axes.legend(fontsize='small', loc='upper left')
    figure.tight_layout()
    _make_parent_dir(path)
    write_file_atomically(path, figure.savefig)


def _make_parent_dir(path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
