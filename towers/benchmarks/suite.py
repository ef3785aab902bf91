"""The throughput benchmark: one registered model trained every way, side by side.

    results = suite.run(registry.get('cifar10'), batch_size=128, num_gpus=4, data_dir=None,
                        plan=benchmark.FULL, configure=towers.configure_devices)
    print(report.format_table(results.rows, results.matmul_rate,
                              results.train_flops_per_example))

For N in `device_counts(num_gpus)`, with `batch_size` examples per tower, it measures

  (a) `single_device`: one device training on the global batch of N towers;
  (b) `towers`: `towers.assemble` on N devices (virtual CPU devices when there is no GPU):
      parameter server, float32, no XLA;
  (c) `mirrored`: `tf.distribute.MirroredStrategy` on the same devices, graph mode, the loss of
      each replica divided by N so that the summed update equals the towers' averaged one;

and, at the most devices,

  (d) `input_only`: the model's real input pipeline alone, on the global batch;
  (e) `end_to_end`: the towers' step on that input, beside `in_memory_step`, the same step on
      data already in memory (that is (b));
  (f)... the towers in the other training modes of `MODES` (`towers.Mode`: replicated,
      XLA, mixed precision, and their combinations), for which are fastest;
  (m) `towers_deterministic`: (b) with op determinism, what `--deterministic` costs the step.

The configurations of one device count are built once each, in their own graph with their
session open, and timed in turns (`towers.benchmarks.measure.measure_in_turns`), so that every ratio
the table and the targets give between them is paired round by round; the matmul rate joins
the most devices' turns. (d), whose input buffers would refill between turns, is timed alone.
Op determinism is process-wide: (m) switches it on for its own blocks only (`TimedSession`).

(a)-(c) and the modes train on random data held in host memory, so that they time the step
alone; every step is the model's recipe (its optimizer, learning rate and once-per-step ops,
such as the CIFAR-10 tutorial's moving averages of the weights), the variables on the parameter
device for (a) and (b). It also counts the model's FLOPs per training example from the
convolutions and matmuls of its training graph.
"""
import collections
import functools
import logging

import towers
from towers import replication
from towers.benchmarks import measure as benchmark
from towers.benchmarks.report import MATMUL, Row
from towers.compat import tf
from towers.training import determinism

log = logging.getLogger(__name__)

# Where every input lives, in memory or read from files: the host, as in training.
INPUT_DEVICE = '/cpu:0'


def _measured_modes():
    """The training modes measured beside (b) at the most devices, (key, label, mode): every
    variable update of `towers.replication.registry`, with and without XLA and mixed
    precision, but the parameter-server towers in float32 without XLA, which is (b)."""
    modes = []
    for mixed_precision in (False, True):
        for xla in (False, True):
            for update in replication.VARIABLE_UPDATES:
                if update == replication.PARAMETER_SERVER and not (xla or mixed_precision):
                    continue
                name = 'towers' if update == replication.PARAMETER_SERVER else update
                key = name + ('_xla' if xla else '') + ('_mixed' if mixed_precision else '')
                label = ', '.join([name] + (['XLA'] if xla else [])
                                  + (['mixed precision'] if mixed_precision else []))
                modes.append((key, '(%s) %s' % (chr(ord('f') + len(modes)), label),
                              replication.Mode(update, xla, mixed_precision)))
    return tuple(modes)


MODES = _measured_modes()
# The row of (b) with op determinism (`--deterministic`), after the modes.
DETERMINISTIC = 'towers_deterministic'

Results = collections.namedtuple(
    'Results', ['rows', 'matmul_rate', 'train_flops_per_example', 'forward_flops_per_example',
                'device_kind', 'skipped'])
Results.__doc__ = """Everything `run` measured.

Attributes:
  rows: list of `report.Row`, in the order measured (the matmul rate's among them).
  matmul_rate: the matmul rate of one device, FLOP/s.
  train_flops_per_example, forward_flops_per_example: as `train_flops_per_example` returns.
  device_kind: what the devices are, e.g. '4 GPUs' or 'virtual CPU devices sharing 2 cores'.
  skipped: (label, reason) of each mode the model cannot train in (e.g. a Keras model shared
    by object in the replicated mode).
"""


def device_counts(num_gpus):
    """1, 2, 4, ... below `num_gpus`, and `num_gpus`."""
    counts = [1]
    while counts[-1] * 2 < num_gpus:
        counts.append(counts[-1] * 2)
    return counts + [num_gpus] if num_gpus > 1 else counts


