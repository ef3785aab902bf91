"""Regression against an original: the same start and batches, figures compared with tolerances.

A port is regressed by rebuilding what the original measured (a few training steps, an
evaluation of its checkpoint) from the same initial values on the same batches, and comparing
each figure with the original's. This module knows no model:

- `measure_builder` (in `towers.evaluation.replay`, as the others named here) builds a graph (any builder's) on N virtual CPU towers with one thread per
  pool (which fixes the order of float additions, as the originals were measured), loads the
  given initial values by variable name and hands the measuring code a `Replay`, which runs
  fetches on batches, restarts from the initial values and saves checkpoints;
  `measure_training` does it for a `towers.Recipe`'s training step; `classic_towers` builds an
  original program's towers from its own `tower_loss` and `average_gradients`;
- `regress_builders` regresses a port against its original live, with no golden file: both
  graphs from the same initial values on the same batches, their figures compared with
  tolerances (`compare_figures`);
- `evaluate_checkpoint` restores a checkpoint into a network, with any `tf.train.Saver` var
  list, and runs it on given batches;
- `Comparison` turns measured and original figures into `Deviation`s (exact, close in absolute
  or relative terms, or reported only), and `check_runs` prints them run by run, then the
  largest deviations relative to their tolerances and a final OK or FAILED line.

    def measure(replay):
        return {'loss': float(replay.run(replay.training.losses['total'], batch))}

    measured = measure_training(MyRecipe(), batch, 2, lambda shapes: weights, measure)
    comparison = Comparison('2 towers')
    comparison.close('losses', 'loss of batch 0', golden['loss'], measured['loss'], 1e-3)
"""
import collections
import math

import numpy as np

from towers import bars
from towers.errors import TowersError
from towers.evaluation.eval_flags import DEFAULT_SHOW
from towers.evaluation.replay import (ClassicTowers, Replay, classic_towers,
                                      evaluate_checkpoint, measure_builder, measure_training)
from towers.files import read_json

__all__ = ['ClassicTowers', 'Comparison', 'Deviation', 'Relative', 'Replay', 'check_runs',
           'classic_towers', 'compare_figures', 'evaluate_checkpoint', 'measure_builder',
           'measure_training', 'read_runs', 'regress_builders', 'report']


class Deviation(collections.namedtuple(
        'Deviation', ['run', 'figure', 'what', 'expected', 'actual', 'error', 'tolerance',
                      'relative'])):
    """One compared figure.

    Attributes:
      run: the run it belongs to, e.g. the golden run's key '2'.
      figure: the kind of figure, which the report summarises, e.g. 'tower losses'.
      what: this very figure, e.g. 'tower 1 loss at step 3'.
      expected, actual: the original's and the measured value (a number, or for an exact
        check any comparable value, e.g. a list of names).
      error: |actual - expected|, divided by |expected| when `relative`; for an exact check 0
        or inf.
      tolerance: the largest error allowed, 0 for an exact check, None for a figure reported
        only (it never fails).
      relative: whether `error` and `tolerance` are relative to |expected|.
    """
    __slots__ = ()

    @property
    def reported_only(self):
        """Whether the figure has no tolerance: shown, never failed."""
        return self.tolerance is None

    @property
    def failed(self):
        """Whether the error exceeds the tolerance."""
        return not self.reported_only and self.error > self.tolerance

    @property
    def ratio(self):
        """error / tolerance, which the report ranks by: 0 or inf for an exact check, 0 for a
        figure reported only."""
        if self.tolerance:
            return self.error / self.tolerance
        return math.inf if self.failed else 0.0


