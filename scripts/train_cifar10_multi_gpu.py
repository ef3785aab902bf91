"""Trains the CIFAR-10 tutorial's model on several towers, as `cifar10_multi_gpu_train.py` did.

    python scripts/train_cifar10_multi_gpu.py --num_gpus 4 --max_steps 1000

Each of `--num_gpus` towers (GPUs, or virtual CPU devices on a machine without one) trains on
its own batch of `--batch_size` images; their gradients are averaged and applied once per step.
The input is the real CIFAR-10 from `--data_dir` (extracted or downloaded as the tutorial does)
or, where there is none, a generated CIFAR-10-format data set, which the log says.
`--variable_update replicated`, `--xla` and `--mixed_precision` train the same model in
tf_cnn_benchmarks' other modes (`towers.replication.registry`); `--use_fp16` keeps the tutorial's meaning:
float16 weights, no master copy, no loss scaling.

Unlike the original, an existing `--train_dir` is not deleted: training resumes from its newest
checkpoint that reads whole. Checkpoints are written every `--save_checkpoint_secs` (600) or
`--save_checkpoint_steps`, and on SIGTERM or Ctrl-C after the current step. With `--job_name`,
`--task_index`, `--ps_hosts` and `--worker_hosts` it is one task of a cluster on TensorFlow's
distributed runtime (see `scripts/launch_local_cluster.py`).
"""
import towers
from models import cifar10
from towers import cli, cluster, flags


def _parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--train_dir', type=flags.output_dir, default='/tmp/cifar10_train',
                        help='Directory where to write event logs and checkpoint.')
    parser.add_argument('--max_steps', type=flags.positive_int, default=1000000,
                        help='Number of batches to run.')
    parser.add_argument('--batch_size', type=flags.positive_int, default=cifar10.BATCH_SIZE,
                        help='Number of images to process in a batch (per tower).')
    parser.add_argument('--data_dir', type=flags.data_dir, default='/tmp/cifar10_data',
                        help='Path to the CIFAR-10 data directory.')
    parser.add_boolean('use_fp16', False, 'Train the model using fp16.')
    flags.add_training_flags(parser, use_fp16=False)
    return parser.parse_args(argv)


def main(argv):
    args = _parse_args(argv)
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.cifar10.recipe import Cifar10Recipe
    from models.datasets.cifar10 import reader as cifar10_input, synthetic as cifar10_synthetic

    global_batch = args.batch_size * args.num_gpus

    def work(role, setup):
        batches_dir = cifar10_synthetic.locate_or_generate(args.data_dir)
        return towers.fit(
            Cifar10Recipe(args.batch_size),
            lambda: cifar10_input.distorted_inputs(batches_dir, global_batch, args.use_fp16),
            setup, role, args.train_dir, args.max_steps, examples_per_step=global_batch,
            validation_input=lambda: cifar10_input.validation_input(
                batches_dir, args.batch_size, args.use_fp16),
            **flags.fit_options(args))

    return cluster.run_task(args, work)


if __name__ == '__main__':
    cli.run(main)
