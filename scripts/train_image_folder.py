"""Trains a classifier of a folder of JPEGs (one subfolder per class) on several towers.

    python scripts/train_image_folder.py --num_gpus 2 --data_dir OCT2017 \
        --train_dir /tmp/image_folder_train

The model is Keras' VGG16 without its top, frozen but for its last four layers, under a new
softmax classifier (see `models.image_folder`), trained with Adam on `--image_size` squares of
the images of `--data_dir`/train, labelled by their folders. VGG16 starts from random values
unless `--weights` names a Keras HDF5 file of its weights (e.g. ImageNet's). Without --data_dir
a generated OCT2017-format set is used (written on first use). Each tower is compiled with XLA
(measured faster on CPUs; `--noxla` turns it off). `--train_dir` records the classes
and image size for resuming and for `scripts/eval_image_folder.py`. With `--job_name`,
`--task_index`, `--ps_hosts` and `--worker_hosts` it is one task of a cluster.
"""
import logging
import math

import towers
from models import image_folder
from models.datasets import image_folder as data
from towers import cli, cluster, flags

log = logging.getLogger('train_image_folder')

DEFAULT_EPOCHS = 5


def parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n')[0])
    flags.add_training_flags(parser, mode=image_folder.DEFAULT_MODE)
    parser.add_argument('--data_dir', type=flags.input_dir, default=None,
                        help='The folder holding train/<class>/*.jpeg (and test/), e.g. '
                             'OCT2017. Default: the generated set in %s, written if missing.'
                             % data.DEFAULT_DATA_DIR)
    parser.add_argument('--train_dir', type=flags.output_dir, default='/tmp/image_folder_train',
                        help='Checkpoints, event logs and model.json; training resumes from '
                             'the newest checkpoint here.')
    parser.add_argument('--labels', default=None,
                        help='Comma-separated class names in label order, e.g. '
                             'CNV,DME,DRUSEN,NORMAL (default: the sorted folder names); '
                             'folders not named are left out.')
    parser.add_argument('--weights', default=None,
                        help='Keras HDF5 weights of VGG16, matched by layer name (e.g. '
                             'vgg16_weights_tf_dim_ordering_tf_kernels_notop.h5). Default: '
                             'random initialisation.')
    parser.add_argument('--image_size', type=flags.positive_int,
                        default=image_folder.IMAGE_SIZE,
                        help='Side of the squares the images are resized to (at least %d).'
                             % image_folder.MIN_IMAGE_SIZE)
    parser.add_argument('--batch_size', type=flags.positive_int, default=64,
                        help='Images per tower and step.')
    parser.add_argument('--learning_rate', type=flags.positive_float,
                        default=image_folder.LEARNING_RATE,
                        help='Adam\'s learning rate (the reference: Keras\' default, 0.001).')
    length = parser.add_mutually_exclusive_group()
    length.add_argument('--epochs', type=flags.positive_float, default=DEFAULT_EPOCHS,
                        help='Train until the global step of this many passes over the '
                             'training images.')
    length.add_argument('--max_steps', type=flags.positive_int, default=None,
                        help='Train until this global step (instead of --epochs).')
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.datasets.image_folder import reader, synthetic
    from models.image_folder import model as vgg16_transfer
    from models.image_folder.recipe import Vgg16TransferRecipe

    labels = None if args.labels is None else reader.parse_labels(args.labels)
    global_batch = args.batch_size * args.num_gpus

    def work(role, setup):
        data_dir = synthetic.locate_or_generate(args.data_dir)
        split = reader.list_split(data_dir, 'train', labels)
        network = vgg16_transfer.Vgg16Transfer(len(split.classes), args.image_size,
                                               args.weights)
        vgg16_transfer.record_spec(args.train_dir, split.classes, args.image_size)
        max_steps = args.max_steps or math.ceil(args.epochs * len(split.paths) / global_batch)
        log.info('training %s on %dx%d images until global step %d (%d images a step)',
                 ', '.join(split.classes), args.image_size, args.image_size, max_steps,
                 global_batch)
        with reader.naming_bad_input(split.paths):
            return towers.fit(
                Vgg16TransferRecipe(network, args.learning_rate),
                lambda: reader.training_input(split, args.image_size, global_batch),
                setup, role, args.train_dir, max_steps, global_batch,
                validation_input=lambda: reader.validation_input(
                    reader.list_split(data_dir, 'test', split.classes), args.image_size,
                    args.batch_size),
                **flags.fit_options(args))

    return cluster.run_task(args, work)


if __name__ == '__main__':
    cli.run(main)