class Comparison:
    """Collects the `Deviation`s of one run, in the order the figures are compared.

    Attributes:
      run: the run the figures belong to.
      deviations: list of `Deviation`.
    """

    def __init__(self, run):
        self.run = run
        self.deviations = []

    def _add(self, figure, what, expected, actual, error, tolerance, relative):
        self.deviations.append(Deviation(self.run, figure, what, expected, actual, error,
                                         tolerance, relative))

    def exact(self, figure, what, expected, actual, reported_only=False):
        """Compares two values (numbers, strings, lists) for equality; a difference fails the
        comparison unless `reported_only`."""
        self._add(figure, what, expected, actual, 0.0 if expected == actual else math.inf,
                  None if reported_only else 0.0, False)

    def close(self, figure, what, expected, actual, tolerance, relative=False):
        """Compares two numbers within `tolerance` (None: report the error only).

        A relative error against an expected 0 is 0 when the actual is 0 too, else inf.
        """
        error = abs(actual - expected)
        if relative:
            error = error / abs(expected) if expected else (0.0 if error == 0 else math.inf)
        self._add(figure, what, expected, actual, float(error), tolerance, relative)

    def exact_each(self, figure, what, expected, actual):
        """Compares two dicts key -> value: each key of either, exactly, as `what % key`; a key
        only one of them has compares 'missing' with its value."""
        for key in sorted(set(expected) | set(actual)):
            self.exact(figure, what % (key,), expected.get(key, 'missing'),
                       actual.get(key, 'missing'))

    def close_each(self, figure, keys_what, what, expected, actual, tolerance,
                   relative=False):
        """Compares two dicts key -> number: their sorted keys exactly (as `keys_what`; a
        figure reported only when `tolerance` is None), then the value of each shared key
        within `tolerance` (as `what % key`)."""
        keys = sorted(expected)
        self.exact(figure, keys_what, keys, sorted(actual), reported_only=tolerance is None)
        for key in keys:
            if key in actual:
                self.close(figure, what % (key,), expected[key], actual[key], tolerance,
                           relative)


def read_runs(path, flag):
    """The golden runs of the JSON file `path`, given with `flag`: its "runs", a dict run key ->
    run (a dict of the figures the original measured).

    Raises:
      TowersError: naming the flag and the file, when it cannot be read, is not JSON or has no
        runs.
    """
    golden = read_json(path, flag)
    runs = golden.get('runs') if isinstance(golden, dict) else None
    if not runs or not isinstance(runs, dict):
        raise TowersError('%s %s has no "runs" (expected a dict run key -> figures)'
                          % (flag, path))
    return runs


class Relative(float):
    """A tolerance relative to |original value|: `tolerances={'gradient norms': Relative(1e-4)}`.
    A plain number is an absolute tolerance."""


def _flatten(value, name):
    """A figure's value as dict '<name>[key]...[index]' -> number (a number alone: name)."""
    if isinstance(value, dict):
        items = sorted(value.items())
    elif isinstance(value, (list, tuple, np.ndarray)):
        items = enumerate(np.asarray(value).tolist() if isinstance(value, np.ndarray)
                          else value)
    else:
        return {name: value}
    flat = {}
    for key, item in items:
        flat.update(_flatten(item, '%s[%s]' % (name, key)))
    return flat


def compare_figures(run, original, port, tolerances):
    """Compares two measurements of the same figures, each within its tolerance.

    Args:
      run: the run's name in the report.
      original, port: dicts figure name -> value: a number, or a list, tuple, array or dict of
        them (nested), e.g. {'tower losses': [[2.3, 2.4], [2.1, 2.2]]}.
      tolerances: dict figure name -> its tolerance: a number (absolute; 0 for exact), a
        `Relative`, or None (reported only, never failing).

    Returns:
      A list of `Deviation`: per figure, its entries (which must be the same on both sides),
      then each entry, named '<figure>[key]...'.

    Raises:
      TowersError: naming figures measured on one side only, or without a tolerance, or
        tolerances of figures not measured.
    """
    for side, figures in (('the original', original), ('the port', port)):
        if set(figures) != set(tolerances):
            raise TowersError(
                'the figures of %s (%s) are not those given tolerances (%s)'
                % (side, ', '.join(sorted(figures)), ', '.join(sorted(tolerances))))
    comparison = Comparison(run)
    for figure in sorted(tolerances):
        tolerance = tolerances[figure]
        comparison.close_each(figure, 'entries of %s' % figure, '%s',
                              _flatten(original[figure], figure), _flatten(port[figure], figure),
                              None if tolerance is None else float(tolerance),
                              relative=isinstance(tolerance, Relative))
    return comparison.deviations


