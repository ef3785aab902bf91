"""Exports a trained model for serving: a SavedModel that plain TensorFlow 2 loads.

    python scripts/export_saved_model.py --model cifar10 --checkpoint_dir /tmp/cifar10_train \
        --export_dir /tmp/cifar10_export

Restores the newest checkpoint of --checkpoint_dir that reads whole (a damaged newer one is
skipped with a warning), or --checkpoint_path, into the model's inference graph (one tower,
batch norm on its moving statistics, moving averages where the evaluation restores them, the
preprocessing inside) and writes it to --export_dir with one signature, `serving_default`,
taking the images as a user sends them (see docs/export.md). For the Keras models
(fashion_mnist, image_folder), --keras_out FILE.weights.h5 and --tf2_checkpoint_dir DIR also
write the Keras weights and a TF2 object-based checkpoint. Sizes a checkpoint does not hold are
the evaluation's flags: --image_size (imagenet, side_by_side), --image_height and
--image_width (segdec).
"""
import os

from models import registry
from towers import TowersError, cli, flags

# The flags of sizes (and choices) that some models take, as their evaluation scripts do.
MODEL_FLAGS = ('image_size', 'image_height', 'image_width', 'models')


def _parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--model', required=True, choices=sorted(registry.EXPORTABLE))
    chosen = parser.add_mutually_exclusive_group(required=True)
    chosen.add_argument('--checkpoint_dir', type=flags.input_dir,
                        help='The training directory; its newest checkpoint that reads whole '
                             'is exported.')
    chosen.add_argument('--checkpoint_path', type=flags.checkpoint_prefix,
                        help='A checkpoint prefix to export instead, e.g. '
                             '/tmp/cifar10_train/model.ckpt-1000.')
    parser.add_argument('--export_dir', required=True, type=flags.output_dir,
                        help='The SavedModel\'s directory: new, or empty.')
    parser.add_argument('--keras_out', help='Keras models: also write the weights to this '
                                            'file, named <name>.weights.h5.')
    parser.add_argument('--tf2_checkpoint_dir', type=flags.output_dir,
                        help='Keras models: also write a TF2 object-based checkpoint '
                             '(tf.train.Checkpoint(model=...)) into this new directory.')
    parser.add_argument('--image_size', type=flags.positive_int,
                        help='imagenet: side of the centre crop (default 224); side_by_side: '
                             'side of the square input (default 128); as trained.')
    for side in ('height', 'width'):
        parser.add_argument('--image_' + side, type=flags.positive_int,
                            help='segdec: input %s, as trained (default: the variant\'s).'
                                 % side)
    parser.add_argument('--models', help='side_by_side: the comma-separated models to export '
                                         '(default: every model of the checkpoint).')
    return parser.parse_args(argv)


def main(argv):
    args = _parse_args(argv)
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from towers import export
    from towers.training import checkpoints

    serving = registry.serving(args.model)
    given = {name: getattr(args, name) for name in MODEL_FLAGS if getattr(args, name)}
    unused = sorted(set(given) - set(serving.FLAGS))
    if unused:
        raise TowersError('--model %s does not take %s (it takes %s)'
                          % (args.model, ', '.join('--' + name for name in unused),
                             ', '.join('--' + name for name in serving.FLAGS) or 'none of them'))
    checkpoint = args.checkpoint_path or checkpoints.newest_readable(args.checkpoint_dir)
    if not checkpoint:
        raise TowersError('no checkpoint in --checkpoint_dir %s (expected the model.ckpt-<step> '
                          'files and `checkpoint` index of a training)' % args.checkpoint_dir)
    signature = export.save(serving.serving(checkpoint, **given), checkpoint, args.export_dir,
                            args.keras_out, args.tf2_checkpoint_dir)
    print('%s: wrote the SavedModel %s%s; serving_default: %s'
          % (os.path.basename(checkpoint), args.export_dir,
             ''.join(', %s' % path for path in (args.keras_out, args.tf2_checkpoint_dir) if path),
             signature))
    return 0


if __name__ == '__main__':
    cli.run(main)
