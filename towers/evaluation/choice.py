"""Which checkpoint an evaluation reads: its flags, the choice, and polling a training.

Every evaluation script takes the same flags (`add_eval_flags`: the training's directory, a
checkpoint to read instead, where the results go, images per run, each path checked) and
chooses its checkpoint the same way (`checkpoint_from_flags`): the one named, or the newest
of the training's directory that reads whole, a damaged newer one skipped with a line naming
it (`towers.training.checkpoints.newest_readable`).

    evaluation.add_eval_flags(parser, 'scripts/train_x.py', '/tmp/x_train', '/tmp/x_eval')
    args = parser.parse_args(argv)
    checkpoint = evaluation.checkpoint_from_flags(args)
"""
import logging
import time

from towers import flags
from towers.compat import tf
from towers.errors import TowersError
from towers.training import checkpoints

log = logging.getLogger(__name__)

# The missing variables an error names (a checkpoint of another network lacks hundreds).
_NAMED_AT_MOST = 5


def add_eval_flags(parser, train_script, train_dir, out_dir, batch_size=None,
                   train_dir_flag='train_dir', out_dir_flag='out_dir'):
    """Adds an evaluation script's common flags, their paths checked as they are parsed.

    Args:
      parser: a `towers.flags.FlagParser`.
      train_script: the training script, which the error without a checkpoint names.
      train_dir, out_dir: the default directories of the training and of the results.
      batch_size: the default `--batch_size` (examples per run; the results do not depend on
        it), or None for a script without one.
      train_dir_flag, out_dir_flag: the flags' names, when a script keeps its original's
        (the CIFAR-10 tutorial's `--checkpoint_dir` and `--eval_dir`).
    """
    parser.add_argument('--' + train_dir_flag, dest='train_dir', type=flags.input_dir,
                        default=None,
                        help='Where the training wrote its checkpoints; the newest that reads '
                             'whole is evaluated, a damaged newer one skipped (default %s).'
                             % train_dir)
    parser.add_argument('--checkpoint_path', type=flags.checkpoint_prefix, default=None,
                        help='A checkpoint prefix to evaluate instead of the newest, e.g. '
                             '%s/model.ckpt-1000.' % train_dir)
    parser.add_argument('--' + out_dir_flag, dest='out_dir', type=flags.output_dir,
                        default=out_dir, help='Where the results go (default %s).' % out_dir)
    if batch_size is not None:
        parser.add_argument('--batch_size', type=flags.positive_int, default=batch_size,
                            help='Examples per run; the results do not depend on it.')
    parser.set_defaults(eval_train_script=train_script, eval_default_train_dir=train_dir,
                        eval_train_dir_flag=train_dir_flag)


def train_dir_from_flags(args):
    """The training's directory of `add_eval_flags`' flags: the one given, or the default."""
    return args.train_dir or args.eval_default_train_dir


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
