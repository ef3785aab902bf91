"""Evaluates the newest ResNet checkpoint of a training on ImageNet's validation split.

    python scripts/eval_imagenet.py --train_dir /tmp/imagenet_train --out_dir /tmp/imagenet_eval

Every validation image once: the shorter side scaled to 256 (for 224 crops; it scales with
`--image_size`), top-1 and top-5 of the centre crop and, unless `--noten_crop`, of the mean
logits of the ten crops (corners and centre, and their mirror images). Batch norm normalises
with statistics re-estimated from `--precise_bn_batches` training batches (precise BN; 0: the
moving averages of the checkpoint). Writes `results.json` to `--out_dir`: `top1`, `top5`,
`top1_10crop`, `top5_10crop` (fractions), `num_examples`, `global_step`, `checkpoint`,
`statistics`. The network's depth is read from the checkpoint. The input is the validation
shards in `--data_dir` or `--list_file` over `--data_dir`, as for the training (the training
shards, or `--train_list_file`, for precise BN).
"""
import os

import numpy as np

from models.datasets import imagenet as data
from towers import cli, evaluation, flags


def _parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n\n')[0])
    evaluation.add_eval_flags(parser, 'scripts/train_imagenet.py', '/tmp/imagenet_train',
                              '/tmp/imagenet_eval', batch_size=25,
                              precise_bn_batches=evaluation.PRECISE_BN_BATCHES)
    parser.add_argument('--data_dir', type=flags.data_dir, default=data.DEFAULT_DATA_DIR,
                        help='ImageNet as TFRecord shards (validation-00000-of-00128, ...), or '
                             'with --list_file the folder its paths are relative to.')
    parser.add_argument('--list_file',
                        help='A list file of `relative/path.JPEG label` lines (labels 0..999) '
                             'to read instead of TFRecord shards.')
    parser.add_argument('--train_list_file',
                        help='With --list_file: the training list, for precise BN.')
    parser.add_argument('--image_size', type=flags.positive_int, default=224,
                        help='Side of the square crops (as in the training).')
    parser.add_boolean('ten_crop', True, 'Evaluate the 10-crop test besides the centre crop '
                       '(each image of a batch gives ten crops).')
    return parser.parse_args(argv)


def main(argv):
    args = _parse_args(argv)
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.datasets.imagenet import reader, sources, synthetic
    from models.imagenet import model
    from towers import reports
    from towers.compat import tf

    checkpoint = evaluation.checkpoint_from_flags(args)
    source = synthetic.open_split(args.data_dir, sources.VALIDATION, args.list_file)
    net = model.ResNet(model.checkpoint_depth(checkpoint))

    def training_batches(batch_size):
        train_source = synthetic.open_split(args.data_dir, sources.TRAIN, args.train_list_file)
        return evaluation.pipeline_batches(
            lambda: reader.training_input(train_source, batch_size, args.image_size))

    statistics = evaluation.statistics_from_flags(
        args, checkpoint, training_batches,
        network_fn=lambda batch: net(batch[0], is_training=False))

    def counts():
        """[batch, 1 + hits]: column 0 counts the images (the last batch is smaller), the
        others count each kind of hit, named in order; and how many batches the split has."""
        crops, labels, num_batches = reader.evaluation_input(source, args.batch_size,
                                                        args.image_size, args.ten_crop)
        hits = net.evaluation(crops, labels)
        evaluation.require_variables(checkpoint, [v.op.name for v in tf.global_variables()],
                                     'a %s' % net.scope)
        names = sorted(hits)
        return (tf.stack([tf.ones_like(labels, tf.int64)]
                         + [tf.cast(hits[name], tf.int64) for name in names], axis=1),
                names, num_batches)

    with reader.naming_bad_input(source), evaluation.Restored(counts, checkpoint,
                                                              statistics=statistics) as run:
        batch_counts, names, num_batches = run.outputs
        totals = sum(np.sum(counts, axis=0)
                     for counts in run.run_batches(num_batches, batch_counts))
    evaluation.save_precise_bn(args, checkpoint, statistics)
    results = {name: float(hits) / totals[0] for name, hits in zip(names, totals[1:])}
    results.update(num_examples=int(totals[0]), checkpoint=checkpoint, image_size=args.image_size,
                   global_step=int(tf.train.load_variable(checkpoint, 'global_step')),
                   statistics=statistics.description)
    reports.write_results(os.path.join(args.out_dir, 'results.json'), results)
    evaluation.write_events(checkpoint, results)
    print('%s at step %d, %d images, batch norm with %s: centre crop top-1 %.3f, top-5 %.3f%s'
          % (net.scope, results['global_step'], results['num_examples'],
             statistics.description, results['top1'], results['top5'],
             '; 10-crop top-1 %.3f, top-5 %.3f' % (
                 results['top1_10crop'], results['top5_10crop']) if args.ten_crop else ''),
          flush=True)
    return 0


if __name__ == '__main__':
    cli.run(main)
