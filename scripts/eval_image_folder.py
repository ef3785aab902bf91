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

import towers
from models.datasets import image_folder as data
from towers import cli, evaluation, flags


def parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n')[0])
    evaluation.add_eval_flags(parser, 'scripts/train_image_folder.py', '/tmp/image_folder_train',
                              '/tmp/image_folder_eval', batch_size=32)
    parser.add_argument('--data_dir', type=flags.input_dir, default=None,
                        help='The folder holding test/<class>/*.jpeg. Default: the generated '
                             'set in %s, written if missing.' % data.DEFAULT_DATA_DIR)
    parser.add_argument('--split', choices=data.SPLITS, default='test')
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.datasets.image_folder import reader, synthetic
    from models.image_folder import model as vgg16_transfer
    from towers import reports

    classes, image_size = vgg16_transfer.load_spec(evaluation.train_dir_from_flags(args))
    checkpoint = evaluation.checkpoint_from_flags(args)
    data_dir = synthetic.locate_or_generate(args.data_dir)
    split = reader.list_split(data_dir, args.split, classes)
    network = vgg16_transfer.Vgg16Transfer(len(classes), image_size)
    with reader.naming_bad_input(split.paths):
        probabilities = evaluation.predict(
            lambda paths: {'probabilities': network(reader.evaluation_input(paths, image_size),
                                                    training=False)},
            checkpoint, np.array([path.encode() for path in split.paths]), args.batch_size,
            towers.configure_devices(1).config)['probabilities']
    predictions = probabilities.argmax(axis=1)
    results = evaluation.classification_metrics(split.labels, predictions, classes)
    results.update(
        checkpoint=os.path.abspath(checkpoint), data_dir=os.path.abspath(data_dir),
        split=args.split, image_size=image_size,
        left_out={reason: len(names) for reason, names in split.skipped.items()},
        images=[{'path': os.path.relpath(path, split.directory), 'label': classes[label],
                 'predicted': classes[predicted]}
                for path, label, predicted in zip(split.paths, split.labels, predictions)])
    reports.write_results(os.path.join(args.out_dir, 'results.json'), results)
    reports.write_confusion_matrix(
        os.path.join(args.out_dir, 'confusion_matrix.png'), results['confusion_matrix'],
        classes, '%s split, %s: accuracy %.3f' % (args.split, os.path.basename(checkpoint),
                                                  results['accuracy']))
    evaluation.write_events(checkpoint, results, images={
        'confusion_matrix': os.path.join(args.out_dir, 'confusion_matrix.png')})
    print('%s: accuracy %.4f on %d %s images; %s'
          % (os.path.basename(checkpoint), results['accuracy'], results['num_examples'],
             args.split, ', '.join('%s %.3f (%d)' % (name, figures['accuracy'],
                                                      figures['examples'])
                                   for name, figures in results['per_class'].items())))
    return 0


if __name__ == '__main__':
    cli.run(main)
