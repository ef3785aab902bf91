"""The throughput benchmark: one registered model trained every way, side by side.

    results = suite.run(registry.get('cifar10'), batch_size=128, num_gpus=4, data_dir=None,
                        plan=benchmark.FULL, configure=towers.configure_devices)
    print(report.format_table(results.rows, results.matmul_rate,
                              results.train_flops_per_example))

For N in `device_counts(num_gpus)`, with `batch_size` examples per tower, it measures

  (a) `single_device`: one device training on the global batch of N towers;
  (b) `towers`: `towers.assemble` on N devices (virtual CPU devices when there is no GPU);
  (c) `mirrored`: `tf.distribute.MirroredStrategy` on the same devices, graph mode, the loss of
      each replica divided by N so that the summed update equals the towers' averaged one;

and, at the most devices,

  (d) `input_only`: the model's real input pipeline alone, on the global batch;
  (e) `end_to_end`: the towers' step on that input, beside `in_memory_step`, the same step on
      data already in memory.

(a)-(c) train on random data held in host memory, so that they time the step alone; every step
is the model's recipe (its optimizer, learning rate and once-per-step ops, such as the CIFAR-10
tutorial's moving averages of the weights), the variables on the parameter device for (a) and
(b). It also measures the machine's float32 matmul rate in the same process and counts the
model's FLOPs per training example from the convolutions and matmuls of its training graph.
"""
import collections
import logging
import os

import towers
from towers import benchmark
from towers.benchmarks.report import Row
from towers.compat import tf
from towers.mirrored import mirrored_train_op

log = logging.getLogger(__name__)

# Where every input lives, in memory or read from files: the host, as in training.
INPUT_DEVICE = '/cpu:0'

Results = collections.namedtuple(
    'Results', ['rows', 'matmul_rate', 'train_flops_per_example', 'forward_flops_per_example',
                'device_kind'])
Results.__doc__ = """Everything `run` measured.

Attributes:
  rows: list of `report.Row`, in the order measured.
  matmul_rate: the matmul rate of one device, FLOP/s.
  train_flops_per_example, forward_flops_per_example: as `train_flops_per_example` returns.
  device_kind: what the devices are, e.g. '4 GPUs' or 'virtual CPU devices sharing 2 cores'.
"""


def device_counts(num_gpus):
    """1, 2, 4, ... below `num_gpus`, and `num_gpus`."""
    counts = [1]
    while counts[-1] * 2 < num_gpus:
        counts.append(counts[-1] * 2)
    return counts + [num_gpus] if num_gpus > 1 else counts


def towers_step(entry, batch, setup, batch_size):
    """The op of one training step of `entry`'s recipe on the towers of `setup`.

    Args:
      entry: a `models.registry.Entry`.
      batch: the global batch, as `entry.synthetic_batch` or `entry.real_input` give it.
      setup: a `towers.DeviceSetup`; one tower per device.
      batch_size: examples per tower, for the recipe.
    """
    training = towers.assemble(entry.recipe(batch_size), lambda: batch, setup,
                               objectives=[entry.objective])
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
        step, _ = mirrored_train_op(recipe.tower_fn, batch, optimizer, global_step,
                                    setup.ps_device, recipe.objectives[entry.objective])
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


class _Runner:
    """Builds each configuration in a graph of its own and measures it."""

    def __init__(self, entry, batch_size, data_dir, plan, configure):
        self._entry = entry
        self._batch_size = batch_size
        self._data_dir = data_dir
        self._plan = plan
        self._configure = configure
        self._physical_gpus = len(tf.config.list_physical_devices('GPU'))
        self.rows = []

    def device_kind(self):
        if self._physical_gpus:
            return '%d GPUs' % self._physical_gpus
        return 'virtual CPU devices sharing %d cores' % os.cpu_count()

    def _parallel_devices(self, devices):
        return min(devices, self._physical_gpus) if self._physical_gpus else 1

    def in_memory(self, global_batch):
        with tf.device(INPUT_DEVICE):
            return self._entry.synthetic_batch(global_batch)

    def real_input(self, global_batch):
        with tf.device(INPUT_DEVICE):
            return self._entry.real_input(self._data_dir, global_batch)

    def measure(self, key, label, devices, num_towers, input_fn, step_fn):
        """Measures one configuration and adds its `Row`.

        Args:
          key, label: of the row.
          devices: the global batch is `devices` times the per-tower batch.
          num_towers: the devices it runs on; each takes an equal share of the global batch.
          input_fn: global batch -> the batch.
          step_fn: `towers_step` or `mirrored_step`, or None to time the input alone.
        """
        global_batch = self._batch_size * devices
        setup = self._configure(num_towers)
        with tf.Graph().as_default():
            batch = input_fn(global_batch)
            fetches = (step_fn(self._entry, batch, setup, global_batch // num_towers)
                       if step_fn else tf.group(*batch))
            throughput = benchmark.measure_throughput(fetches, global_batch, setup.config,
                                                      self._plan)
        log.info('%s, %d devices, batch %d: %.1f images/sec', label, devices, global_batch,
                 throughput.examples_per_sec)
        self.rows.append(Row(key, label, devices, global_batch,
                             self._parallel_devices(num_towers) if step_fn else 0, throughput))

    def matmul_flops(self, size):
        setup = self._configure(1)
        return benchmark.matmul_flops(setup.config, self._plan, size, setup.tower_devices[0])


def run(entry, batch_size, num_gpus, data_dir, plan, configure, matmul_size=4096):
    """Measures every configuration of the benchmark for one model.

    Args:
      entry: a `models.registry.Entry`.
      batch_size: examples per tower; the single device takes N times as many.
      num_gpus: the most devices, as `--num_gpus`.
      data_dir: where the model's data set is, or None for its usual place (see
        `Entry.real_input`).
      plan: a `towers.benchmark.Plan`.
      configure: number of devices -> `towers.DeviceSetup`, e.g. `towers.configure_devices`
        with the session's thread pools and parameter device bound.
      matmul_size: side of the square matrices of the matmul rate.

    Returns:
      `Results`.
    """
    runner = _Runner(entry, batch_size, data_dir, plan, configure)
    counts = device_counts(num_gpus)
    for n in counts:
        runner.measure('single_device', '(a) one device, global batch', n, 1, runner.in_memory,
                       towers_step)
        runner.measure('towers', '(b) towers', n, n, runner.in_memory, towers_step)
        runner.measure('mirrored', '(c) MirroredStrategy', n, n, runner.in_memory,
                       mirrored_step)
    most = counts[-1]
    runner.measure('input_only', '(d) input pipeline alone', most, most, runner.real_input,
                   None)
    runner.measure('in_memory_step', '(e) towers, data in memory', most, most,
                   runner.in_memory, towers_step)
    runner.measure('end_to_end', '(e) towers, real input', most, most, runner.real_input,
                   towers_step)
    return Results(runner.rows, runner.matmul_flops(matmul_size),
                   *train_flops_per_example(entry, batch_size), runner.device_kind())
