"""Which checkpoint an evaluation reads and with which batch-norm statistics: its flags, the
choice, and polling a training.

Every evaluation script takes the same flags (`eval_flags.add_eval_flags`: the training's directory, a
checkpoint to read instead, where the results go, images per run, each path checked; for a
network with batch norm, its statistics) and chooses its checkpoint the same way
(`checkpoint_from_flags`): the one named, or the newest of the training's directory that reads
whole, a damaged newer one skipped with a line naming it
(`towers.training.checkpoints.newest_readable`).

    evaluation.add_eval_flags(parser, 'scripts/train_x.py', '/tmp/x_train', '/tmp/x_eval',
                              precise_bn_batches=evaluation.PRECISE_BN_BATCHES)
    args = parser.parse_args(argv)
    checkpoint = evaluation.checkpoint_from_flags(args)
    statistics = evaluation.statistics_from_flags(args, checkpoint, training_batches)
"""
import logging
import os
import time

from towers.evaluation.eval_flags import train_dir_from_flags
from towers.compat import tf
from towers.errors import TowersError
from towers.evaluation import precise_bn
from towers.files import TIMING_FILE, read_json
from towers.training import checkpoints

log = logging.getLogger(__name__)

# The missing variables an error names (a checkpoint of another network lacks hundreds).
_NAMED_AT_MOST = 5


def checkpoint_from_flags(args):
    """The checkpoint `add_eval_flags`' flags name: `--checkpoint_path`, or the newest of the
    training's directory that reads whole.

    Raises:
      TowersError: the directory holds no checkpoint (the message says to train first with
        the training script), or every checkpoint there is damaged.
    """
    if args.checkpoint_path:
        return args.checkpoint_path
    train_dir = train_dir_from_flags(args)
    checkpoint = checkpoints.newest_readable(train_dir)
    if not checkpoint:
        raise TowersError('no checkpoint in --%s %s; train first with %s --train_dir %s '
                          '(expected its model.ckpt-<step> files and `checkpoint` index)'
                          % (args.eval_train_dir_flag, train_dir, args.eval_train_script,
                             train_dir))
    return checkpoint


def statistics_from_flags(args, checkpoint, training_batches, network_fn=None):
    """The batch-norm statistics `add_eval_flags`' flags ask for, for `Restored` or `predict`.

    Args:
      args: the parsed flags (with `precise_bn_batches`).
      checkpoint: the checkpoint evaluated.
      training_batches: batch_size -> an iterator of training batches of that many examples,
        as numpy arrays (e.g. `precise_bn.pipeline_batches` of the training input).
      network_fn: as for `PreciseBN`: the network on a training batch, or None for the
        evaluation's own build function.

    Returns:
      A `precise_bn.Statistics`: `MOVING_AVERAGES`, `EACH_BATCH` or a `PreciseBN`; its
      `description` says which, for the results.

    Raises:
      TowersError: `--save_precise_bn` without precise statistics.
    """
    if args.save_precise_bn and (args.batch_statistics or not args.precise_bn_batches):
        raise TowersError('--save_precise_bn needs precise statistics: --precise_bn_batches N '
                          'with N > 0, without --batch_statistics')
    if args.batch_statistics:
        return precise_bn.EACH_BATCH
    if not args.precise_bn_batches:
        return precise_bn.MOVING_AVERAGES
    batch_size = args.precise_bn_batch_size or training_batch_size(checkpoint)
    log.info('precise batch-norm statistics from %d training batches of %s example(s)',
             args.precise_bn_batches, batch_size or '%d (--batch_size; the training\'s batch per '
             'tower is unknown)' % args.batch_size)
    batch_size = batch_size or args.batch_size
    return precise_bn.PreciseBN(lambda: training_batches(batch_size), args.precise_bn_batches,
                                network_fn)


def training_batch_size(checkpoint):
    """The examples per tower of the training that wrote `checkpoint`, from the step timing
    it wrote beside it (`towers.train`), or None."""
    path = os.path.join(os.path.dirname(checkpoint), TIMING_FILE)
    if not os.path.isfile(path):
        return None
    timing = read_json(path, 'the step timing')
    return timing['examples_per_step'] // timing['num_towers']


def save_precise_bn(args, checkpoint, statistics):
    """Writes `checkpoint` with the statistics `statistics` (of `statistics_from_flags`)
    estimated to `--save_precise_bn`, when it is given."""
    if args.save_precise_bn:
        precise_bn.save_checkpoint(checkpoint, statistics.estimated, args.save_precise_bn)


def require_variables(checkpoint, names, what):
    """Raises `TowersError` naming the variables of `names` that `checkpoint` lacks.

    Args:
      checkpoint: a checkpoint prefix.
      names: the checkpoint names a restore will read.
      what: what the checkpoint should be, for the message (e.g. 'the CIFAR-10 model').
    """
    stored = tf.train.NewCheckpointReader(checkpoint).get_variable_to_shape_map()
    missing = sorted(set(names) - set(stored))
    if missing:
        more = len(missing) - _NAMED_AT_MOST
        raise TowersError('checkpoint %s is not one of %s: it lacks %s%s'
                          % (checkpoint, what, ', '.join(missing[:_NAMED_AT_MOST]),
                             ' and %d more' % more if more > 0 else ''))


def poll_checkpoints(checkpoint_dir, evaluate, run_once, interval_secs, sleep=time.sleep):
    """Evaluates the newest checkpoint of `checkpoint_dir` once, or again every interval.

    As the TF1 evaluation scripts did beside a running training: without `run_once` it never
    returns, and waits (logging it) while the directory has no checkpoint yet. The newest
    checkpoint is the newest that reads whole (`towers.training.checkpoints.newest_readable`);
    one that the training deletes while `evaluate` reads it (it keeps only its newest few) is
    logged and left for the newest one then.

    Args:
      checkpoint_dir: the training's directory.
      evaluate: called with the newest checkpoint's prefix.
      run_once: evaluate once and return.
      interval_secs: seconds between evaluations.
      sleep: how to wait (for tests).

    Raises:
      TowersError: with `run_once`, when the directory is missing or holds no checkpoint; or
        every checkpoint there is damaged.
    """
    while True:
        checkpoint = checkpoints.newest_readable(checkpoint_dir)
        if checkpoint is not None:
            try:
                evaluate(checkpoint)
            except (TowersError, tf.errors.OpError):
                if checkpoints.exists(checkpoint):
                    raise
                log.warning('checkpoint %s was deleted while it was read (the training keeps '
                            'only its newest ones); reading the newest one now', checkpoint)
                continue
        elif run_once:
            raise TowersError('no checkpoint in --checkpoint_dir %s (expected model.ckpt-<step> '
                              'files and a `checkpoint` index written by the training)'
                              % checkpoint_dir)
        else:
            log.info('no checkpoint in %s yet; waiting', checkpoint_dir)
        if run_once:
            return
        sleep(interval_secs)
