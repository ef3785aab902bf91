"""Trains the CIFAR-10 tutorial's model on several towers, as `cifar10_multi_gpu_train.py` did.

    python scripts/train_cifar10_multi_gpu.py --num_gpus 4 --max_steps 1000

Each of `--num_gpus` towers (GPUs, or virtual CPU devices on a machine without one) trains on
its own batch of `--batch_size` images; their gradients are averaged and applied once per step.
The input is the real CIFAR-10 from `--data_dir` (extracted or downloaded as the tutorial does)
or, where there is none, a generated CIFAR-10-format data set, which the log says.

Unlike the original, an existing `--train_dir` is not deleted: training resumes from its newest
checkpoint. With `--job_name`, `--task_index`, `--ps_hosts` and `--worker_hosts` it is one task of
a cluster on TensorFlow's distributed runtime (see `scripts/launch_local_cluster.py`).
"""
import argparse

import towers
from models import cifar10, cifar10_input, cifar10_synthetic
from towers import cli, cluster
from towers.compat import tf


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--train_dir', default='/tmp/cifar10_train',
                        help='Directory where to write event logs and checkpoint.')
    parser.add_argument('--max_steps', type=cli.positive_int, default=1000000,
                        help='Number of batches to run.')
    parser.add_argument('--batch_size', type=cli.positive_int, default=cifar10.BATCH_SIZE,
                        help='Number of images to process in a batch (per tower).')
    parser.add_argument('--data_dir', default='/tmp/cifar10_data',
                        help='Path to the CIFAR-10 data directory.')
    parser.add_argument('--use_fp16', action='store_true',
                        help='Train the model using fp16.')
    cli.add_device_flags(parser)
    cluster.add_cluster_flags(parser)
    return parser.parse_args(argv)


def main(argv):
    args = _parse_args(argv)
    role = cluster.from_flags(args)
    if role.is_ps:
        return role.serve()
    setup = role.configure_devices(args.num_gpus, args.log_device_placement,
                                   intra_op_threads=args.intra_op_threads,
                                   inter_op_threads=args.inter_op_threads)
    batches_dir = cifar10_synthetic.locate_or_generate(args.data_dir)
    global_batch = args.batch_size * args.num_gpus
    with tf.Graph().as_default():
        with tf.device(setup.ps_device):
            images, labels = cifar10_input.distorted_inputs(batches_dir, global_batch,
                                                            use_fp16=args.use_fp16)
        graph = cifar10.build_train_graph(
            images, labels, setup.tower_devices, setup.ps_device, batch_size=args.batch_size,
            num_towers=args.num_gpus * role.replicas_to_aggregate,
            optimizer_wrapper=role.wrap_optimizer, once_per_step=role.once_per_step)
        result = towers.train(graph.train_op, graph.loss, graph.global_step, args.train_dir,
                              args.max_steps, examples_per_step=global_batch,
                              num_towers=args.num_gpus, config=setup.config,
                              summary_op=graph.summary_op, master=role.master,
                              is_chief=role.is_chief, hooks=role.hooks)
    if result.interrupted:
        return cli.EXIT_INTERRUPTED
    role.finish()
    return 0


if __name__ == '__main__':
    cli.run(main)
