"""Command-line flags of every script, parsed as the originals' `tf.app.flags` (absl) parsed them.

The TF1 tutorials defined their flags with `tf.app.flags`, that is absl, so their users wrote
`--log_device_placement=True`, `--run_once=true`, `--nouse_fp16`, `-num_gpus=4` or
`--flagfile=train.flags`. `FlagParser` is an `argparse.ArgumentParser` that accepts all of these:

    parser = flags.FlagParser(description='...')
    parser.add_boolean('run_once', False, 'Whether to run eval only once.')
    flags.add_device_flags(parser)
    args = parser.parse_args(argv)

A bad value, an unknown flag or an unreadable flag file raises `FlagError`, which the scripts'
runner (`towers.cli.run`) prints as one `error: ...` line, exiting with status 1.
"""
import argparse
import re

from towers import console
from towers.errors import TowersError
# The flag types, offered here under their names (scripts use `flags.positive_int`, ...).
from towers.flag_types import (boolean, checkpoint_prefix, data_dir, fraction, host_list,
                               input_dir, non_negative_float, non_negative_int, output_dir,
                               positive_float, positive_int, positive_int_list)
from towers.replication import registry
from towers.training.preemption import STOP_GRACE_SECS

PS_JOB = 'ps'
WORKER_JOB = 'worker'

_COMMENT = ('#', '//')


# `-m MODULE`: the program is a module, run as `python -m MODULE` runs it (its own flags follow).
MODULE_OPTION = '-m'


def leading_options(argv, value_options):
    """The tokens of `argv` before its first positional argument (or '--', or `-m MODULE`, the
    program named as a module), as a launcher reads its own options before the program it runs:
    each of `value_options` takes the next token as its value.

    Returns:
      The list of those tokens.
    """
    index = 0
    while (index < len(argv) and argv[index].startswith('-')
           and argv[index] not in ('--', MODULE_OPTION)):
        index += 2 if argv[index] in value_options else 1
    return argv[:index]


class FlagError(TowersError):
    """A flag's value is malformed, a flag is unknown, or a flag file cannot be read."""


class FlagParser(argparse.ArgumentParser):
    """An `ArgumentParser` with absl's flag syntax.

    On top of argparse it reads `--flagfile=FILE` (one flag per line, `#` and `//` comments,
    nested flag files), takes `-name=value` for `--name=value`, gives booleans made with
    `add_boolean` the forms `--name`, `--name=true|false` and `--noname`, refuses
    abbreviations (`--num_gpu` is not `--num_gpus`), as absl does, and reports every error as
    a `FlagError` instead of printing usage and exiting with status 2. The namespace it
    returns also holds `flag_lines`: every flag with its value, one `--name=value` a line, a
    flag file that gives the same values again (`--flagfile`). Every parser has `--verbose`,
    which shows TensorFlow's own log (`towers.console.show_everything`).
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault('allow_abbrev', False)
        super().__init__(*args, **kwargs)
        self.add_boolean('verbose', False,
                         'Show TensorFlow\'s own log too: its C++ start-up lines and INFO '
                         'messages, hidden by default (a TF_CPP_MIN_LOG_LEVEL the user set '
                         'decides which C++ lines show; towers.console)')

    def add_boolean(self, name, default, help, group=None):
        """Adds the boolean flag `--name` (also `--name=VALUE` and `--noname`).

        Args:
          name: the flag's name without dashes; the parsed value is `args.<name>`.
          default: its value when the flag is not given.
          help: what it does.
          group: an argument group of this parser to list it in, or None.
        """
        target = group or self
        target.add_argument('--' + name, type=boolean, nargs='?', const=True, default=default,
                            metavar='true|false', help=help + ' (default %s)' % default)
        target.add_argument('--no' + name, dest=name, action='store_false',
                            help=argparse.SUPPRESS)

    def parse_args(self, args=None, namespace=None):
        if args is None:
            raise FlagError('FlagParser.parse_args needs the argument list')
        parsed = super().parse_args(self._absl_argv(list(args), set()), namespace)
        parsed.flag_lines = self._flag_lines(parsed)
        if parsed.verbose:
            console.show_everything()
        return parsed

    def _flag_lines(self, parsed):
        """'--name=value' for each flag of `parsed` that has a value, in the parser's order."""
        lines = []
        for action in self._actions:
            names = [name for name in action.option_strings if name.startswith('--')]
            value = getattr(parsed, action.dest, None)
            # --help and the hidden --no<name> forms have no value of their own.
            if not names or action.help == argparse.SUPPRESS or value is None:
                continue
            if isinstance(value, bool):
                value = 'true' if value else 'false'
            elif isinstance(value, (list, tuple)):
                value = ','.join(map(str, value))
            lines.append('%s=%s' % (names[0], value))
        return lines

    def error(self, message):
        raise FlagError(message)

    def _absl_argv(self, argv, open_files):
        """`argv` with flag files expanded and single-dash long flags given two dashes."""
        expanded = []
        tokens = iter(argv)
        for token in tokens:
            if token == '--':
                expanded.append(token)
                expanded.extend(tokens)
                break
            name = token.split('=', 1)[0]
            if name in ('--flagfile', '-flagfile'):
                path = token.split('=', 1)[1] if '=' in token else next(tokens, None)
                if not path:
                    raise FlagError('--flagfile needs a file name')
                expanded.extend(self._absl_argv(self._read_flagfile(path, open_files),
                                                open_files | {path}))
            elif (re.match(r'^-[A-Za-z]\w+', token)
                  and '-' + name in self._option_string_actions):
                expanded.append('-' + token)
            else:
                expanded.append(token)
        return expanded

    @staticmethod
    def _read_flagfile(path, open_files):
        if path in open_files:
            raise FlagError('--flagfile %s includes itself' % path)
        try:
            with open(path) as f:
                lines = [line.strip() for line in f]
        except OSError as err:
            raise FlagError('cannot read --flagfile %s: %s' % (path, err.strerror))
        return [line for line in lines if line and not line.startswith(_COMMENT)]


