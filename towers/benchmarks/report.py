"""The throughput benchmark's results: its rows, the table, the targets, the modes, the JSON and
the chart.

    print(report.format_table(rows, matmul_rate, train_flops_per_example))
    print(report.format_targets(report.targets(rows, matmul_rate, train_flops_per_example)))
    print(report.format_modes(rows))
    report.save_chart(rows, 'out/benchmark.png', 'CIFAR-10 training')
    report.save_results('out/benchmark.json', rows, matmul_rate, train_flops_per_example,
                        report.headline_ratios(rows, matmul_rate, train_flops_per_example))

Every ratio of two rows timed in the same rounds (`towers.benchmarks.measure.measure_in_turns`) is the
median of the rounds' ratios, quoted with its interquartile range `[low-high]`; a range wider
than `towers.benchmarks.measure.MAX_SPREAD` is marked `*`, too wide to conclude from. Rows timed apart
are compared by their medians, without a range.
"""
import collections

from matplotlib.figure import Figure

from towers.benchmarks import measure as benchmark
from towers import reports

# The keys of the results: methods measured per number of devices, then single figures. Any
# other key is a training mode measured at the most devices (see `towers.benchmarks.suite`).
PER_DEVICE_COUNT = ('single_device', 'towers', 'mirrored')
SINGLE_FIGURES = ('input_only', 'end_to_end', 'in_memory_step')
# The matmul rate timed in turns with the rows of the most devices: not a row of the table.
MATMUL = 'matmul'

Row = collections.namedtuple(
    'Row', ['key', 'label', 'devices', 'global_batch', 'parallel_devices', 'throughput',
            'group'], defaults=[None])
Row.__doc__ = """One measured configuration.

Attributes:
  key: a name of `PER_DEVICE_COUNT` or `SINGLE_FIGURES`, a training mode's, or `MATMUL`.
  label: how the table names it.
  devices: the device count it stands for: the global batch is that many towers' batches
    (which the single device runs as one).
  global_batch: examples per step.
  parallel_devices: physical devices computing at once (1 for virtual CPU devices, which share
    the machine's cores), for the fraction of the matmul rate; 0 where no model runs.
  throughput: the `towers.benchmarks.measure.Throughput` (FLOP/s for `MATMUL`).
  group: rows of one group were timed in turns, round by round, so their ratios are paired;
    None for a row timed alone.
"""


def is_mode(row):
    """Whether `row` is a training mode's (replicated, XLA, mixed precision, ...)."""
    return row.key not in PER_DEVICE_COUNT + SINGLE_FIGURES + (MATMUL,)


def ratio(row, other, scale=1.0):
    """`row`'s rate over `other`'s, times `scale`: paired round by round when they were timed
    in turns, else the ratio of their medians. A `towers.benchmarks.measure.Ratio`."""
    if row.group is not None and row.group == other.group:
        return benchmark.paired_ratio(row.throughput, other.throughput, scale)
    return benchmark.unpaired_ratio(row.throughput, other.throughput, scale)


def _row(rows, key, devices=None):
    return next(r for r in rows if r.key == key and devices in (None, r.devices))


def _matmul_ratio(row, rows, matmul_rate, train_flops_per_example):
    """The fraction of the matmul rate of the devices computing at once that `row` reaches."""
    scale = train_flops_per_example / row.parallel_devices
    matmul = [r for r in rows if r.key == MATMUL and r.group == row.group]
    if row.group is not None and matmul:
        return ratio(row, matmul[0], scale)
    return benchmark.Ratio(row.throughput.examples_per_sec * scale / matmul_rate, None, None)


def _spread(value):
    if value.low is None:
        return '-'
    return '[%.2f-%.2f]%s' % (value.low, value.high, '*' if benchmark.too_wide(value) else '')