def towers_step(entry, batch, setup, batch_size, mode=None):
    """The op of one training step of `entry`'s recipe on the towers of `setup`.

    Args:
      entry: a `models.registry.Entry`.
      batch: the global batch, as `entry.synthetic_batch` or `entry.real_input` give it.
      setup: a `towers.DeviceSetup`; one tower per device.
      batch_size: examples per tower, for the recipe.
      mode: a `towers.Mode`; parameter server, float32, no XLA by default.
    """
    training = towers.assemble(entry.recipe(batch_size), lambda: batch, setup,
                               objectives=[entry.objective], mode=mode)
    return training.train_ops[entry.objective]


def mirrored_step(entry, batch, setup, batch_size):
    """The op of one step of the same recipe trained by MirroredStrategy on the devices of
    `setup`: its global step, learning rate, optimizer and once-per-step ops, and its
    objective's loss and variables. Arguments as for `towers_step`."""
    recipe = entry.recipe(batch_size)
    strategy = tf.distribute.MirroredStrategy(setup.tower_devices)
    with strategy.scope():
        global_step = recipe.create_global_step()
        optimizer = recipe.optimizer(recipe.learning_rate(global_step,
                                                          len(setup.tower_devices)))
        step, _ = replication.get(replication.registry.MIRRORED).builder()(
            recipe.tower_fn, batch, optimizer, global_step, setup.ps_device,
            recipe.objectives[entry.objective])
        return tf.group(step, *recipe.once_per_step_ops(global_step))


def train_flops_per_example(entry, batch_size):
    """FLOPs per example of `entry`'s training step (the computation of the gradients of its
    objective's variables) and of its forward pass alone (the objective's loss), without the
    scopes `entry.flop_skip_scopes` names.

    Returns:
      (training FLOPs, forward FLOPs), each per example.
    """
    with tf.Graph().as_default():
        replicated = towers.assemble(
            entry.recipe(batch_size), lambda: entry.synthetic_batch(batch_size),
            towers.configure_devices(1), objectives=[entry.objective]).replicated
        gradients = [grad for grad, _ in replicated.grads[entry.objective]]
        skip = entry.flop_skip_scopes
        return (benchmark.count_flops(gradients, skip) / batch_size,
                benchmark.count_flops(replicated.objective_loss(entry.objective), skip)
                / batch_size)


Configuration = collections.namedtuple(
    'Configuration', ['key', 'label', 'devices', 'num_towers', 'input_fn', 'step_fn', 'mode',
                      'deterministic'], defaults=[None, False])
Configuration.__doc__ = """One way of training the model, as a row of the benchmark.

Attributes:
  key, label: of the row.
  devices: the global batch is `devices` times the per-tower batch.
  num_towers: the devices it runs on; each takes an equal share of the global batch.
  input_fn: global batch -> the batch (in memory or the real input).
  step_fn: (entry, batch, setup, per-tower batch) -> the op of one step, as `towers_step`;
    None to time the input alone.
  mode: the `towers.Mode` of `step_fn`, when it is not (b)'s: a model that the mode cannot
    train (`towers.replication.unsupported`) is reported as skipped.
  deterministic: whether it is built and run with op determinism, its graph seeded.
"""


