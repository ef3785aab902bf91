"""A small training script for the cluster tests, wired to `towers.cluster` as the real ones are.

    python tests/cluster_train_program.py --train_dir DIR --max_steps 20 --num_gpus 4
    python tests/cluster_train_program.py ... --num_gpus 2 --job_name worker --task_index 1 \
        --ps_hosts localhost:2222 --worker_hosts localhost:2223,localhost:2224

The model is a tiny conv net; the global batch of step s is a fixed function of s (rows of a
seeded data set), and worker w of W trains on the w-th of W equal slices of it. A cluster of W
workers with N towers each therefore sees, step by step, the same tower shards as one process
with W*N towers, and their variables must agree.
"""
import faulthandler
import signal

import numpy as np

import towers
from towers import cli, flags
from towers import cluster
from towers.compat import tf

IMAGE_SIZE = 6
CHANNELS = 2
NUM_CLASSES = 3
NUM_BATCHES = 5


def _parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--train_dir', type=flags.output_dir, required=True)
    parser.add_argument('--max_steps', type=flags.positive_int, default=20)
    parser.add_argument('--batch_size', type=flags.positive_int, default=2,
                        help='Examples per tower.')
    parser.add_argument('--global_towers', type=flags.positive_int, default=4,
                        help='Towers of one update over the whole cluster: fixes the global '
                             'batch, which every run of a comparison must share.')
    flags.add_training_flags(parser)
    return parser.parse_args(argv)


def global_batch(step, size):
    """The global batch of `step`: images [size, 6, 6, 2] float32, labels [size] int32."""
    rng = np.random.RandomState(0)
    images = rng.normal(size=[NUM_BATCHES, size, IMAGE_SIZE, IMAGE_SIZE, CHANNELS])
    labels = rng.randint(NUM_CLASSES, size=[NUM_BATCHES, size])
    index = tf.cast(step, tf.int32) % NUM_BATCHES
    return (tf.gather(tf.constant(images, tf.float32), index),
            tf.gather(tf.constant(labels, tf.int32), index))


class TinyRecipe(towers.Recipe):
    """A tiny conv net trained with momentum."""

    def learning_rate(self, global_step, num_towers):
        return 0.1

    def optimizer(self, learning_rate):
        return tf.train.MomentumOptimizer(learning_rate, 0.9)

    @staticmethod
    def tower_fn(batch):
        images, labels = batch
        kernel = tf.get_variable('conv/weights', [3, 3, CHANNELS, 4],
                                 initializer=tf.truncated_normal_initializer(stddev=0.3, seed=1))
        conv = tf.nn.relu(tf.nn.conv2d(images, kernel, [1, 1, 1, 1], 'SAME'))
        flat = tf.reshape(conv, [-1, IMAGE_SIZE * IMAGE_SIZE * 4])
        weights = tf.get_variable('logits/weights', [IMAGE_SIZE * IMAGE_SIZE * 4, NUM_CLASSES],
                                  initializer=tf.truncated_normal_initializer(stddev=0.1, seed=2))
        biases = tf.get_variable('logits/biases', [NUM_CLASSES],
                                 initializer=tf.zeros_initializer())
        logits = tf.matmul(flat, weights) + biases
        tf.losses.sparse_softmax_cross_entropy(labels, logits)
        return {'logits': logits}


def main(argv):
    args = _parse_args(argv)
    size = args.batch_size * args.global_towers

    def work(role, setup):
        def input_fn():
            images, labels = global_batch(tf.train.get_global_step(), size)
            rows = size // role.num_workers
            begin = role.task_index * rows
            return images[begin:begin + rows], labels[begin:begin + rows]

        return towers.fit(TinyRecipe(), input_fn, setup, role, args.train_dir, args.max_steps,
                          examples_per_step=size, log_every_n_steps=1,
                          **flags.checkpoint_options(args))

    return cluster.run_task(args, work)


if __name__ == '__main__':
    faulthandler.register(signal.SIGUSR1, all_threads=True)   # for a test's report of a hang
    cli.run(main)
