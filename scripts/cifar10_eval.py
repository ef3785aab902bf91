"""Evaluates CIFAR-10 checkpoints, as the tutorial's `cifar10_eval.py` did.

    python scripts/cifar10_eval.py --checkpoint_dir /tmp/cifar10_train --run_once

Restores the moving averages of the newest checkpoint in `--checkpoint_dir` that reads whole
(a damaged newer one is skipped with a warning) into the model, counts how often the top logit
is the label over `--num_examples` central crops of `--eval_data`, prints `precision @ 1` and
writes it with the model's summaries to `--eval_dir`.
Without `--run_once` it evaluates again every `--eval_interval_secs`, as the original does
beside a running training; a checkpoint the training rotates away while it is read is left for
the newest one.
"""
import datetime
import math

from models.cifar10 import model as cifar10
from models.datasets.cifar10 import reader as cifar10_input, synthetic as cifar10_synthetic
from towers import cli, evaluation, flags
from towers.compat import tf


def _parse_args(argv):
    parser = flags.FlagParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--eval_dir', type=flags.output_dir, default='/tmp/cifar10_eval',
                        help='Directory where to write event logs.')
    parser.add_argument('--eval_data', default='test', choices=['test', 'train_eval'],
                        help="Either 'test' or 'train_eval'.")
    parser.add_argument('--checkpoint_dir', type=flags.input_dir, default='/tmp/cifar10_train',
                        help='Directory where to read model checkpoints.')
    parser.add_argument('--eval_interval_secs', type=flags.positive_int, default=60 * 5,
                        help='How often to run the eval.')
    parser.add_argument('--num_examples', type=flags.positive_int, default=10000,
                        help='Number of examples to run.')
    parser.add_boolean('run_once', False, 'Whether to run eval only once.')
    parser.add_argument('--batch_size', type=flags.positive_int, default=cifar10.BATCH_SIZE,
                        help='Number of images to process in a batch.')
    parser.add_argument('--data_dir', type=flags.data_dir, default='/tmp/cifar10_data',
                        help='Path to the CIFAR-10 data directory.')
    parser.add_boolean('use_fp16', False, 'Evaluate the model in fp16.')
    return parser.parse_args(argv)


def main(argv):
    args = _parse_args(argv)
    batches_dir = cifar10_synthetic.locate_or_generate(args.data_dir)
    with tf.Graph().as_default() as graph:
        images, labels = cifar10_input.inputs(args.eval_data == 'test', batches_dir,
                                              args.batch_size, use_fp16=args.use_fp16)
        _, in_top_1 = cifar10.evaluation(images, labels)
        to_restore = cifar10.variables_to_restore()
        saver = tf.train.Saver(to_restore)
        summary_op = tf.summary.merge_all()
        summary_writer = tf.summary.FileWriter(args.eval_dir, graph)
        num_iter = int(math.ceil(args.num_examples / args.batch_size))

        def eval_once(checkpoint):
            evaluation.require_variables(checkpoint, list(to_restore) + ['global_step'],
                                         'the CIFAR-10 model')
            true_count, summaries = evaluation.restore_and_sum(saver, checkpoint, in_top_1,
                                                               num_iter, summary_op)
            precision = true_count / float(num_iter * args.batch_size)
            print('%s: precision @ 1 = %.3f' % (datetime.datetime.now(), precision), flush=True)
            summary = tf.Summary.FromString(summaries)
            summary.value.add(tag='Precision @ 1', simple_value=precision)
            summary_writer.add_summary(summary, int(tf.train.load_variable(checkpoint,
                                                                           'global_step')))
            summary_writer.flush()

        evaluation.poll_checkpoints(args.checkpoint_dir, eval_once, args.run_once,
                                    args.eval_interval_secs)
    return 0


if __name__ == '__main__':
    cli.run(main)
