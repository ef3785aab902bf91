"""Regression against an original: the same start and batches, figures compared with tolerances.

A port is regressed by rebuilding what the original measured (a few training steps, an
evaluation of its checkpoint) from the same initial values on the same batches, and comparing
each figure with the original's. This module knows no model:

- `measure_builder` builds a graph (any builder's) on N virtual CPU towers with one thread per
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

from towers.training.assembly import assemble
from towers.compat import tf
from towers.devices import configure_devices
from towers.errors import TowersError
from towers.evaluation import restore_checkpoint
from towers.files import read_json
from towers.replication.tower import split_batch

# How many of the largest deviations a report lists.
DEFAULT_SHOW = 10


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


def _virtual_cpu_setup(num_towers):
    """The devices the originals were measured on: virtual CPUs (no GPU even where one is),
    one thread per pool."""
    setup = configure_devices(num_towers, intra_op_threads=1, inter_op_threads=1,
                              physical_gpus=0)
    setup.config.device_count['GPU'] = 0
    return setup


def _placeholders(batch):
    """Placeholders of the dtypes and shapes of `batch`'s arrays, in its structure."""
    return tf.nest.map_structure(
        lambda array: tf.placeholder(tf.as_dtype(np.asarray(array).dtype),
                                     np.shape(array)), batch)


def _feed(placeholders, batch):
    """The feed dict giving each placeholder its array of `batch` (the same structure)."""
    try:
        tf.nest.assert_same_structure(placeholders, batch)
    except (ValueError, TypeError) as err:
        raise TowersError('a batch is not structured as the first one: %s' % err)
    return dict(zip(tf.nest.flatten(placeholders), tf.nest.flatten(batch)))


class Replay:
    """What measuring code does with the session of `measure_builder` (or `measure_training`).

    Attributes:
      outputs: what the graph builder returned (for `measure_training`, the `towers.Training`
        assembled from the recipe, also named `training`).
      variable_shapes: dict variable name -> shape (list of ints) of the variables loaded
        with initial values: every global variable but the global step.
    """

    def __init__(self, outputs, placeholders, session, variables, initial, global_step):
        self.outputs = outputs
        self.variable_shapes = {v.op.name: v.shape.as_list() for v in variables}
        self._placeholders = placeholders
        self._session = session
        self._variables = variables
        self._initial = initial
        self._global_step = global_step

    @property
    def training(self):
        """The `towers.Training` that `measure_training` assembled: `outputs` under its name."""
        return self.outputs

    def run(self, fetches, batch=None):
        """Runs `fetches` (any structure `Session.run` takes) with the placeholders fed
        `batch`, a global batch structured as the example one; numpy values come back."""
        feed = None if batch is None else _feed(self._placeholders, batch)
        return self._session.run(fetches, feed)

    def restart(self):
        """Sets every variable back to its initial value, and the global step (if the graph
        has one) to its initializer's."""
        if self._global_step is not None:
            self._session.run(self._global_step.initializer)
        for variable in self._variables:
            variable.load(self._initial[variable.op.name], self._session)

    def save(self, prefix):
        """Writes every global variable to the checkpoint `prefix` (e.g. '/tmp/x/model.ckpt')."""
        tf.train.Saver(tf.global_variables()).save(self._session, prefix,
                                                   write_meta_graph=False)


def _initial_values(variables, initial_values):
    """`initial_values` of `variables`, checked and of their dtypes.

    Raises:
      TowersError: naming the variable that has no value, the value that has no variable, or
        the value of the wrong shape.
    """
    shapes = {v.op.name: v.shape.as_list() for v in variables}
    values = initial_values(dict(shapes))
    missing = sorted(set(shapes) - set(values))
    if missing:
        raise TowersError('no initial value for variable(s) %s' % ', '.join(missing))
    unknown = sorted(set(values) - set(shapes))
    if unknown:
        raise TowersError('initial value(s) for %s, which the graph does not have (its '
                          'variables: %s)' % (', '.join(unknown), ', '.join(sorted(shapes))))
    checked = {}
    for variable in variables:
        name = variable.op.name
        value = np.asarray(values[name], variable.dtype.base_dtype.as_numpy_dtype)
        if list(value.shape) != shapes[name]:
            raise TowersError('the initial value of variable %s has shape %s, the variable %s'
                              % (name, list(value.shape), shapes[name]))
        checked[name] = value
    return checked