def results_json(rows, matmul_rate, train_flops_per_example, ratios=None):
    """The results as the JSON of the benchmark: images/sec per method and device count.

    Args:
      rows, matmul_rate, train_flops_per_example: the measurements.
      ratios: (name, `towers.benchmarks.measure.Ratio`) pairs to add, or None.

    Returns:
      A dict: each of `PER_DEVICE_COUNT` -> {'<devices>': examples/sec}, each of
      `SINGLE_FIGURES` and of the modes measured -> examples/sec, 'matmul_flops',
      'model_train_flops_per_example', and with `ratios` 'ratios' -> {name: {'median', 'low',
      'high'}}.
    """
    results = {key: {} for key in PER_DEVICE_COUNT}
    for row in rows:
        if row.key in PER_DEVICE_COUNT:
            results[row.key][str(row.devices)] = row.throughput.examples_per_sec
        elif row.key != MATMUL:
            results[row.key] = row.throughput.examples_per_sec
    results['matmul_flops'] = matmul_rate
    results['model_train_flops_per_example'] = train_flops_per_example
    if ratios:
        results['ratios'] = {name: value._asdict() for name, value in ratios}
    return results


def save_results(path, rows, matmul_rate, train_flops_per_example, ratios=None):
    """Writes `results_json` to `path`."""
    reports.write_results(path, results_json(rows, matmul_rate, train_flops_per_example, ratios))


def format_table(rows, matmul_rate, train_flops_per_example):
    """The measurements as a text table with the ratio of each to the single device.

    Each row's ratio is against the single device with the same global batch, with its
    interquartile range over the rounds; 'of matmul' is the model's achieved FLOP/s over the
    matmul rate of the devices computing at once.
    """
    lines = ['%-38s %7s %6s %10s %14s %7s %9s' % ('method', 'devices', 'batch', 'images/s',
                                                  'vs (a): IQR', 'median', 'of matmul')]
    for row in rows:
        if row.key == MATMUL:
            continue
        versus = ratio(row, _row(rows, 'single_device', row.devices))
        fraction = ('%9.2f' % _matmul_ratio(row, rows, matmul_rate,
                                            train_flops_per_example).median
                    if row.parallel_devices else '%9s' % '-')
        lines.append('%-38s %7d %6d %10.1f %14s %7.2f %s' % (
            row.label, row.devices, row.global_batch, row.throughput.examples_per_sec,
            _spread(versus), versus.median, fraction))
    lines.append('matmul rate %.1f GFLOP/s; model %.1f MFLOP per training example'
                 % (matmul_rate / 1e9, train_flops_per_example / 1e6))
    lines.append('[low-high]: interquartile range of the ratios of the rounds timed in turns; '
                 '* wider than %.2f: too wide to conclude' % benchmark.MAX_SPREAD)
    return '\n'.join(lines)


Target = collections.namedtuple('Target', ['name', 'value', 'threshold', 'low', 'high'],
                                defaults=[None, None])
Target.__doc__ = """A target of the benchmark: a ratio's median `value` against `threshold`,
with the ratio's interquartile range `low`-`high` (None when its rates were timed apart)."""


def targets(rows, matmul_rate, train_flops_per_example):
    """The throughput targets, checked at the largest number of devices measured.

    - towers reach 0.95x the single device with the same global batch;
    - towers are at least as fast as MirroredStrategy;
    - the step with real input reaches 0.9x the step on data in memory;
    - the towers' training step reaches 0.75 of the matmul rate.

    Returns:
      A list of `Target`.
    """
    most = max(r.devices for r in rows if r.key == 'towers')
    towers = _row(rows, 'towers', most)
    figures = [
        ('towers %d / single device, batch %d' % (most, towers.global_batch),
         ratio(towers, _row(rows, 'single_device', most)), 0.95),
        ('towers %d / MirroredStrategy %d' % (most, most),
         ratio(towers, _row(rows, 'mirrored', most)), 1.0),
        ('real input / data in memory',
         ratio(_row(rows, 'end_to_end'), _row(rows, 'in_memory_step')), 0.9),
        ('towers %d FLOP/s / matmul FLOP/s' % most,
         _matmul_ratio(towers, rows, matmul_rate, train_flops_per_example), 0.75),
    ]
    return [Target(name, value.median, threshold, value.low, value.high)
            for name, value, threshold in figures]


