"""Evaluates a SegDecNet checkpoint on the test split of KolektorSDD.

    python scripts/eval_segdec.py --train_dir /tmp/segdec_train --image_height 320 \
        --image_width 128 --out_dir /tmp/segdec_eval

Restores the newest checkpoint of --train_dir, runs the network with batch norm in test mode
on one device, with the moving statistics as the original's evaluation does (or with
--precise_bn_batches N, statistics re-estimated from N training batches), and writes to
--out_dir: results.json (average precision, false positives/negatives at the best-F threshold,
accuracy/precision/recall at 0.5, each image's score, and which statistics), pr_curve.png, and
panels/<item>_<part>.png [image | true mask | predicted mask].
"""
import os

import towers
from models import segdec
from models.datasets import kolektor
from towers import TowersError, cli, evaluation, flags


def parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n')[0])
    evaluation.add_eval_flags(parser, 'scripts/train_segdec.py', '/tmp/segdec_train',
                              '/tmp/segdec_eval', batch_size=8, precise_bn_batches=0)
    parser.add_argument('--data_dir', type=flags.input_dir, default=None,
                        help='KolektorSDD (folders kos01..kos50). Default: the generated set '
                             'in %s, written if missing.' % kolektor.DEFAULT_DATA_DIR)
    parser.add_argument('--subset', choices=kolektor.SUBSETS, default='test')
    parser.add_argument('--split', choices=kolektor.SPLITS, default='common')
    parser.add_argument('--dilate', type=flags.positive_int, default=kolektor.DILATE,
                        help='Dilation of the true masks shown in the panels.')
    parser.add_argument('--variant', choices=sorted(segdec.VARIANTS), default='tower')
    parser.add_argument('--image_height', type=flags.positive_int, default=None)
    parser.add_argument('--image_width', type=flags.positive_int, default=None)
    parser.add_argument('--seed', type=int, default=0,
                        help='Order of the training images of precise BN.')
    return parser.parse_args(argv)


def main(argv):
    args = parse_args(argv)
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.datasets.kolektor import reader as kolektor_input, synthetic as kolektor_synthetic
    from models.segdec import model
    from towers import reports
    from towers.compat import tf

    height, width = model.input_size(args.variant, args.image_height, args.image_width)
    checkpoint = evaluation.checkpoint_from_flags(args)
    data_dir = kolektor_synthetic.locate_or_generate(args.data_dir)
    data = kolektor_input.evaluation_input(data_dir, height, width, args.subset, args.split,
                                           args.dilate, segdec.OUTPUT_STRIDE)
    if data.labels.all() or not data.labels.any():
        raise TowersError('the %s images of %s must include both defective and defect-free '
                          'ones for average precision' % (args.subset, data_dir))
    setup = towers.configure_devices(1)
    net = model.SegDecNet(args.variant)

    def training_batches(batch_size):
        train = kolektor_input.load_split(data_dir, 'train', height, width, args.split,
                                          args.dilate, segdec.OUTPUT_STRIDE)
        return evaluation.pipeline_batches(
            lambda: kolektor_input.training_input(train, 1, batch_size, args.seed))

    statistics = evaluation.statistics_from_flags(
        args, checkpoint, training_batches,
        network_fn=lambda batch: net(batch[0], is_training=False))
    outputs = evaluation.predict(
        lambda images: net(tf.cast(images[..., None], tf.float32) / 255.0, is_training=False),
        checkpoint, data.images, args.batch_size, setup.config, names=['score', 'mask'],
        statistics=statistics)
    evaluation.save_precise_bn(args, checkpoint, statistics)
    scores, masks = outputs['score'], outputs['mask'][..., 0]

    results = evaluation.detection_metrics(data.labels, scores)
    results.update(checkpoint=os.path.abspath(checkpoint), data_dir=os.path.abspath(data_dir),
                   subset=args.subset, split=args.split, image_height=height,
                   image_width=width, variant=args.variant, statistics=statistics.description,
                   images=[{'name': name, 'label': int(label), 'score': float(score)}
                           for name, label, score in zip(data.names, data.labels, scores)])
    panels_dir = os.path.join(args.out_dir, 'panels')
    for name, image, truth, mask, label, score in zip(data.names, data.images,
                                                      data.pixel_labels, masks, data.labels,
                                                      scores):
        reports.write_panel(os.path.join(panels_dir, name.replace('/', '_') + '.png'),
                            [image, truth, mask], '%s defect=%d score=%.3f' % (name, label, score))
    precision, recall = evaluation.precision_recall_curve(data.labels, scores)[:2]
    reports.write_pr_curve(os.path.join(args.out_dir, 'pr_curve.png'), precision, recall,
                           'SegDecNet, %s split (%s): AP %.3f'
                           % (args.split, args.subset, results['average_precision']))
    reports.write_results(os.path.join(args.out_dir, 'results.json'), results)
    evaluation.write_events(
        checkpoint, results,
        images=dict([('charts/pr_curve', os.path.join(args.out_dir, 'pr_curve.png'))] + [
            ('panels/' + name, os.path.join(panels_dir, name.replace('/', '_') + '.png'))
            for name in data.names]),
        pr_curves={'pr_curve': (data.labels, scores)})
    print('%s: AP %.4f, %d false positives and %d false negatives at the best-F threshold '
          '%.3f, accuracy %.3f at 0.5 (%d images, %d defective)'
          % (os.path.basename(checkpoint), results['average_precision'],
             results['false_positives'], results['false_negatives'],
             results['best_f_threshold'], results['accuracy_at_0.5'], results['num_images'],
             results['num_defective']))
    return 0


if __name__ == '__main__':
    cli.run(main)