class _Runner:
    """Builds configurations, each in a graph of its own, and times them in turns."""

    def __init__(self, entry, batch_size, data_dir, plan, configure):
        self._entry = entry
        self._batch_size = batch_size
        self._data_dir = data_dir
        self._plan = plan
        self._configure = configure
        self._physical_gpus = len(tf.config.list_physical_devices('GPU'))
        self._groups = 0
        self.skipped = []

    def device_kind(self):
        return benchmark.device_kind(self._physical_gpus)

    def _parallel_devices(self, devices):
        return min(devices, self._physical_gpus) if self._physical_gpus else 1

    def in_memory(self, global_batch):
        with tf.device(INPUT_DEVICE):
            return self._entry.synthetic_batch(global_batch)

    def real_input(self, global_batch):
        with tf.device(INPUT_DEVICE):
            return self._entry.real_input(self._data_dir, global_batch)

    def _open(self, configuration):
        """A `TimedSession` of the configuration's step, built in a new graph."""
        global_batch = self._batch_size * configuration.devices
        setup = self._configure(configuration.num_towers)
        seed = determinism.graph_seed(None, configuration.deterministic)
        with determinism.op_determinism(configuration.deterministic), \
                tf.Graph().as_default():
            if seed is not None:
                tf.set_random_seed(seed)
            batch = configuration.input_fn(global_batch)
            fetches = (configuration.step_fn(self._entry, batch, setup,
                                             global_batch // configuration.num_towers)
                       if configuration.step_fn else tf.group(*batch))
            return benchmark.TimedSession(fetches, global_batch, setup.config,
                                          configuration.deterministic)

    def _open_matmul(self, size):
        setup = self._configure(1)
        with tf.Graph().as_default():
            op, flops = benchmark.matmul_step(size, setup.tower_devices[0])
            return benchmark.TimedSession(op, flops, setup.config)

    def measure(self, configurations, in_turns=True, matmul_size=None):
        """Builds `configurations` (and the matmul of `matmul_size`), times them in turns and
        returns their `Row`s, in the order given (the matmul's last).

        Args:
          configurations: `Configuration`s.
          in_turns: whether the rows form a group of paired rounds (False for one
            configuration timed alone).
          matmul_size: the side of the matrices of a matmul rate to time with them, or None.
        """
        group = None
        if in_turns:
            self._groups += 1
            group = self._groups
        opened = []
        try:
            for configuration in configurations:
                reason = configuration.mode and replication.unsupported(
                    configuration.mode, self._entry.recipe(self._batch_size))
                if reason:
                    log.warning('%s: not measured: %s', configuration.label, reason)
                    self.skipped.append((configuration.label, reason))
                else:
                    opened.append((configuration, self._open(configuration)))
            if matmul_size:
                matmul = Configuration(MATMUL, 'matmul rate (FLOP/s)', 1, 1, None, None)
                opened.append((matmul, self._open_matmul(matmul_size)))
            throughputs = benchmark.measure_in_turns(
                [session for _, session in opened], self._plan,
                'benchmark group %d (devices: %d)' % (group, configurations[0].devices) if group
                else 'benchmark, %s' % configurations[0].label)
        finally:
            for _, session in opened:
                session.close()
        rows = []
        for (configuration, _), throughput in zip(opened, throughputs):
            trains = configuration.step_fn is not None
            rows.append(Row(configuration.key, configuration.label, configuration.devices,
                            0 if configuration.key == MATMUL
                            else self._batch_size * configuration.devices,
                            self._parallel_devices(configuration.num_towers) if trains else 0,
                            throughput, group))
            log.info('%s, %d devices: %.1f per sec', configuration.label,
                     configuration.devices, throughput.examples_per_sec)
        return rows


def run(entry, batch_size, num_gpus, data_dir, plan, configure, matmul_size=4096, modes=MODES,
        deterministic=True):
    """Measures every configuration of the benchmark for one model.

    Args:
      entry: a `models.registry.Entry`.
      batch_size: examples per tower; the single device takes N times as many.
      num_gpus: the most devices, as `--num_gpus`.
      data_dir: where the model's data set is, or None for its usual place (see
        `Entry.real_input`).
      plan: a `towers.benchmarks.measure.Plan`.
      configure: number of devices -> `towers.DeviceSetup`, e.g. `towers.configure_devices`
        with the session's thread pools and parameter device bound.
      matmul_size: side of the square matrices of the matmul rate.
      modes: the training modes to measure at the most devices, (key, label, `towers.Mode`)
        as in `MODES`.
      deterministic: whether to measure (b) with op determinism too, at the most devices.

    Returns:
      `Results`.
    """
    runner = _Runner(entry, batch_size, data_dir, plan, configure)
    counts = device_counts(num_gpus)
    most = counts[-1]
    rows = []
    for n in counts:
        group = [
            Configuration('single_device', '(a) one device, global batch', n, 1,
                          runner.in_memory, towers_step),
            Configuration('towers', '(b) towers', n, n, runner.in_memory, towers_step),
            Configuration('mirrored', '(c) MirroredStrategy', n, n, runner.in_memory,
                          mirrored_step)]
        if n == most:
            group.append(Configuration('end_to_end', '(e) towers, real input', n, n,
                                       runner.real_input, towers_step))
            group += [Configuration(key, label, n, n, runner.in_memory,
                                    functools.partial(towers_step, mode=mode), mode)
                      for key, label, mode in modes]
            if deterministic:
                group.append(Configuration(DETERMINISTIC, '(%s) towers, op determinism'
                                           % chr(ord('f') + len(modes)), n, n,
                                           runner.in_memory, towers_step, deterministic=True))
        rows += runner.measure(group, matmul_size=matmul_size if n == most else None)
    input_only = runner.measure([Configuration('input_only', '(d) input pipeline alone', most,
                                               most, runner.real_input, None)], in_turns=False)
    towers_row = next(r for r in rows if r.key == 'towers' and r.devices == most)
    # (e)'s step on data in memory is (b), timed in the same rounds as the real input's.
    in_memory = towers_row._replace(key='in_memory_step', label='(e) towers, data in memory')
    after_mirrored = rows.index(towers_row) + 2
    rows[after_mirrored:after_mirrored] = input_only + [in_memory]
    matmul_rate = next(r for r in rows if r.key == MATMUL).throughput.examples_per_sec
    return Results(rows, matmul_rate, *train_flops_per_example(entry, batch_size),
                   runner.device_kind(), runner.skipped)
