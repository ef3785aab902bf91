"""Trains the Keras Fashion-MNIST model of Zalando Research's multi-GPU example on towers.

    python scripts/train_fashion_mnist.py --num_gpus 2 --epochs 5

One Keras model (three convolutions, two dense layers; Adam, learning rate 0.001) is called in
each of `--num_gpus` towers (GPUs, or virtual CPU devices without one) on its own batch of
`--batch_size` images; the towers' gradients are averaged and applied once per step. The
input is the real Fashion-MNIST IDX files in `--data_dir` (`.gz` or not) or, where there are
none, a generated set in the same format, which the log says. `--epochs` passes over the
training set make `--max_steps` unless that is given. The step timing is logged at the end and
written to `--train_dir/timing.json`; an existing `--train_dir` is resumed.
"""
import towers
from models import fashion_mnist
from models.datasets import fashion_mnist as data
from towers import cli, cluster, flags


def _parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--data_dir', type=flags.data_dir, default=data.DEFAULT_DATA_DIR,
                        help='Where the Fashion-MNIST IDX files are; a generated set is '
                             'written there when they are not.')
    parser.add_argument('--train_dir', type=flags.output_dir, default='/tmp/fashion_mnist_train',
                        help='Directory where to write event logs, checkpoints and timing.')
    parser.add_argument('--epochs', type=flags.positive_int, default=5,
                        help='Passes over the training set, when --max_steps is not given.')
    parser.add_argument('--max_steps', type=flags.positive_int,
                        help='Number of batches to run (default: from --epochs).')
    parser.add_argument('--batch_size', type=flags.positive_int, default=fashion_mnist.BATCH_SIZE,
                        help='Number of images to process in a batch (per tower).')
    flags.add_training_flags(parser)
    return parser.parse_args(argv)


def main(argv):
    args = _parse_args(argv)
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.datasets.fashion_mnist import reader, synthetic
    from models.fashion_mnist.recipe import FashionMnistRecipe

    global_batch = args.batch_size * args.num_gpus

    def work(role, setup):
        data_dir = synthetic.locate_or_generate(args.data_dir)
        split = reader.load_split(data_dir, 'train')
        max_steps = args.max_steps or reader.steps_for_epochs(len(split.labels), args.epochs,
                                                              global_batch)
        return towers.fit(
            FashionMnistRecipe(), lambda: reader.training_input(split, global_batch), setup,
            role, args.train_dir, max_steps, examples_per_step=global_batch,
            validation_input=lambda: reader.validation_input(
                reader.evaluation_input(data_dir), args.batch_size),
            **flags.fit_options(args))

    return cluster.run_task(args, work)


if __name__ == '__main__':
    cli.run(main)
