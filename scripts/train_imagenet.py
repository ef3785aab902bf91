"""Trains tf-slim's ResNet v1 on ImageNet on several towers, with the reference's recipe.

    python scripts/train_imagenet.py --num_gpus 8 --data_dir /data/imagenet
    python scripts/train_imagenet.py --num_gpus 2 --image_size 64 --batch_size 16 --epochs 10

SGD with momentum 0.9, the learning rate 0.05 x (global batch / 128) warmed up over the first
epoch and decayed by a cosine over the rest, softmax cross entropy with label smoothing 0.1 and
1e-4 x the kernels' L2 loss; the reference's augmentation (see `models.imagenet`). The input is
the TFRecord shards in `--data_dir`, or with `--list_file` that list of the JPEGs under
`--data_dir`; without shards there, a generated ImageNet-format set, which the log says.
Checkpoints carry tf-slim's variable names; an existing `--train_dir` is resumed. With
`--eval_every_steps K`, top-1 and top-5 of the validation split's centre crops are logged every
K steps. With the cluster flags it is one task of a cluster (see
`scripts/launch_local_cluster.py`).
"""
import logging

import towers
from models import imagenet
from models.datasets import imagenet as data
from towers import cli, cluster, flags

log = logging.getLogger('train_imagenet')


def _parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--data_dir', type=flags.data_dir, default=data.DEFAULT_DATA_DIR,
                        help='ImageNet as TFRecord shards (train-00000-of-01024, ...), or with '
                             '--list_file the folder its paths are relative to.')
    parser.add_argument('--list_file',
                        help='A list file of `relative/path.JPEG label` lines (labels 0..999) '
                             'to read instead of TFRecord shards.')
    parser.add_argument('--validation_list_file',
                        help='With --list_file and --eval_every_steps: the validation list.')
    parser.add_argument('--train_dir', type=flags.output_dir, default='/tmp/imagenet_train',
                        help='Directory where to write event logs and checkpoints.')
    parser.add_argument('--resnet_depth', type=int, choices=imagenet.DEPTHS, default=50,
                        help='resnet_v1_50, resnet_v1_101 or resnet_v1_152.')
    parser.add_argument('--image_size', type=flags.positive_int, default=224,
                        help='Side of the square training crops (the recipe\'s other pixel '
                             'sizes scale with it).')
    parser.add_argument('--batch_size', type=flags.positive_int, default=imagenet.BASE_BATCH,
                        help='Number of images to process in a batch (per tower).')
    parser.add_argument('--max_steps', type=flags.positive_int,
                        help='Number of batches to run (default: all --epochs).')
    parser.add_argument('--epochs', type=flags.positive_float, default=imagenet.EPOCHS,
                        help='Length of the schedule, in epochs of the training split.')
    parser.add_argument('--warmup_epochs', type=flags.non_negative_float,
                        default=imagenet.WARMUP_EPOCHS,
                        help='Epochs of the linear warmup from 0.')
    parser.add_argument('--learning_rate', type=flags.positive_float,
                        help='Peak learning rate (default: %g x global batch / %d).'
                             % (imagenet.BASE_LEARNING_RATE, imagenet.BASE_BATCH))
    parser.add_argument('--cosine_alpha', type=flags.non_negative_float,
                        default=imagenet.COSINE_ALPHA,
                        help='Final learning rate as a fraction of the peak.')
    parser.add_argument('--label_smoothing', type=flags.non_negative_float,
                        default=imagenet.LABEL_SMOOTHING, help='Label smoothing of the loss.')
    parser.add_argument('--weight_decay', type=flags.non_negative_float,
                        default=imagenet.WEIGHT_DECAY,
                        help='Factor of the L2 loss of the kernels.')
    parser.add_argument('--momentum', type=flags.non_negative_float,
                        default=imagenet.MOMENTUM, help='Momentum of the SGD.')
    parser.add_boolean('nesterov', False, 'Use Nesterov momentum.')
    flags.add_training_flags(parser)
    return parser.parse_args(argv)


def main(argv):
    args = _parse_args(argv)
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.datasets.imagenet import reader, sources, synthetic
    from models.imagenet import model, recipe as resnet_recipe

    net = model.ResNet(args.resnet_depth, args.label_smoothing, args.weight_decay)

    def work(role, setup):
        source = synthetic.open_split(args.data_dir, sources.TRAIN, args.list_file)
        recipe = resnet_recipe.ResNetRecipe(
            net, args.batch_size, source.num_examples, args.epochs, args.warmup_epochs,
            args.cosine_alpha, args.learning_rate, args.momentum, args.nesterov)
        schedule = recipe.schedule(len(setup.tower_devices) * role.replicas_to_aggregate)
        log.info('%s: peak learning rate %g, warmup %d steps, cosine to step %d',
                 net.scope, schedule.peak, schedule.warmup_steps, schedule.total_steps)
        global_batch = args.batch_size * len(setup.tower_devices)
        with reader.naming_bad_input(source):
            return towers.fit(
                recipe, lambda: reader.training_input(source, global_batch, args.image_size),
                setup, role, args.train_dir, args.max_steps or schedule.total_steps,
                examples_per_step=global_batch,
                validation_input=lambda: reader.validation_input(
                    synthetic.open_split(args.data_dir, sources.VALIDATION,
                                         args.validation_list_file),
                    args.batch_size, args.image_size),
                **flags.fit_options(args))

    return cluster.run_task(args, work)


if __name__ == '__main__':
    cli.run(main)
