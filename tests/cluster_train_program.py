"""A small training script for the cluster tests, wired to `towers.cluster` as the real ones are.

    python tests/cluster_train_program.py --train_dir DIR --max_steps 20 --num_gpus 4
    python tests/cluster_train_program.py ... --num_gpus 2 --job_name worker --task_index 1 \
        --ps_hosts localhost:2222 --worker_hosts localhost:2223,localhost:2224

The model is a tiny conv net; the global batch of step s is a fixed function of s (rows of a
seeded data set), and worker w of W trains on the w-th of W equal slices of it. A cluster of W
workers with N towers each therefore sees, step by step, the same tower shards as one process
with W*N towers, and their variables must agree.
"""
import argparse

import numpy as np

import towers
from towers import cli, cluster
from towers.compat import tf

IMAGE_SIZE = 6
CHANNELS = 2
NUM_CLASSES = 3
NUM_BATCHES = 5


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--train_dir', required=True)
    parser.add_argument('--max_steps', type=cli.positive_int, default=20)
    parser.add_argument('--batch_size', type=cli.positive_int, default=2,
                        help='Examples per tower.')
    parser.add_argument('--global_towers', type=cli.positive_int, default=4,
                        help='Towers of one update over the whole cluster: fixes the global '
                             'batch, which every run of a comparison must share.')
    parser.add_argument('--save_checkpoint_steps', type=cli.positive_int, default=1000)
    cli.add_device_flags(parser)
    cluster.add_cluster_flags(parser)
    return parser.parse_args(argv)


def global_batch(step, size):
    """The global batch of `step`: images [size, 6, 6, 2] float32, labels [size] int32."""
    rng = np.random.RandomState(0)
    images = rng.normal(size=[NUM_BATCHES, size, IMAGE_SIZE, IMAGE_SIZE, CHANNELS])
    labels = rng.randint(NUM_CLASSES, size=[NUM_BATCHES, size])
    index = tf.cast(step, tf.int32) % NUM_BATCHES
    return (tf.gather(tf.constant(images, tf.float32), index),
            tf.gather(tf.constant(labels, tf.int32), index))


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
    role = cluster.from_flags(args)
    if role.is_ps:
        return role.serve()
    setup = role.configure_devices(args.num_gpus, args.log_device_placement)
    size = args.batch_size * args.global_towers
    with tf.Graph().as_default():
        with tf.device(setup.ps_device):
            global_step = tf.train.get_or_create_global_step()
            images, labels = global_batch(global_step, size)
            rows = size // role.num_workers
            begin = role.task_index * rows
            batch = (images[begin:begin + rows], labels[begin:begin + rows])
            optimizer = role.wrap_optimizer(tf.train.MomentumOptimizer(0.1, 0.9))
        replicated = towers.build_towers(tower_fn, batch, setup.tower_devices, optimizer,
                                         ps_device=setup.ps_device)
        train_op = replicated.train_op('total', global_step)
        result = towers.train(train_op, replicated.tower_losses[-1], global_step,
                              args.train_dir, args.max_steps, examples_per_step=size,
                              num_towers=args.num_gpus, config=setup.config,
                              log_every_n_steps=1,
                              save_checkpoint_steps=args.save_checkpoint_steps,
                              master=role.master, is_chief=role.is_chief, hooks=role.hooks)
    if result.interrupted:
        return cli.EXIT_INTERRUPTED
    role.finish()
    return 0


if __name__ == '__main__':
    cli.run(main)