def add_device_flags(parser):
    """Adds the tutorial's `--num_gpus` and `--log_device_placement`, and thread-pool sizes."""
    parser.add_argument('--num_gpus', type=positive_int, default=1,
                        help='How many towers (GPUs) to use. With fewer GPUs, GPUs are split '
                             'into logical GPUs; with none, virtual CPU devices are used.')
    parser.add_boolean('log_device_placement', False, 'Whether to log device placement.')
    parser.add_argument('--intra_op_threads', type=non_negative_int, default=0,
                        help='Threads inside one op; 0 lets TensorFlow choose.')
    parser.add_argument('--inter_op_threads', type=non_negative_int, default=0,
                        help='Ops run at once; 0 lets TensorFlow choose.')


def add_mode_flags(parser, default=registry.Mode(), use_fp16=True):
    """Adds how the towers are built and updated: `--variable_update parameter_server|replicated`,
    `--xla` and `--mixed_precision` (also `--use_fp16`, tf_cnn_benchmarks' name, unless the
    script has a `--use_fp16` of its own); `mode_from_flags(args)` passes them to `towers.fit`.

    Args:
      parser: a `FlagParser`.
      default: the model's default `towers.Mode`.
      use_fp16: whether `--use_fp16` names mixed precision; False for a script whose model
        defines `--use_fp16` itself (the CIFAR-10 tutorial's float16 weights).
    """
    parser.add_argument('--variable_update', choices=registry.VARIABLE_UPDATES,
                        default=default.variable_update,
                        help='%s. Checkpoints are alike: a run may switch when it resumes '
                             '(default %s).' % ('; '.join(
                                 '%s: %s' % (name, registry.get(name).summary)
                                 for name in registry.VARIABLE_UPDATES),
                                 default.variable_update))
    parser.add_boolean('xla', default.xla, 'Compile each tower (forward and backward) with XLA.')
    parser.add_boolean('mixed_precision', default.mixed_precision,
                       'Compute each tower in float16 from float32 master weights, with dynamic '
                       'loss scaling (unlike a model\'s own --use_fp16, which makes the weights '
                       'float16).')
    if use_fp16:
        parser.add_boolean('use_fp16', default.mixed_precision,
                           'The same as --mixed_precision (tf_cnn_benchmarks\' name).')
    parser.set_defaults(use_fp16_is_mode=use_fp16)


def mode_from_flags(args):
    """The `towers.Mode` of `add_mode_flags`'s flags, for `towers.fit(..., mode=...)`."""
    mixed_precision = args.mixed_precision or (args.use_fp16_is_mode and args.use_fp16)
    return registry.Mode(args.variable_update, args.xla, mixed_precision)


def add_checkpoint_flags(parser, save_checkpoint_steps=None):
    """Adds `--save_checkpoint_secs` (default 600, as the tutorial's MonitoredTrainingSession)
    and `--save_checkpoint_steps`; `checkpoint_options(args)` passes them to `towers.fit`.

    Args:
      parser: a `FlagParser`.
      save_checkpoint_steps: the default step interval; None for none.
    """
    parser.add_argument('--save_checkpoint_secs', type=positive_float, default=600.0,
                        help='Write a checkpoint after the first step that ends this many '
                             'seconds after the last one (or at the --save_checkpoint_steps '
                             'interval, whichever comes first), and at the end or a stop. A '
                             'process killed outright loses at most this interval.')
    parser.add_argument('--save_checkpoint_steps', type=positive_int,
                        default=save_checkpoint_steps,
                        help='Also write a checkpoint at every multiple of this many steps '
                             '(default: %s).' % (save_checkpoint_steps or 'none'))


