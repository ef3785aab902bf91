"""Measures every way of training the CIFAR-10 model side by side, in images/sec.

    python scripts/benchmark.py --quick --json out/benchmark.json
    python scripts/benchmark.py --num_gpus 8 --chart out/benchmark_8.png

With a per-tower batch of `--batch_size` (128) and device counts 1, 2, 4 (powers of two up to
`--num_gpus`, and `--num_gpus` itself), in one run:

  (a) `single_device`: one device training on the global batch of N towers;
  (b) `towers`: `build_towers` on N devices (virtual CPU devices when there is no GPU);
  (c) `mirrored`: `tf.distribute.MirroredStrategy` on the same devices, graph mode, the loss of
      each replica divided by N so that the summed update equals the towers' averaged one;
  (d) `input_only`: `cifar10_input.distorted_inputs` alone, the global batch of the most towers;
  (e) `end_to_end`: the towers' step on that input, beside `in_memory_step`, the same step on
      data already in memory.

(a)-(c) train on random images held in host memory, so that they time the step alone; every
step is the tutorial's: gradient descent plus the moving averages of the weights, the variables
on `--ps_device` for (a) and (b). The machine's float32 matmul rate is measured in the same
process, and the model's FLOPs per training example are counted from the convolutions and
matmuls of its training graph. Each figure is the median of repeated blocks of steps after a
warm-up; the table gives each one's ratio to (a) at the same global batch, and the targets of
the towers. The input is CIFAR-10 in `--data_dir`, or a
generated set in its format (throughput does not depend on the pixels); nothing is downloaded.
"""
import argparse
import json
import os

import towers
from models import cifar10
from models import cifar10_input
from models import cifar10_synthetic
from towers import benchmark
from towers import cli
from towers.compat import tf
from towers.files import write_file_atomically


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    cli.add_device_flags(parser)
    parser.set_defaults(num_gpus=4)
    parser.add_argument('--ps_device', default='/cpu:0',
                        help='Where the variables live and the towers\' gradients are averaged '
                             '(e.g. /gpu:0 on a multi-GPU machine).')
    parser.add_argument('--batch_size', type=cli.positive_int, default=cifar10.BATCH_SIZE,
                        help='Images per tower; the single device takes N times as many.')
    parser.add_argument('--data_dir', default='/tmp/cifar10_data',
                        help='Where CIFAR-10 (cifar-10-batches-bin) is; a generated set in its '
                             'format is made there when it is not.')
    parser.add_argument('--quick', action='store_true',
                        help='Shorter measurements (%d warm-up steps, %d blocks of %d steps), '
                             'for a first look.' % (benchmark.QUICK.warmup_steps,
                                                    benchmark.QUICK.repeats,
                                                    benchmark.QUICK.steps_per_repeat))
    parser.add_argument('--warmup_steps', type=int,
                        help='Untimed steps before each measurement (overrides --quick).')
    parser.add_argument('--steps', type=cli.positive_int,
                        help='Steps per timed block (overrides --quick).')
    parser.add_argument('--repeats', type=cli.positive_int,
                        help='Timed blocks per measurement, whose median is quoted '
                             '(overrides --quick).')
    parser.add_argument('--matmul_size', type=cli.positive_int, default=4096,
                        help='Side of the square float32 matrices of the matmul rate.')
    parser.add_argument('--json', help='Write the results to this JSON file.')
    parser.add_argument('--chart', default=os.path.join('out', 'benchmark.png'),
                        help='PNG chart of images/sec against devices.')
    args = parser.parse_args(argv)
    if args.warmup_steps is not None and args.warmup_steps < 0:
        parser.error('--warmup_steps must be >= 0')
    return args


def _plan(args):
    plan = benchmark.QUICK if args.quick else benchmark.FULL
    return benchmark.Plan(
        plan.warmup_steps if args.warmup_steps is None else args.warmup_steps,
        args.steps or plan.steps_per_repeat, args.repeats or plan.repeats)


def device_counts(num_gpus):
    """1, 2, 4, ... below `num_gpus`, and `num_gpus`."""
    counts = [1]
    while counts[-1] * 2 < num_gpus:
        counts.append(counts[-1] * 2)
    return counts + [num_gpus] if num_gpus > 1 else counts


# Where every input lives, in memory or read from files: the host, as in training.
INPUT_DEVICE = '/cpu:0'


def _in_memory_batch(global_batch):
    """Random images [global_batch, 24, 24, 3] and labels held in local variables."""
    size = cifar10.IMAGE_SIZE
    with tf.device(INPUT_DEVICE), tf.variable_scope('in_memory'):
        images = tf.get_local_variable(
            'images', [global_batch, size, size, 3], initializer=tf.random_normal_initializer())
        labels = tf.get_local_variable(
            'labels', [global_batch], dtype=tf.int32,
            initializer=tf.random_uniform_initializer(0, cifar10.NUM_CLASSES))
    return images, labels


def _towers_step(images, labels, setup, batch_size):
    return cifar10.build_train_graph(images, labels, setup.tower_devices, setup.ps_device,
                                     batch_size).train_op


def _mirrored_step(images, labels, setup, batch_size):
    """The tutorial's step (without the learning-rate decay: a constant 0.1, the same work)
    trained by MirroredStrategy on the towers' devices."""
    strategy = tf.distribute.MirroredStrategy(setup.tower_devices)
    with strategy.scope():
        global_step = tf.get_variable('global_step', [], initializer=tf.zeros_initializer(),
                                      trainable=False)
        optimizer = tf.train.GradientDescentOptimizer(cifar10.INITIAL_LEARNING_RATE)
        step, _ = benchmark.mirrored_train_op(cifar10.tower_fn, (images, labels), optimizer,
                                              global_step, setup.ps_device)
        averages = tf.train.ExponentialMovingAverage(cifar10.MOVING_AVERAGE_DECAY, global_step)
        return tf.group(step, averages.apply(tf.trainable_variables()))


