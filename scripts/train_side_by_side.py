"""Trains several segmentation models side by side on one set of towers, one step for all.

    python scripts/train_side_by_side.py --models unet,linknet,fpn --num_gpus 2 \
        --image_size 128 --batch_size 4 --epochs 10 --train_dir /tmp/side_by_side_train

Every model (a ResNet-34 encoder with the Unet, Linknet or FPN decoder) is built on every
tower from the same input shards, with its own Adam optimizer, binary cross entropy and batch
norm, and one `session.run` steps them all (see `towers.training.side_by_side`). The progress line
shows each model's loss; `--train_dir` holds one checkpoint of all of them, and
`--train_dir/<model>` each model's TensorBoard run, so that `tensorboard --logdir
<train_dir>` overlays their curves. With `--eval_every_steps K` every model's IoU on the test
split is logged every K steps (and after the last) and written to its run. Without --data_dir
a generated set is used (written on first use). Side-by-side training runs in one process (no
cluster flags).
"""
import logging
import math

import towers
from models.side_by_side import LEARNING_RATE, architectures, data_flags
from towers import cli, flags
from towers.training import preemption

log = logging.getLogger('train_side_by_side')


def parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n')[0])
    parser.add_argument('--models', type=architectures.parse_list,
                        default=['unet', 'linknet', 'fpn'],
                        help='Comma-separated models to train side by side, among %s '
                             '(default unet,linknet,fpn).' % ', '.join(architectures.names()))
    flags.add_training_flags(parser, cluster=False, save_checkpoint_steps=500)
    data_flags.add_data_flags(parser, 'Side of the square input, a multiple of 32 (default 128).')
    parser.add_argument('--train_dir', type=flags.output_dir, default='/tmp/side_by_side_train',
                        help='Checkpoints, and one TensorBoard run per model; training '
                             'resumes from the newest checkpoint here.')
    parser.add_argument('--batch_size', type=flags.positive_int, default=32,
                        help='Images per tower and step (the reference: 32 on one GPU).')
    length = parser.add_mutually_exclusive_group()
    length.add_argument('--epochs', type=flags.positive_float, default=100,
                        help='Length in passes over the training images (default 100).')
    length.add_argument('--max_steps', type=flags.positive_int, default=None,
                        help='Length in steps, instead of --epochs.')
    parser.add_argument('--learning_rate', type=flags.positive_float,
                        default=LEARNING_RATE, help='Adam\'s, for every model.')
    parser.add_argument('--log_every_n_steps', type=flags.positive_int, default=10)
    parser.add_argument('--save_summaries_steps', type=flags.positive_int, default=10)
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.side_by_side import inputs, recipe
    from towers.training import side_by_side

    data_dir, data = inputs.load_flagged_split(args, 'train')
    global_batch = args.batch_size * args.num_gpus
    max_steps = args.max_steps or int(math.ceil(args.epochs * len(data.names) / global_batch))
    log.info('training %s side by side on %d images of %s at %dx%d, %d steps of %d images',
             ', '.join(args.models), len(data.names), data_dir, args.image_size,
             args.image_size, max_steps, global_batch)
    setup = towers.configure_devices(args.num_gpus, args.log_device_placement,
                                     intra_op_threads=args.intra_op_threads,
                                     inter_op_threads=args.inter_op_threads)
    # SIGTERM or SIGINT ends the step, writes a checkpoint and exits 143 or 130.
    with preemption.stop_signals() as stop:
        side_by_side.fit(
            recipe.side_by_side(args.models, args.learning_rate),
            lambda: inputs.training_input(data, global_batch, flags.input_seed(args)), setup,
            args.train_dir, max_steps, global_batch, log_every_n_steps=args.log_every_n_steps,
            save_summaries_steps=args.save_summaries_steps,
            validation_input=lambda: inputs.validation_input(
                inputs.load_flagged_split(args, 'test')[1], args.batch_size),
            **flags.fit_options(args))
    return stop.exit_status if stop.requested else 0


if __name__ == '__main__':
    cli.run(main)