def regress_builders(original_build, port_build, initial_values, batches, figures, tolerances,
                     num_towers=1, run='port'):
    """Regresses a port against its original: the same weights and batches, figures compared.

    Each side's graph is built and measured by `measure_builder` (a new graph, `num_towers`
    virtual CPU devices, one thread per pool, every variable from `initial_values`); then
    `compare_figures` compares what `figures` measured on each.

        def figures(replay, batches):
            return {'tower losses': [replay.run(replay.outputs, batch)[1] for batch in batches]}
        deviations = regress_builders(original_build, port_build, initial_values, batches,
                                      figures, {'tower losses': 1e-5}, num_towers=2)
        ok = report(deviations)

    Args:
      original_build, port_build: functions (inputs, setup) -> outputs, as `measure_builder`
        takes them: the original's graph (e.g. its functions through `classic_towers`) and the
        port's (e.g. `towers.assemble` of its recipe).
      initial_values: as `measure_builder`'s; called for each side with its variables, which
        must be the same names and shapes.
      batches: a non-empty list of global batches (arrays or nested structures of them).
      figures: a function (replay, batches) -> dict figure name -> value, run on each side
        with its `Replay` (`replay.outputs` is what its builder returned).
      tolerances: dict figure name -> tolerance, as `compare_figures`.
      num_towers: towers (virtual CPU devices) of both sides.
      run: the name of this comparison in the report.

    Returns:
      The list of `Deviation` of `compare_figures`.

    Raises:
      TowersError: a side's variables do not match `initial_values` (naming the side and the
        variable), or the figures do not match the tolerances.
    """
    measured = []
    for side, build in (('the original', original_build), ('the port', port_build)):
        try:
            measured.append(measure_builder(build, batches[0], num_towers, initial_values,
                                            lambda replay: figures(replay, batches)))
        except TowersError as err:
            raise TowersError('%s: %s' % (side, err)) from err
    return compare_figures(run, measured[0], measured[1], tolerances)


def _tolerance_text(deviation):
    if deviation.reported_only:
        return 'reported only'
    if not deviation.tolerance:
        return 'exact'
    return 'tolerance %g%s' % (deviation.tolerance, ' relative' if deviation.relative else '')


def _short(value):
    if isinstance(value, (float, np.floating)):
        return '%.6g' % value
    return str(value)[:40]


def _worst(deviations):
    """The deviation ranked first: the largest relative to its tolerance (largest error for
    figures reported only)."""
    return max(deviations, key=lambda d: d.error if d.reported_only else d.ratio)


def _figure_lines(deviations):
    """One line per kind of figure, in the order compared: its value when it is one figure,
    how many differ when all are exact checks, else its largest deviation."""
    figures = collections.OrderedDict()
    for deviation in deviations:
        figures.setdefault(deviation.figure, []).append(deviation)
    lines = []
    for figure, found in figures.items():
        if len(found) == 1:
            d = found[0]
            lines.append('  %s = %s (original %s; %s)' % (d.what, _short(d.actual),
                                                          _short(d.expected),
                                                          _tolerance_text(d)))
        elif all(d.tolerance == 0 for d in found):
            differ = [d for d in found if d.failed]
            lines.append('  %s: %s (exact)' % (figure, '%d of %d differ, the first %s' % (
                len(differ), len(found), differ[0].what) if differ else
                'all %d equal' % len(found)))
        else:
            d = _worst(found)
            lines.append('  %s: max |deviation| %.3g (%s; %s)' % (figure, d.error, d.what,
                                                                 _tolerance_text(d)))
    return lines


def report(deviations, show=DEFAULT_SHOW):
    """Prints the largest deviations relative to their tolerances and a final OK or FAILED line.

    Args:
      deviations: the `Deviation`s of every run.
      show: how many of the largest to list.

    Returns:
      True when no figure exceeds its tolerance.
    """
    compared = [d for d in deviations if not d.reported_only]
    # Failed exact checks (ratio inf) lead; the sort is stable, so ties keep their order.
    ranked = sorted(compared, key=lambda d: d.ratio, reverse=True)
    print('largest deviations (error / tolerance):')
    for d in ranked[:show]:
        print('  run %s  %-62s expected %-12s got %-12s error %.3g (%s, ratio %.3g)'
              % (d.run, d.what, _short(d.expected), _short(d.actual), d.error,
                 _tolerance_text(d), d.ratio))
    failed = [d for d in compared if d.failed]
    if failed:
        print('FAILED: %d of %d figures beyond tolerance' % (len(failed), len(compared)))
        return False
    reported = len(deviations) - len(compared)
    print('OK: all %d figures within tolerance%s'
          % (len(compared), ' (%d more reported only)' % reported if reported else ''))
    return True


def check_runs(runs, show=DEFAULT_SHOW):
    """Measures and compares runs one after the other, printing each, then the `report`; the
    progress over the runs on stderr (`towers.bars`).

    Args:
      runs: a list of (title, compare): a line naming the run, printed before it is measured,
        and a function of no arguments that measures it and returns its `Deviation`s.
      show: how many of the largest deviations the report lists.

    Returns:
      True when every figure of every run is within its tolerance.
    """
    deviations = []
    for title, compare in bars.bar(runs, 'regression', 'runs'):
        bars.write(title)
        found = compare()
        bars.write('  %d figures compared, %d beyond tolerance'
                   % (sum(not d.reported_only for d in found), sum(d.failed for d in found)))
        for line in _figure_lines(found):
            bars.write(line)
        deviations += found
    return report(deviations, show)
