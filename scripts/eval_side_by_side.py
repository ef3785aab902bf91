"""Evaluates segmentation models trained side by side, each restored alone, on the test split.

    python scripts/eval_side_by_side.py --train_dir /tmp/side_by_side_train --image_size 128 \
        --out_dir /tmp/side_by_side_eval

Restores every model of the newest checkpoint of --train_dir (or those of --models) on its own,
re-estimates its batch-norm statistics from --precise_bn_batches training batches (precise BN;
0: the moving averages of the checkpoint), runs it with batch norm in test mode on the test
split, and writes to --out_dir: results.json (each model's name -> {"iou", "dice",
"pixel_accuracy"} over all pixels of the split at threshold 0.5, "steps_trained" and
"statistics"), comparison.md (the same as a Markdown table), loss_curves.png (the training loss
of every model, and its validation IoU when the training wrote it, from its TensorBoard run)
and panels/<name>.png [image | truth | model 1 | model 2 | ...] for the first --num_panels
images.
"""
import os

import numpy as np

import towers
from models.side_by_side import architectures, data_flags
from towers import TowersError, cli, evaluation, flags


def parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n')[0])
    evaluation.add_eval_flags(parser, 'scripts/train_side_by_side.py',
                              '/tmp/side_by_side_train', '/tmp/side_by_side_eval', batch_size=8,
                              precise_bn_batches=evaluation.PRECISE_BN_BATCHES)
    parser.add_argument('--models', type=architectures.parse_list, default=None,
                        help='Comma-separated models to evaluate (default: every model in the '
                             'checkpoint).')
    data_flags.add_data_flags(parser, 'Side of the square input, as in training.')
    parser.add_argument('--num_panels', type=flags.non_negative_int, default=4)
    parser.add_argument('--seed', type=int, default=0,
                        help='Order and flips of the training images of precise BN.')
    return parser.parse_args(argv)


def predict(name, checkpoint, images, batch_size, config, statistics):
    """Model `name` restored alone from `checkpoint`: its masks [n, S, S] for images
    [n, S, S, 3] uint8, batch norm normalising with `statistics`."""
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.side_by_side import model
    from towers.compat import tf
    from towers.training import side_by_side

    net = model.SegmentationNet(name)

    def build(batch):
        with side_by_side.model_scope(name):
            return net(tf.cast(batch, tf.float32) / 255.0, is_training=False)

    return evaluation.predict(build, checkpoint, images, batch_size, config, names=['mask'],
                              statistics=statistics,
                              what='evaluation of %s' % name)['mask'][..., 0]


def training_images(args):
    """batch_size -> an iterator of training batches as the network takes them: images
    [batch_size, S, S, 3] uint8, flipped as in training."""
    def batches(batch_size):
        from models.side_by_side import inputs

        _, data = inputs.load_flagged_split(args, 'train')
        for images, _ in evaluation.pipeline_batches(
                lambda: inputs.training_input(data, batch_size, args.seed)):
            yield np.round(images * 255.0).astype(np.uint8)
    return batches


def main(argv):
    args = parse_args(argv)
    from models.side_by_side import inputs
    from towers import reports
    from towers.compat import tf
    from towers.training import side_by_side

    checkpoint = evaluation.checkpoint_from_flags(args)
    names = args.models or side_by_side.models_in_checkpoint(checkpoint, architectures.names())
    if not names:
        raise TowersError('checkpoint %s holds none of the models %s'
                          % (checkpoint, ', '.join(architectures.names())))
    data_dir, data = inputs.load_flagged_split(args, 'test')
    config = towers.configure_devices(1).config
    statistics = evaluation.statistics_from_flags(args, checkpoint, training_images(args))
    masks = {name: predict(name, checkpoint, data.images, args.batch_size, config, statistics)
             for name in names}
    evaluation.save_precise_bn(args, checkpoint, statistics)
    steps = int(tf.train.load_variable(checkpoint, 'global_step'))
    results = {name: dict(evaluation.segmentation_metrics(data.masks, masks[name]),
                          steps_trained=steps, statistics=statistics.description)
               for name in names}

    out_dir = args.out_dir
    reports.write_results(os.path.join(out_dir, 'results.json'), results)
    table = reports.markdown_table(
        ['model', 'steps trained', 'batch-norm statistics', 'IoU', 'Dice (F1)',
         'pixel accuracy'],
        [[architectures.get(name).TITLE, steps, statistics.description] + [
            results[name][key] for key in ('iou', 'dice', 'pixel_accuracy')] for name in names])
    reports.write_text(os.path.join(out_dir, 'comparison.md'), table)
    write_curves(os.path.join(out_dir, 'loss_curves.png'), evaluation.train_dir_from_flags(args),
                 names)
    panels = {}
    for index in range(min(args.num_panels, len(data.names))):
        panels['panels/' + data.names[index]] = os.path.join(out_dir, 'panels',
                                                             data.names[index] + '.png')
        reports.write_panel(
            panels['panels/' + data.names[index]],
            [data.images[index], data.masks[index]] + [masks[name][index] for name in names],
            '%s: image | truth | %s' % (data.names[index], ' | '.join(names)))
    evaluation.write_events(checkpoint, results, images=panels)
    print('%s on %d test images of %s (%dx%d):\n%s'
          % (os.path.basename(checkpoint), len(data.names), data_dir, args.image_size,
             args.image_size, table))
    return 0


def write_curves(path, train_dir, names):
    """The chart of every model's training loss and, where the training validated, its
    validation IoU, from its TensorBoard run in `train_dir`."""
    from towers import reports
    from towers.training import side_by_side, validation

    titles = [architectures.get(name).TITLE for name in names]
    panels = [([(title,) + side_by_side.loss_curve(train_dir, name)
                for title, name in zip(titles, names)],
               'Training loss, side by side', 'binary cross entropy', True)]
    ious = [(title,) + side_by_side.curve(train_dir, name, validation.TAG % 'iou')
            for title, name in zip(titles, names)]
    if any(steps for _, steps, _ in ious):
        panels.append((ious, 'Validation IoU while training (moving statistics)', 'IoU', False))
    reports.write_curve_panels(path, panels)


if __name__ == '__main__':
    cli.run(main)
