"""Evaluates the newest ResNet checkpoint of a training on ImageNet's validation split.

    python scripts/eval_imagenet.py --train_dir /tmp/imagenet_train --out_dir /tmp/imagenet_eval

Every validation image once: the shorter side scaled to 256 (for 224 crops; it scales with
`--image_size`), top-1 and top-5 of the centre crop and, unless `--noten_crop`, of the mean
logits of the ten crops (corners and centre, and their mirror images). Writes `results.json`
to `--out_dir`: `top1`, `top5`, `top1_10crop`, `top5_10crop` (fractions), `num_examples`,
`global_step`, `checkpoint`. The network's depth is read from the checkpoint. The input is the
validation shards in `--data_dir` or `--list_file` over `--data_dir`, as for the training.
"""
import logging
import os

from models.datasets.imagenet import reader, synthetic
from models.resnet import model
from towers import TowersError, cli, evaluation, flags
from towers.compat import tf
from towers.files import write_json

log = logging.getLogger('eval_imagenet')


def _parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--train_dir', default='/tmp/imagenet_train',
                        help='Directory of the training\'s checkpoints.')
    parser.add_argument('--data_dir', default=synthetic.DEFAULT_DATA_DIR,
                        help='ImageNet as TFRecord shards (validation-00000-of-00128, ...), or '
                             'with --list_file the folder its paths are relative to.')
    parser.add_argument('--list_file',
                        help='A list file of `relative/path.JPEG label` lines (labels 0..999) '
                             'to read instead of TFRecord shards.')
    parser.add_argument('--image_size', type=flags.positive_int, default=224,
                        help='Side of the square crops (as in the training).')
    parser.add_argument('--batch_size', type=flags.positive_int, default=25,
                        help='Images per batch (each gives ten crops with --ten_crop).')
    parser.add_boolean('ten_crop', True, 'Evaluate the 10-crop test besides the centre crop.')
    parser.add_argument('--out_dir', default='/tmp/imagenet_eval',
                        help='Where to write results.json.')
    return parser.parse_args(argv)


def _newest_checkpoint(train_dir):
    """The newest checkpoint of `train_dir` and the depth of the ResNet it holds."""
    checkpoint = tf.train.latest_checkpoint(train_dir)
    if checkpoint is None:
        raise TowersError('no checkpoint in --train_dir %s (expected model.ckpt-<step> files '
                          'and a `checkpoint` index written by train_imagenet.py)' % train_dir)
    depth = model.depth_of_checkpoint([name for name, _ in tf.train.list_variables(checkpoint)])
    if depth is None:
        raise TowersError('checkpoint %s holds no ResNet v1 (no resnet_v1_<%s>/logits/weights)'
                          % (checkpoint, '|'.join(str(d) for d in model.DEPTHS)))
    return checkpoint, depth


def main(argv):
    args = _parse_args(argv)
    checkpoint, depth = _newest_checkpoint(args.train_dir)
    data_dir = (args.data_dir if args.list_file
                else synthetic.locate_or_generate(args.data_dir, reader.VALIDATION))
    source = reader.open_source(data_dir, reader.VALIDATION, args.list_file)
    net = model.ResNet(depth)
    with tf.Graph().as_default():
        crops, labels, num_batches = reader.eval_inputs(source, args.batch_size,
                                                        args.image_size, args.ten_crop)
        hits = net.evaluation(crops, labels)
        names = sorted(hits)
        # Column 0 counts the images (the last batch is smaller); the others count hits.
        counts = tf.stack([tf.ones_like(labels, tf.int64)]
                          + [tf.cast(hits[name], tf.int64) for name in names], axis=1)
        variables = tf.global_variables()
        evaluation.require_variables(checkpoint, [v.op.name for v in variables],
                                     'a %s' % net.scope)
        with reader.reporting_bad_records(source):
            totals, _ = evaluation.restore_and_sum(tf.train.Saver(variables), checkpoint,
                                                   counts, num_batches)
    results = {name: float(hits) / totals[0] for name, hits in zip(names, totals[1:])}
    results.update(num_examples=int(totals[0]), checkpoint=checkpoint, image_size=args.image_size,
                   global_step=int(tf.train.load_variable(checkpoint, 'global_step')))
    os.makedirs(args.out_dir, exist_ok=True)
    write_json(os.path.join(args.out_dir, 'results.json'), results)
    print('%s at step %d, %d images: centre crop top-1 %.3f, top-5 %.3f%s'
          % (net.scope, results['global_step'], results['num_examples'], results['top1'],
             results['top5'], '; 10-crop top-1 %.3f, top-5 %.3f' % (
                 results['top1_10crop'], results['top5_10crop']) if args.ten_crop else ''),
          flush=True)
    return 0


if __name__ == '__main__':
    cli.run(main)
