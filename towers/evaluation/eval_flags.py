"""An evaluation script's flags (`add_eval_flags`): the training's directory, a checkpoint to read
instead, where the results go, examples per run, each path checked as it is parsed, and for a
network with batch norm, its statistics. No TensorFlow: a script reads them before importing it.
`towers.evaluation.choice` chooses the checkpoint and statistics they name.
"""
from towers import flags
from towers.files import TIMING_FILE

# The default of --precise_bn_batches for the workloads that evaluate with precise statistics.
PRECISE_BN_BATCHES = 50
# How many of the largest deviations a regression's report lists (`towers.evaluation.regression`;
# the regression scripts' --show).
DEFAULT_SHOW = 10


def add_eval_flags(parser, train_script, train_dir, out_dir, batch_size=None,
                   train_dir_flag='train_dir', out_dir_flag='out_dir', precise_bn_batches=None):
    """Adds an evaluation script's common flags, their paths checked as they are parsed.

    Args:
      parser: a `towers.flags.FlagParser`.
      train_script: the training script, which the error without a checkpoint names.
      train_dir, out_dir: the default directories of the training and of the results.
      batch_size: the default `--batch_size` (examples per run; the results do not depend on
        it), or None for a script without one.
      train_dir_flag, out_dir_flag: the flags' names, when a script keeps its original's
        (the CIFAR-10 tutorial's `--checkpoint_dir` and `--eval_dir`).
      precise_bn_batches: for a network with batch norm, the default of
        `--precise_bn_batches` (0: the moving averages), with `--precise_bn_batch_size`,
        `--save_precise_bn` and `--batch_statistics` (`statistics_from_flags`); None for a
        network without batch norm.
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
    if precise_bn_batches is not None:
        _add_statistics_flags(parser, precise_bn_batches)
    parser.set_defaults(eval_train_script=train_script, eval_default_train_dir=train_dir,
                        eval_train_dir_flag=train_dir_flag)


def _add_statistics_flags(parser, precise_bn_batches):
    group = parser.add_argument_group(
        'batch-norm statistics', 'What the batch-norm layers normalise with: the moving averages '
        'of the checkpoint, or precise population statistics re-estimated from training batches '
        '(each layer\'s mean and variance over all of them, every earlier layer normalising '
        'with its batch\'s statistics as in training), which show the network as trained.')
    group.add_argument('--precise_bn_batches', type=flags.non_negative_int,
                       default=precise_bn_batches,
                       help='Training batches to re-estimate the statistics from before '
                            'evaluating; 0: the moving averages (default %(default)s).')
    group.add_argument('--precise_bn_batch_size', type=flags.positive_int, default=None,
                       help='Training images per batch (each layer sees it as one batch); '
                            'default: the training\'s per-tower batch, from the %s beside the '
                            'checkpoint, else --batch_size.' % TIMING_FILE)
    group.add_argument('--save_precise_bn', type=flags.output_dir, default=None,
                       help='Also write the checkpoint with the re-estimated statistics to this '
                            'directory (the training\'s checkpoint is never written).')
    parser.add_boolean('batch_statistics', False,
                       'Normalise each evaluation batch of --batch_size images with its own '
                       'statistics, as training does: a diagnosis of the statistics, not an '
                       'evaluation (results depend on the batch).', group=group)


def train_dir_from_flags(args):
    """The training's directory of `add_eval_flags`' flags: the one given, or the default."""
    return args.train_dir or args.eval_default_train_dir
