"""Evaluates segmentation models trained side by side, each restored alone, on the test split.

    python scripts/eval_side_by_side.py --train_dir /tmp/side_by_side_train --image_size 128 \
        --out_dir /tmp/side_by_side_eval

Restores every model of the newest checkpoint of --train_dir (or those of --models) on its own,
runs it with batch norm in test mode (moving statistics), and writes to --out_dir:
results.json (each model's name -> {"iou", "dice", "pixel_accuracy"}, over all pixels of the
split at threshold 0.5), comparison.md (the same as a Markdown table), loss_curves.png (the
training loss of every model on one chart, from its TensorBoard run) and
panels/<name>.png [image | truth | model 1 | model 2 | ...] for the first --num_panels images.
"""
import os

from models.side_by_side import architectures, inputs, model
from towers import TowersError, cli, configure_devices, evaluation, flags, reports
from towers.compat import tf
from towers.training import side_by_side


def parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n')[0])
    evaluation.add_eval_flags(parser, 'scripts/train_side_by_side.py',
                              '/tmp/side_by_side_train', '/tmp/side_by_side_eval', batch_size=8)
    parser.add_argument('--models', type=architectures.parse_list, default=None,
                        help='Comma-separated models to evaluate (default: every model in the '
                             'checkpoint).')
    inputs.add_data_flags(parser, 'Side of the square input, as in training.')
    parser.add_argument('--num_panels', type=flags.non_negative_int, default=4)
    return parser.parse_args(argv)


def predict(name, checkpoint, images, batch_size, config):
    """Model `name` restored alone from `checkpoint`: its masks [n, S, S] for images
    [n, S, S, 3] uint8."""
    net = model.SegmentationNet(name)

    def build(batch):
        with side_by_side.model_scope(name):
            return net(tf.cast(batch, tf.float32) / 255.0, is_training=False)

    return evaluation.predict(build, checkpoint, images, batch_size, config,
                              names=['mask'])['mask'][..., 0]


def main(argv):
    args = parse_args(argv)
    checkpoint = evaluation.checkpoint_from_flags(args)
    names = args.models or side_by_side.models_in_checkpoint(checkpoint, architectures.names())
    if not names:
        raise TowersError('checkpoint %s holds none of the models %s'
                          % (checkpoint, ', '.join(architectures.names())))
    data_dir, data = inputs.load_flagged_split(args, 'test')
    config = configure_devices(1).config
    masks = {name: predict(name, checkpoint, data.images, args.batch_size, config)
             for name in names}
    results = {name: evaluation.segmentation_metrics(data.masks, masks[name]) for name in names}

    out_dir = args.out_dir
    reports.write_results(os.path.join(out_dir, 'results.json'), results)
    table = reports.markdown_table(
        ['model', 'IoU', 'Dice (F1)', 'pixel accuracy'],
        [[architectures.get(name).TITLE, results[name]['iou'], results[name]['dice'],
          results[name]['pixel_accuracy']] for name in names])
    reports.write_text(os.path.join(out_dir, 'comparison.md'), table)
    train_dir = evaluation.train_dir_from_flags(args)
    reports.write_curves(
        os.path.join(out_dir, 'loss_curves.png'),
        [(architectures.get(name).TITLE,) + side_by_side.loss_curve(train_dir, name)
         for name in names], 'Training loss, side by side', 'binary cross entropy',
        log_scale=True)
    for index in range(min(args.num_panels, len(data.names))):
        reports.write_panel(
            os.path.join(out_dir, 'panels', data.names[index] + '.png'),
            [data.images[index], data.masks[index]] + [masks[name][index] for name in names],
            '%s: image | truth | %s' % (data.names[index], ' | '.join(names)))
    print('%s on %d test images of %s (%dx%d):\n%s'
          % (os.path.basename(checkpoint), len(data.names), data_dir, args.image_size,
             args.image_size, table))
    return 0


if __name__ == '__main__':
    cli.run(main)