def _verdict(target):
    if target.low is None:
        return 'met' if target.value >= target.threshold else 'MISSED'
    if target.low >= target.threshold:
        return 'met'
    if target.high < target.threshold:
        return 'MISSED'
    return 'undecided: the threshold is inside the IQR'


def format_targets(target_list):
    """One line per `Target`: its value and range, its threshold, and whether it is met (or,
    when the threshold falls inside the range, that it cannot be told)."""
    return '\n'.join('%-44s %6.2f %-14s (target >= %.2f) %s'
                     % (t.name, t.value, _spread(benchmark.Ratio(t.value, t.low, t.high)),
                        t.threshold, _verdict(t))
                     for t in target_list)


def mode_ratios(rows):
    """Each training mode's rate over the towers' (parameter server, float32) at its devices.

    Returns:
      A list of (row, `towers.benchmarks.measure.Ratio`), in the order of `rows`.
    """
    return [(row, ratio(row, _row(rows, 'towers', row.devices))) for row in rows
            if is_mode(row)]


# A mode is faster than the towers when its lower quartile is at least this much above them:
# two --quick runs on one quiet machine put the same mode at 0.99 [0.99-1.02] and then at
# 1.01 [1.00-1.04], a difference that should not change a model's default.
MIN_GAIN = 0.02


def format_modes(rows):
    """The modes against the towers, and which is fastest: the mode whose lower quartile is
    `MIN_GAIN` above the towers' rate and above every other mode's median, when its range is
    narrow enough to conclude; else a line saying that no mode is, or that the spread is too
    wide to tell."""
    compared = mode_ratios(rows)
    if not compared:
        return 'no training modes measured'
    lines = ['%-52s %6.2f %s' % ('%s / (b) towers' % row.label, value.median, _spread(value))
             for row, value in compared]
    row, best = max(compared, key=lambda pair: pair[1].median)
    ahead = best.low is not None and best.low >= 1.0 + MIN_GAIN and all(
        best.low > other.median for r, other in compared if r is not row)
    if ahead and not benchmark.too_wide(best):
        lines.append('fastest at %d devices: %s, %.2fx (b) towers %s'
                     % (row.devices, row.label, best.median, _spread(best)))
    elif ahead:
        lines.append('fastest at %d devices: perhaps %s, %.2fx (b) towers %s, but its spread is '
                     'too wide to conclude' % (row.devices, row.label, best.median,
                                               _spread(best)))
    else:
        lines.append('fastest at %d devices: no mode is faster than (b) towers (parameter '
                     'server, float32, no XLA) by %d%% beyond the spread of the rounds'
                     % (row.devices, round(100 * MIN_GAIN)))
    return '\n'.join(lines)


def headline_ratios(rows, matmul_rate, train_flops_per_example):
    """The ratios the benchmark concludes from: the targets' and each mode's over the towers.

    Returns:
      A list of (name, `towers.benchmarks.measure.Ratio`).
    """
    return ([(t.name, benchmark.Ratio(t.value, t.low, t.high))
             for t in targets(rows, matmul_rate, train_flops_per_example)]
            + [('%s / towers %d' % (row.key, row.devices), value)
               for row, value in mode_ratios(rows)])


def save_chart(rows, path, title):
    """Saves a PNG of examples/sec against devices: a line per
    method of `PER_DEVICE_COUNT`, points for the model steps of `SINGLE_FIGURES` and the
    modes; the input pipeline's rate, often far above, is written in the corner instead of
    stretching the scale."""
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
        elif row.key in SINGLE_FIGURES or is_mode(row):
            axes.plot([row.devices], [row.throughput.examples_per_sec], marker='s',
                      linestyle='none', label=row.label)
    axes.set_xticks(sorted({r.devices for r in rows}))
    axes.set_xlabel('devices')
    axes.set_ylabel('images/sec')
    axes.set_ylim(bottom=0)
    axes.set_title(title, fontsize='medium')
    axes.grid(alpha=0.3)
    axes.legend(fontsize='x-small', loc='upper left')
    figure.tight_layout()
    reports.save_figure(path, figure)
