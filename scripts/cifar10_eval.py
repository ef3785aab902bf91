"""Evaluates CIFAR-10 checkpoints, as the tutorial's `cifar10_eval.py` did.

    python scripts/cifar10_eval.py --checkpoint_dir /tmp/cifar10_train --run_once

Restores the moving averages of the newest checkpoint in `--checkpoint_dir` that reads whole
(a damaged newer one is skipped with a warning), or of `--checkpoint_path`, into the model, counts how often the top logit
is the label over `--num_examples` central crops of `--eval_data`, prints `precision @ 1` and
writes it with the model's summaries to `--eval_dir`, and as `precision_at_1` to the training's
`eval` run (`<checkpoint_dir>/eval`, beside its `--eval_every_steps` validation).
Without `--run_once` it evaluates again every `--eval_interval_secs`, as the original does
beside a running training; a checkpoint the training rotates away while it is read is left for
the newest one.
"""
import datetime
import math

import numpy as np

from models.cifar10 import BATCH_SIZE
from towers import cli, evaluation, flags


def _parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n\n')[0])
    evaluation.add_eval_flags(parser, 'scripts/train_cifar10_multi_gpu.py', '/tmp/cifar10_train',
                              '/tmp/cifar10_eval', batch_size=BATCH_SIZE,
                              train_dir_flag='checkpoint_dir', out_dir_flag='eval_dir')
    parser.add_argument('--eval_data', default='test', choices=['test', 'train_eval'],
                        help="Either 'test' or 'train_eval'.")
    parser.add_argument('--eval_interval_secs', type=flags.positive_int, default=60 * 5,
                        help='How often to run the eval.')
    parser.add_argument('--num_examples', type=flags.positive_int, default=10000,
                        help='Number of examples to run.')
    parser.add_boolean('run_once', False, 'Whether to run eval only once.')
    parser.add_argument('--data_dir', type=flags.data_dir, default='/tmp/cifar10_data',
                        help='Path to the CIFAR-10 data directory.')
    parser.add_boolean('use_fp16', False, 'Evaluate the model in fp16.')
    return parser.parse_args(argv)


def main(argv):
    args = _parse_args(argv)
    # Imported after the flags: --help and a bad flag answer without TensorFlow (towers.cli).
    from models.cifar10 import model as cifar10
    from models.datasets.cifar10 import reader as cifar10_input, synthetic as cifar10_synthetic
    from towers.compat import tf

    batches_dir = cifar10_synthetic.locate_or_generate(args.data_dir)
    num_iter = int(math.ceil(args.num_examples / args.batch_size))
    writer = []

    def eval_once(checkpoint):
        def network():
            images, labels = cifar10_input.inputs(args.eval_data == 'test', batches_dir,
                                                  args.batch_size, use_fp16=args.use_fp16)
            _, in_top_1 = cifar10.evaluation(images, labels)
            evaluation.require_variables(checkpoint, list(cifar10.variables_to_restore())
                                         + ['global_step'], 'the CIFAR-10 model')
            return in_top_1, tf.summary.merge_all()

        with evaluation.Restored(network, checkpoint,
                                 var_list=cifar10.variables_to_restore) as net:
            in_top_1, summary_op = net.outputs
            true_count = sum(np.sum(counts) for counts in net.run_batches(num_iter, in_top_1))
            summary = tf.Summary.FromString(net.run(fetches=summary_op))
            if not writer:
                writer.append(tf.summary.FileWriter(args.out_dir, net.graph))
        precision = true_count / float(num_iter * args.batch_size)
        print('%s: precision @ 1 = %.3f' % (datetime.datetime.now(), precision), flush=True)
        summary.value.add(tag='Precision @ 1', simple_value=precision)
        writer[0].add_summary(summary, int(tf.train.load_variable(checkpoint, 'global_step')))
        writer[0].flush()
        # Also the project's convention: the training's `eval` run, beside its validation.
        evaluation.write_events(checkpoint, {'precision_at_1': precision})

    if args.checkpoint_path:
        eval_once(args.checkpoint_path)
    else:
        evaluation.poll_checkpoints(evaluation.train_dir_from_flags(args), eval_once,
                                    args.run_once, args.eval_interval_secs)
    return 0


if __name__ == '__main__':
    cli.run(main)
