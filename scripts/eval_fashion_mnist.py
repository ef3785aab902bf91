"""Evaluates a Fashion-MNIST checkpoint on the test split: accuracy and a confusion matrix.

    python scripts/eval_fashion_mnist.py --train_dir /tmp/fashion_mnist_train \
        --out_dir /tmp/fashion_mnist_eval

Restores the newest checkpoint of --train_dir (or --checkpoint_path) into the Keras model of
`scripts/train_fashion_mnist.py`, classifies the 10000 (generated set: 1000) test images of
--data_dir on one device and writes to --out_dir: results.json (`accuracy`, a fraction; each
class's accuracy; the confusion matrix, row = true class) and confusion_matrix.png.
"""
import os

from models.datasets.fashion_mnist import reader, synthetic
from models.fashion_mnist import model as fashion_mnist
from towers import TowersError, cli, configure_devices, evaluation, flags
from towers.compat import tf
from towers.files import write_json


def _parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--train_dir', default='/tmp/fashion_mnist_train',
                        help='Where training wrote its checkpoints; the newest is evaluated.')
    parser.add_argument('--checkpoint_path', help='A checkpoint prefix to evaluate instead.')
    parser.add_argument('--data_dir', default=synthetic.DEFAULT_DATA_DIR,
                        help='Where the Fashion-MNIST IDX files are; a generated set is '
                             'written there when they are not.')
    parser.add_argument('--out_dir', default='/tmp/fashion_mnist_eval',
                        help='Where results.json and confusion_matrix.png go.')
    parser.add_argument('--batch_size', type=flags.positive_int, default=1000,
                        help='Images per run; results do not depend on it.')
    return parser.parse_args(argv)


def _probabilities(images):
    model = fashion_mnist.build_model()
    return {'probabilities': model(reader.scale_images(images), training=False)}


def main(argv):
    args = _parse_args(argv)
    checkpoint = args.checkpoint_path or tf.train.latest_checkpoint(args.train_dir)
    if not checkpoint:
        raise TowersError('no checkpoint in --train_dir %s; train first with '
                          'scripts/train_fashion_mnist.py --train_dir %s'
                          % (args.train_dir, args.train_dir))
    test = reader.load_split(synthetic.locate_or_generate(args.data_dir), 'test')
    probabilities = evaluation.restore_and_predict(
        _probabilities, checkpoint, test.images, args.batch_size,
        configure_devices(1).config)['probabilities']
    results = evaluation.classification_metrics(test.labels, probabilities.argmax(axis=1),
                                                reader.CLASS_NAMES)
    results.update(checkpoint=os.path.abspath(checkpoint), image_file=test.image_file,
                   label_file=test.label_file)
    os.makedirs(args.out_dir, exist_ok=True)
    evaluation.write_confusion_matrix(
        os.path.join(args.out_dir, 'confusion_matrix.png'), results['confusion_matrix'],
        reader.CLASS_NAMES, 'Fashion-MNIST test split, %s: accuracy %.3f'
        % (os.path.basename(checkpoint), results['accuracy']))
    write_json(os.path.join(args.out_dir, 'results.json'), results)
    print('%s: accuracy %.4f on %d test images' % (os.path.basename(checkpoint),
                                                   results['accuracy'], len(test.labels)))
    return 0


if __name__ == '__main__':
    cli.run(main)
