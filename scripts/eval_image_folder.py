"""Evaluates a folder-of-JPEGs classifier: accuracy overall and per class on the test images.

    python scripts/eval_image_folder.py --train_dir /tmp/image_folder_train --data_dir OCT2017 \
        --out_dir /tmp/image_folder_eval

Restores the newest checkpoint of --train_dir (or --checkpoint_path) into the model of
`scripts/train_image_folder.py`, at the classes and image size its training recorded, classifies
every image of --data_dir/<--split> on one device and writes to --out_dir: results.json (the
accuracy, each class's accuracy and count, the confusion matrix, row = true class, and each
image's predicted class) and confusion_matrix.png.
"""
import os

import numpy as np

from models.datasets.image_folder import reader, synthetic
from models.vgg16_transfer import model as vgg16_transfer
from towers import TowersError, cli, configure_devices, evaluation, flags
from towers.compat import tf
from towers.files import write_json


def parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n')[0])
    parser.add_argument('--train_dir', default='/tmp/image_folder_train',
                        help='Where training wrote its checkpoints and model.json.')
    parser.add_argument('--checkpoint_path', default=None,
                        help='A checkpoint prefix to evaluate instead of the newest.')
    parser.add_argument('--data_dir', default=None,
                        help='The folder holding test/<class>/*.jpeg. Default: the generated '
                             'set in %s, written if missing.' % synthetic.DEFAULT_DIR)
    parser.add_argument('--split', choices=reader.SPLITS, default='test')
    parser.add_argument('--out_dir', default='/tmp/image_folder_eval',
                        help='Where results.json and confusion_matrix.png go.')
    parser.add_argument('--batch_size', type=flags.positive_int, default=32,
                        help='Images per run; results do not depend on it.')
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    classes, image_size = vgg16_transfer.load_spec(args.train_dir)
    checkpoint = args.checkpoint_path or tf.train.latest_checkpoint(args.train_dir)
    if not checkpoint:
        raise TowersError('no checkpoint in --train_dir %s; train first with '
                          'scripts/train_image_folder.py --train_dir %s'
                          % (args.train_dir, args.train_dir))
    data_dir = args.data_dir or synthetic.ensure_default_dataset()
    split = reader.list_split(data_dir, args.split, classes)
    network = vgg16_transfer.Vgg16Transfer(len(classes), image_size)
    with reader.reporting_undecodable(split.paths):
        probabilities = evaluation.restore_and_predict(
            lambda paths: {'probabilities': network(reader.decode_images(paths, image_size),
                                                    training=False)},
            checkpoint, np.array([path.encode() for path in split.paths]), args.batch_size,
            configure_devices(1).config)['probabilities']
    predictions = probabilities.argmax(axis=1)

    results = evaluation.classification_metrics(split.labels, predictions, classes)
    results.update(
        checkpoint=os.path.abspath(checkpoint), data_dir=os.path.abspath(data_dir),
        split=args.split, image_size=image_size,
        left_out={reason: len(names) for reason, names in split.skipped.items()},
        images=[{'path': os.path.relpath(path, split.directory), 'label': classes[label],
                 'predicted': classes[predicted]}
                for path, label, predicted in zip(split.paths, split.labels, predictions)])
    os.makedirs(args.out_dir, exist_ok=True)
    write_json(os.path.join(args.out_dir, 'results.json'), results)
    evaluation.write_confusion_matrix(
        os.path.join(args.out_dir, 'confusion_matrix.png'), results['confusion_matrix'], classes,
        '%s split, %s: accuracy %.3f' % (args.split, os.path.basename(checkpoint),
                                         results['accuracy']))
    print('%s: accuracy %.4f on %d %s images; %s'
          % (os.path.basename(checkpoint), results['accuracy'], results['num_examples'],
             args.split, ', '.join('%s %.3f (%d)' % (name, figures['accuracy'],
                                                      figures['examples'])
                                   for name, figures in results['per_class'].items())))
    return 0


if __name__ == '__main__':
    cli.run(main)