def _global_step():
    """The default graph's global step: the variable of the `GLOBAL_STEP` collection, else the
    one named 'global_step' (the tutorials made a float32 one by hand), else None."""
    found = tf.get_collection(tf.GraphKeys.GLOBAL_STEP) or [
        v for v in tf.global_variables() if v.op.name == 'global_step']
    return found[0] if found else None


def measure_builder(build, batch, num_towers, initial_values, measure):
    """Builds a graph with `build` and hands it to `measure` in a session.

    The graph is built new, fed by placeholders shaped like `batch`, with `num_towers` virtual
    CPU devices (one intra-op and one inter-op thread, which fixes the order of float
    additions). Every global variable but the global step (if the graph has one) starts at its
    value from `initial_values`.

    Args:
      build: a function (inputs, setup) -> outputs (e.g. a dict of tensors and ops): builds
        the graph on the placeholders `inputs` (structured as `batch`) and the devices of
        `setup`, a `towers.DeviceSetup` of `num_towers` tower devices.
      batch: an example global batch: a numpy array or a nested structure (tuple, dict) of
        them, [num_towers * b, ...] each; its dtypes and shapes make the placeholders.
      num_towers: towers, >= 1.
      initial_values: a function from dict variable name -> shape (list of ints) of those
        variables to dict name -> array of that shape, one for each.
      measure: a function of a `Replay`, whose `outputs` are `build`'s; may add ops (e.g.
        norms of gradients) to the graph.

    Returns:
      What `measure` returns.

    Raises:
      TowersError: when `initial_values` misses a variable, has one the graph does not, or
        gives a value of the wrong shape (naming it).
    """
    setup = _virtual_cpu_setup(num_towers)
    with tf.Graph().as_default():
        placeholders = _placeholders(batch)
        outputs = build(placeholders, setup)
        global_step = _global_step()
        variables = [v for v in tf.global_variables() if v is not global_step]
        initial = _initial_values(variables, initial_values)
        with tf.Session(config=setup.config) as session:
            # Lookup tables (an original's `tf.contrib.lookup`) are not variables: they are
            # initialized here, once.
            session.run([tf.global_variables_initializer(), tf.tables_initializer()])
            replay = Replay(outputs, placeholders, session, variables, initial, global_step)
            replay.restart()
            return measure(replay)


def measure_training(recipe, batch, num_towers, initial_values, measure, objectives=None):
    """`measure_builder` of `recipe`'s training step, assembled with `towers.assemble`.

    Args:
      recipe: a `towers.Recipe`.
      batch, num_towers, initial_values: as `measure_builder`.
      measure: a function of a `Replay`, whose `training` is the `towers.Training`.
      objectives: names of the recipe's objectives to build train ops for; all by default.

    Returns:
      What `measure` returns.
    """
    return measure_builder(
        lambda inputs, setup: assemble(recipe, lambda: inputs, setup, objectives=objectives),
        batch, num_towers, initial_values, measure)


ClassicTowers = collections.namedtuple('ClassicTowers', ['losses', 'grads', 'update_ops'])
ClassicTowers.__doc__ = """The towers of `classic_towers`.

Attributes:
  losses: list of each tower's loss, as the original's `tower_loss` returned it.
  grads: the original's `average_gradients` of the towers' (gradient, variable) pairs.
  update_ops: tower 0's `UPDATE_OPS` (batch-norm statistics), which the tutorials ran with
    the update.
"""


