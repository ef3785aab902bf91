"""Evaluates a Fashion-MNIST checkpoint on the test split: accuracy and a confusion matrix.

    python scripts/eval_fashion_mnist.py --train_dir /tmp/fashion_mnist_train \
        --out_dir /tmp/fashion_mnist_eval

Restores the newest checkpoint of --train_dir (or --checkpoint_path) into the Keras model of
`scripts/train_fashion_mnist.py`, classifies the 10000 (generated set: 1000) test images of
--data_dir on one device and writes to --out_dir: results.json (`accuracy`, a fraction; each
class's accuracy; the confusion matrix, row = true class) and confusion_matrix.png, and the
accuracies and the matrix's image to TensorBoard there, at the checkpoint's step.
"""
import os

import towers
from models.datasets import fashion_mnist as data
from towers import cli, evaluation, flags


def _parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n\n')[0])
    evaluation.add_eval_flags(parser, 'scripts/train_fashion_mnist.py',
                              '/tmp/fashion_mnist_train', '/tmp/fashion_mnist_eval',
                              batch_size=1000)
    parser.add_argument('--data_dir', type=flags.data_dir, default=data.DEFAULT_DATA_DIR,
                        help='Where the Fashion-MNIST IDX files are; a generated set is '
                             'written there when they are not.')
    return parser.parse_args(argv)


def _probabilities(images):
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.datasets.fashion_mnist import reader
    from models.fashion_mnist import model as fashion_mnist

    model = fashion_mnist.build_model()
    return {'probabilities': model(reader.scale_images(images), training=False)}


def main(argv):
    args = _parse_args(argv)
    from models.datasets.fashion_mnist import reader, synthetic
    from towers import reports

    checkpoint = evaluation.checkpoint_from_flags(args)
    test = reader.evaluation_input(synthetic.locate_or_generate(args.data_dir))
    probabilities = evaluation.predict(
        _probabilities, checkpoint, test.images, args.batch_size,
        towers.configure_devices(1).config)['probabilities']
    results = evaluation.classification_metrics(test.labels, probabilities.argmax(axis=1),
                                                reader.CLASS_NAMES)
    results.update(checkpoint=os.path.abspath(checkpoint), image_file=test.image_file,
                   label_file=test.label_file)
    reports.write_confusion_matrix(
        os.path.join(args.out_dir, 'confusion_matrix.png'), results['confusion_matrix'],
        reader.CLASS_NAMES, 'Fashion-MNIST test split, %s: accuracy %.3f'
        % (os.path.basename(checkpoint), results['accuracy']))
    reports.write_results(os.path.join(args.out_dir, 'results.json'), results)
    evaluation.write_events(checkpoint, results, images={
        'confusion_matrix': os.path.join(args.out_dir, 'confusion_matrix.png')})
    print('%s: accuracy %.4f on %d test images' % (os.path.basename(checkpoint),
                                                   results['accuracy'], len(test.labels)))
    return 0


if __name__ == '__main__':
    cli.run(main)
