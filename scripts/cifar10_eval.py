"""Evaluates CIFAR-10 checkpoints, as the tutorial's `cifar10_eval.py` did.

    python scripts/cifar10_eval.py --checkpoint_dir /tmp/cifar10_train --run_once

Restores the moving averages of the newest checkpoint in `--checkpoint_dir` into the model,
counts how often the top logit is the label over `--num_examples` central crops of
`--eval_data`, prints `precision @ 1` and writes it with the model's summaries to `--eval_dir`.
Without `--run_once` it evaluates again every `--eval_interval_secs`, as the original does
beside a running training.
"""
import argparse
import datetime
import logging
import math
import os
import time

import numpy as np

import towers
from models import cifar10, cifar10_input, cifar10_synthetic
from towers import cli
from towers.compat import tf

log = logging.getLogger('towers')


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--eval_dir', default='/tmp/cifar10_eval',
                        help='Directory where to write event logs.')
    parser.add_argument('--eval_data', default='test', choices=['test', 'train_eval'],
                        help="Either 'test' or 'train_eval'.")
    parser.add_argument('--checkpoint_dir', default='/tmp/cifar10_train',
                        help='Directory where to read model checkpoints.')
    parser.add_argument('--eval_interval_secs', type=cli.positive_int, default=60 * 5,
                        help='How often to run the eval.')
    parser.add_argument('--num_examples', type=cli.positive_int, default=10000,
                        help='Number of examples to run.')
    parser.add_argument('--run_once', action='store_true',
                        help='Whether to run eval only once.')
    parser.add_argument('--batch_size', type=cli.positive_int, default=cifar10.BATCH_SIZE,
                        help='Number of images to process in a batch.')
    parser.add_argument('--data_dir', default='/tmp/cifar10_data',
                        help='Path to the CIFAR-10 data directory.')
    parser.add_argument('--use_fp16', action='store_true',
                        help='Evaluate the model in fp16.')
    return parser.parse_args(argv)


def eval_once(args, saver, restored_names, summary_writer, in_top_1, summary_op):
    """Evaluates the newest checkpoint once.

    Args:
      args: the parsed flags.
      saver: restores the moving averages into the model.
      restored_names: the checkpoint names `saver` reads, and 'global_step'.
      summary_writer: where the summaries go.
      in_top_1: [batch] bool, from `cifar10.evaluation`.
      summary_op: the evaluation graph's summaries.

    Returns:
      The precision @ 1, or None when `--checkpoint_dir` has no checkpoint yet.
    """
    checkpoint = tf.train.latest_checkpoint(args.checkpoint_dir)
    if checkpoint is None:
        return None
    stored = tf.train.NewCheckpointReader(checkpoint).get_variable_to_shape_map()
    missing = sorted(set(restored_names) - set(stored))
    if missing:
        raise towers.TowersError(
            'checkpoint %s is not one of the CIFAR-10 model: it lacks %s'
            % (checkpoint, ', '.join(missing)))
    global_step = int(tf.train.load_variable(checkpoint, 'global_step'))
    with tf.Session() as sess:
        saver.restore(sess, checkpoint)
        num_iter = int(math.ceil(args.num_examples / args.batch_size))
        true_count = 0
        for _ in range(num_iter):
            true_count += int(np.sum(sess.run(in_top_1)))
        precision = true_count / float(num_iter * args.batch_size)
        print('%s: precision @ 1 = %.3f' % (datetime.datetime.now(), precision), flush=True)
        summary = tf.Summary()
        summary.ParseFromString(sess.run(summary_op))
        summary.value.add(tag='Precision @ 1', simple_value=precision)
        summary_writer.add_summary(summary, global_step)
        summary_writer.flush()
    return precision


def main(argv):
    args = _parse_args(argv)
    if not os.path.isdir(args.checkpoint_dir):
        raise towers.TowersError('--checkpoint_dir %s does not exist (expected the --train_dir '
                                 'of a CIFAR-10 training)' % args.checkpoint_dir)
    batches_dir = cifar10_synthetic.locate_or_generate(args.data_dir)
    with tf.Graph().as_default() as graph:
        images, labels = cifar10_input.inputs(args.eval_data == 'test', batches_dir,
                                              args.batch_size, use_fp16=args.use_fp16)
        _, in_top_1 = cifar10.evaluation(images, labels)
        to_restore = cifar10.variables_to_restore()
        saver = tf.train.Saver(to_restore)
        summary_op = tf.summary.merge_all()
        summary_writer = tf.summary.FileWriter(args.eval_dir, graph)
        while True:
            precision = eval_once(args, saver, list(to_restore) + ['global_step'],
                                  summary_writer, in_top_1, summary_op)
            if precision is None:
                if args.run_once:
                    raise towers.TowersError(
                        'no checkpoint in --checkpoint_dir %s (expected model.ckpt-<step> '
                        'files and a `checkpoint` index written by the training)'
                        % args.checkpoint_dir)
                log.info('no checkpoint in %s yet; waiting', args.checkpoint_dir)
            if args.run_once:
                return 0
            time.sleep(args.eval_interval_secs)


if __name__ == '__main__':
    cli.run(main)