def classic_towers(tower_loss, average_gradients, inputs, setup, optimizer, device_fn=None,
                   tower_name='tower'):
    """The tower loop of the TF1 multi-GPU tutorials, around an original program's functions.

    As the tutorials' `train()` did: in one reused variable scope, for each device i, in
    `tf.device(device)` and name scope '<tower_name>_<i>', the loss of the i-th shard of
    `inputs` and its gradients (`optimizer.compute_gradients`); then the original's average,
    on the parameter device. For a builder of `measure_builder` or `regress_builders`.

    Args:
      tower_loss: the original's function (scope, *shard) -> the tower's loss.
      average_gradients: the original's function of the list of each tower's pairs.
      inputs: a tuple of tensors [num_towers * b, ...], split into equal shards.
      setup: the `towers.DeviceSetup` whose tower devices the towers go on.
      optimizer: a `tf.train.Optimizer`.
      device_fn: a function (tower device) -> what the original put in `tf.device`, e.g. its
        `assign_to_device(device, '/cpu:0')`; the device itself by default.
      tower_name: the prefix of the towers' name scopes.

    Returns:
      A `ClassicTowers`.
    """
    losses, tower_grads, update_ops = [], [], []
    with tf.variable_scope(tf.get_variable_scope()):
        for i, (device, shard) in enumerate(zip(setup.tower_devices,
                                                split_batch(inputs, len(setup.tower_devices)))):
            with tf.device(device_fn(device) if device_fn else device), \
                    tf.name_scope('%s_%d' % (tower_name, i)) as scope:
                losses.append(tower_loss(scope, *shard))
                tf.get_variable_scope().reuse_variables()
                if i == 0:
                    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS, scope)
                tower_grads.append(optimizer.compute_gradients(losses[-1]))
    with tf.device(setup.ps_device):
        return ClassicTowers(losses, average_gradients(tower_grads), update_ops)


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


def evaluate_checkpoint(build_fn, checkpoint, batches, var_list=None):
    """Restores `checkpoint` into a network and runs it on each of `batches`.

    The network is built in a new graph and run on one CPU with one thread per pool.

    Args:
      build_fn: called once with placeholders structured and shaped as `batches[0]`; builds the
        network in test mode and returns a dict name -> tensor to compute.
      checkpoint: the checkpoint prefix, e.g. '/tmp/train/model.ckpt-1000'.
      batches: a non-empty list of batches (arrays or nested structures of them) of one
        structure, shape and dtype.
      var_list: a function of no arguments, called after `build_fn`, returning the
        `tf.train.Saver` var list (e.g. moving averages restored into the variables); every
        global variable by default.

    Returns:
      A list with, per batch, a dict name -> numpy value.

    Raises:
      TowersError: naming `checkpoint`, when it is missing or does not hold the network's
        variables.
    """
    setup = _virtual_cpu_setup(1)
    with tf.Graph().as_default():
        placeholders = _placeholders(batches[0])
        fetches = build_fn(placeholders)
        saver = tf.train.Saver(tf.global_variables() if var_list is None else var_list())
        with tf.Session(config=setup.config) as session:
            restore_checkpoint(saver, session, checkpoint)
            return [session.run(fetches, _feed(placeholders, batch)) for batch in batches]


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
    """Measures and compares runs one after the other, printing each, then the `report`.

    Args:
      runs: a list of (title, compare): a line naming the run, printed before it is measured,
        and a function of no arguments that measures it and returns its `Deviation`s.
      show: how many of the largest deviations the report lists.

    Returns:
      True when every figure of every run is within its tolerance.
    """
    deviations = []
    for title, compare in runs:
        print(title, flush=True)
        found = compare()
        print('  %d figures compared, %d beyond tolerance'
              % (sum(not d.reported_only for d in found), sum(d.failed for d in found)))
        for line in _figure_lines(found):
            print(line)
        deviations += found
    return report(deviations, show)