def checkpoint_options(args):
    """The `towers.train` arguments of `add_checkpoint_flags`'s flags, for `towers.fit(...,
    **checkpoint_options(args))`."""
    return {'save_checkpoint_secs': args.save_checkpoint_secs,
            'save_checkpoint_steps': args.save_checkpoint_steps}


_SEEDED = 'the initial weights, the order and shuffles of the input, its augmentations'
_REPEATABLE = ('the same command writes the same checkpoints, byte for byte, and a run stopped '
               'and resumed ends as one never interrupted (op determinism; the input\'s '
               'position in every checkpoint). One process only: refused in a cluster')


def add_reproducibility_flags(parser, seeded=_SEEDED, repeatable=_REPEATABLE):
    """Adds `--seed N` and `--deterministic` (`towers.training.determinism`) to `parser`;
    `seeded` and `repeatable` say in their help what the seed seeds and what repeats."""
    parser.add_argument('--seed', type=int, default=None,
                        help='The one seed of every random choice: %s. Default: none, each '
                             'run draws its own (0 with --deterministic).' % seeded)
    parser.add_boolean('deterministic', False, 'Bit-reproducible: %s.' % repeatable)


def input_seed(args, default=0):
    """The seed of a script's input whose order was fixed before `--seed`: None with `--seed`
    or `--deterministic` (derived from the graph's seed, each worker's own), else `default`."""
    return None if args.seed is not None or args.deterministic else default


def add_training_flags(parser, cluster=True, use_fp16=True, save_checkpoint_steps=None,
                       mode=registry.Mode()):
    """Adds every training script's common flags: devices (`add_device_flags`), modes
    (`add_mode_flags`), checkpoint cadence (`add_checkpoint_flags`), `--eval_every_steps`, the
    seed and determinism (`add_reproducibility_flags`) and the cluster (`add_cluster_flags`).

    Args:
      parser: a `FlagParser`.
      cluster: whether the script trains as one task of a cluster too.
      use_fp16, save_checkpoint_steps: as for `add_mode_flags` and `add_checkpoint_flags`.
      mode: the model's default `towers.Mode` (the fastest its benchmark measured).
    """
    add_device_flags(parser)
    add_mode_flags(parser, mode, use_fp16=use_fp16)
    add_checkpoint_flags(parser, save_checkpoint_steps)
    parser.add_argument('--eval_every_steps', type=non_negative_int, default=0,
                        help='Validate on the test split after every this many steps and after '
                             'the last, in this process, between steps (the metric of the '
                             'evaluation script, with the moving batch-norm statistics): a line '
                             'after the progress line and validation/<metric> in TensorBoard; '
                             '0: never (default).')
    add_reproducibility_flags(parser)
    if cluster:
        add_cluster_flags(parser)


def fit_options(args):
    """The `towers.fit` arguments of `add_training_flags`' mode, checkpoint, validation, seed
    and determinism flags, and the flags to record in the training folder:
    `towers.fit(..., **flags.fit_options(args))`."""
    return dict(checkpoint_options(args), mode=mode_from_flags(args),
                eval_every_steps=args.eval_every_steps, seed=args.seed,
                deterministic=args.deterministic, flag_lines=getattr(args, 'flag_lines', None))


def add_cluster_flags(parser):
    """Adds the TF1 distributed flags: --job_name, --task_index, --ps_hosts, --worker_hosts,
    --sync_replicas (and --nosync_replicas); and how long stopping and a lost parameter server
    may take: --stop_grace_secs, --ps_timeout_secs."""
    group = parser.add_argument_group(
        'cluster', 'Training across processes or machines; without these flags the cluster '
                   'comes from the TF_CONFIG environment variable (chief, worker, ps, as '
                   'Kubeflow\'s TFJob sets it), and without either training runs in this '
                   'process alone.')
    group.add_argument('--job_name', choices=[PS_JOB, WORKER_JOB],
                       help='This process is a parameter server (ps) or a worker.')
    group.add_argument('--task_index', type=non_negative_int, default=0,
                       help='Index of this process in its job (worker 0 is the chief).')
    group.add_argument('--ps_hosts', type=host_list, default=[],
                       help='Comma-separated host:port of the parameter servers.')
    group.add_argument('--worker_hosts', type=host_list, default=[],
                       help='Comma-separated host:port of the workers.')
    parser.add_boolean('sync_replicas', True,
                       'Aggregate the gradients of all workers into one update per step; '
                       '--nosync_replicas lets each worker apply its own updates.', group=group)
    group.add_argument('--stop_grace_secs', type=positive_float, default=STOP_GRACE_SECS,
                       help='After SIGTERM or SIGINT: how long a worker lets its current step '
                            'run before cancelling it (it may wait for a worker that has '
                            'stopped); a parameter server serves the stopping workers for up to '
                            'twice this.')
    group.add_argument('--ps_timeout_secs', type=positive_float, default=180.0,
                       help='A worker stops with an error naming the parameter server when one '
                            'has not answered for this long.')