class _Runner:
    """Builds each configuration in a graph of its own and measures it."""

    def __init__(self, args, batches_dir):
        self._args = args
        self._plan = _plan(args)
        self._batches_dir = batches_dir
        self._physical_gpus = len(tf.config.list_physical_devices('GPU'))
        self.rows = []

    def setup(self, devices):
        return towers.configure_devices(devices, self._args.log_device_placement,
                                        ps_device=self._args.ps_device,
                                        intra_op_threads=self._args.intra_op_threads,
                                        inter_op_threads=self._args.inter_op_threads)

    def device_kind(self):
        if self._physical_gpus:
            return '%d GPUs' % self._physical_gpus
        return 'virtual CPU devices sharing %d cores' % os.cpu_count()

    def _parallel_devices(self, devices):
        return min(devices, self._physical_gpus) if self._physical_gpus else 1

    def measure(self, key, label, devices, num_towers, input_fn, step_fn):
        """Measures one configuration and adds its `Row`.

        Args:
          key, label: of the row.
          devices: the global batch is `devices` times `--batch_size`.
          num_towers: the devices it runs on; each takes an equal share of the global batch.
          input_fn: global batch -> (images, labels).
          step_fn: (images, labels, DeviceSetup, per-tower batch) -> the op of one step, or
            None to time the input alone.
        """
        global_batch = self._args.batch_size * devices
        setup = self.setup(num_towers)
        with tf.Graph().as_default():
            batch = input_fn(global_batch)
            fetches = (step_fn(*batch, setup, global_batch // num_towers) if step_fn
                       else tf.group(*batch))
            throughput = benchmark.measure_throughput(fetches, global_batch, setup.config,
                                                      self._plan)
        row = benchmark.Row(key, label, devices, global_batch,
                            self._parallel_devices(num_towers) if step_fn else 0, throughput)
        print('%s, %d devices, batch %d: %.1f images/sec' % (label, devices, global_batch,
                                                            throughput.examples_per_sec),
              flush=True)
        self.rows.append(row)

    def real_input(self, global_batch):
        with tf.device(INPUT_DEVICE):
            return cifar10_input.distorted_inputs(self._batches_dir, global_batch)

    def matmul_flops(self):
        setup = self.setup(1)
        return benchmark.matmul_flops(setup.config, self._plan, self._args.matmul_size,
                                      setup.tower_devices[0])


def train_flops_per_example(batch_size):
    """FLOPs per example of the model's training step (the computation of the gradients of
    the variables) and of its forward pass alone (the loss)."""
    with tf.Graph().as_default():
        images = tf.zeros([batch_size, cifar10.IMAGE_SIZE, cifar10.IMAGE_SIZE, 3])
        labels = tf.zeros([batch_size], tf.int32)
        replicated = cifar10.build_train_graph(images, labels, ['/cpu:0'],
                                               batch_size=batch_size).replicated
        gradients = [grad for grad, _ in replicated.grads['total']]
        skip = cifar10.NORMALIZATION_SCOPES
        return (benchmark.count_flops(gradients, skip) / batch_size,
                benchmark.count_flops(replicated.tower_losses, skip) / batch_size)


def _make_parent_dir(path):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)


def main(argv):
    args = _parse_args(argv)
    batches_dir = cifar10_synthetic.locate_or_generate(args.data_dir, download=False)
    runner = _Runner(args, batches_dir)
    counts = device_counts(args.num_gpus)
    for n in counts:
        runner.measure('single_device', '(a) one device, global batch', n, 1,
                       _in_memory_batch, _towers_step)
        runner.measure('towers', '(b) towers', n, n, _in_memory_batch, _towers_step)
        runner.measure('mirrored', '(c) MirroredStrategy', n, n, _in_memory_batch,
                       _mirrored_step)
    most = counts[-1]
    runner.measure('input_only', '(d) input pipeline alone', most, most, runner.real_input,
                   None)
    runner.measure('in_memory_step', '(e) towers, data in memory', most, most,
                   _in_memory_batch, _towers_step)
    runner.measure('end_to_end', '(e) towers, real input', most, most, runner.real_input,
                   _towers_step)
    matmul_rate = runner.matmul_flops()
    train_flops, forward_flops = train_flops_per_example(args.batch_size)

    print()
    print(benchmark.format_table(runner.rows, matmul_rate, train_flops))
    print('(FLOPs: the convolutions and matmuls of the forward and backward passes; the forward '
          'pass alone is %.1f MFLOP)' % (forward_flops / 1e6))
    print()
    print(benchmark.format_targets(benchmark.targets(runner.rows, matmul_rate, train_flops)))
    if args.chart:
        _make_parent_dir(args.chart)
        benchmark.save_chart(runner.rows, args.chart, 'CIFAR-10 training, %d images per tower\n'
                             'on %s' % (args.batch_size, runner.device_kind()))
        print('chart: %s' % args.chart)
    if args.json:
        _make_parent_dir(args.json)
        results = benchmark.results_json(runner.rows, matmul_rate, train_flops)

        def write(temporary):
            with open(temporary, 'w') as f:
                json.dump(results, f, indent=2, sort_keys=True)

        write_file_atomically(args.json, write)
        print('results: %s' % args.json)


if __name__ == '__main__':
    cli.run(main)
