"""The replication modes by name, what each can train, and the `Mode` a training step is built in.

tf_cnn_benchmarks keeps one `VariableMgr` class per way of replicating a model and says which
wins where (`--variable_update`, `--xla`, `--use_fp16`). Here each variable update is a module
of `towers.replication` behind one small interface, a function

    build(tower_fn, inputs, devices, optimizer, objectives=None, ps_device='/cpu:0')

that builds the towers and returns a `towers.Replicated` (its `train_op(objective, global_step,
extra_ops)` applies an update); this registry names them and says what each supports, and
flags, assembly, the cluster roles and the benchmark all ask it:

    mode = Mode('replicated', xla=True)           # a training step's mode, from the flags
    check(mode, recipe, in_cluster=False)         # TowersError: why it cannot train `recipe`
    build = get(mode.variable_update).builder()   # the mode's `build` (imports TensorFlow)

XLA and mixed precision wrap any variable update (`towers.replication.build`). What a mode
supports is said once, here: whether it trains in a cluster's worker, and whether it can
replicate a tower function that shares its variables by object (a Keras model called in every
tower) or that sums its losses itself (several models side by side); a `towers.Recipe` says
which of these its tower function does.

This module holds no TensorFlow.
"""
import collections
import importlib

from towers.errors import TowersError

PARAMETER_SERVER = 'parameter_server'
REPLICATED = 'replicated'
MIRRORED = 'mirrored'

# What a recipe's tower function may do that not every mode replicates: the `towers.Recipe`
# attribute that says it does, and the phrase naming it in an error.
TRAITS = collections.OrderedDict([
    ('variables_shared_by_object',
     'shares one Keras model\'s variables between the towers by object'),
    ('losses_summed_in_tower',
     'sums each model\'s losses inside the shared tower function (models side by side)'),
])


class Replication(collections.namedtuple(
        'Replication', ['name', 'module', 'function', 'summary', 'trains', 'in_cluster',
                        'supports'])):
    """A variable update: how the towers' variables are kept and updated.

    Attributes:
      name: the name `--variable_update` takes.
      module, function: where its `build` is, in `towers.replication`.
      summary: one line on what it does, for help texts.
      trains: whether `towers.assemble` trains with it (False: the benchmark compares it).
      in_cluster: whether a worker of a parameter-server cluster can train with it.
      supports: the names of the `TRAITS` of a tower function it can replicate.
    """
    __slots__ = ()

    def builder(self):
        """The mode's `build` function (importing it imports TensorFlow)."""
        module = importlib.import_module('towers.replication.' + self.module)
        return getattr(module, self.function)


MODES = collections.OrderedDict((replication.name, replication) for replication in [
    Replication(PARAMETER_SERVER, 'parameter_server', 'build_towers',
                'the variables on the parameter device, the towers\' gradients averaged there, '
                'one update', trains=True, in_cluster=True, supports=tuple(TRAITS)),
    Replication(REPLICATED, 'all_reduce', 'build_replicated',
                'a copy of the variables on every tower device, the gradients all-reduced, '
                'every copy updated', trains=True, in_cluster=False, supports=()),
    Replication(MIRRORED, 'mirrored', 'mirrored_train_op',
                'tf.distribute.MirroredStrategy in graph mode, compared by the benchmark',
                trains=False, in_cluster=False, supports=('variables_shared_by_object',)),
])

# The variable updates a training step can be built in, as `--variable_update` offers them.
VARIABLE_UPDATES = tuple(name for name, replication in MODES.items() if replication.trains)

# What mixed precision can wrap: float16 towers need layers that follow their input's dtype
# (Keras layers keep their float32 policy), and losses the towers sum in float32.
MIXED_PRECISION_SUPPORTS = ()


def get(name):
    """The `Replication` named `name`.

    Raises:
      TowersError: no mode has that name.
    """
    if name not in MODES:
        raise TowersError('unknown variable update %r; expected one of %s'
                          % (name, ', '.join(VARIABLE_UPDATES)))
    return MODES[name]


class Mode(collections.namedtuple('Mode', ['variable_update', 'xla', 'mixed_precision'])):
    """The way the towers are built and updated.

    Attributes:
      variable_update: the name of a `Replication` that trains: 'parameter_server'
        (`towers.build_towers`: the variables on the parameter device, the towers' gradients
        averaged there, one update) or 'replicated' (`towers.replication.all_reduce`: a copy
        of the variables on every tower device, the gradients all-reduced, every copy
        updated); checkpoints hold the same names in both.
      xla: compile each tower (its forward and backward passes) with XLA, through `jit_scope`.
      mixed_precision: each tower computes in float16 from float32 master weights, with
        dynamic loss scaling (`towers.replication.precision`).
    """
    __slots__ = ()

    def __new__(cls, variable_update=PARAMETER_SERVER, xla=False, mixed_precision=False):
        if variable_update not in VARIABLE_UPDATES:
            raise TowersError('unknown variable update %r; expected one of %s'
                              % (variable_update, ', '.join(VARIABLE_UPDATES)))
        return super().__new__(cls, variable_update, bool(xla), bool(mixed_precision))

    def describe(self):
        """One line, e.g. 'replicated, XLA, mixed precision'."""
        return ', '.join([self.variable_update] + (['XLA'] if self.xla else [])
                         + (['mixed precision'] if self.mixed_precision else []))


def unsupported(mode, recipe=None, in_cluster=False, deterministic=False):
    """Why `mode` cannot train `recipe`, or train in a cluster's task, or train
    deterministically; None when it can.

    Args:
      mode: a `Mode`.
      recipe: a `towers.Recipe` (its `TRAITS` attributes are read), or None.
      in_cluster: whether the step is a worker's of a parameter-server cluster.
      deterministic: whether the training must be bit-reproducible, resumed or not
        (`towers.training.determinism`).

    Returns:
      One sentence naming what is not supported and what would train, or None.
    """
    if deterministic and in_cluster:
        return ('--deterministic trains in one process: in a cluster the parameter servers '
                'take the workers\' gradients in the order they arrive (asynchronous workers '
                'apply them so; synchronous ones sum them so, which rounds differently with 3 '
                'workers or more), and no checkpoint holds a worker\'s input position; train '
                'alone, or without --deterministic')
    replication = get(mode.variable_update)
    if in_cluster and not replication.in_cluster:
        return ('--variable_update %s trains in one process; a cluster keeps the variables on '
                'its parameter servers (--variable_update %s)'
                % (mode.variable_update, PARAMETER_SERVER))
    for trait, what in TRAITS.items():
        if not getattr(recipe, trait, False):
            continue
        name = type(recipe).__name__
        if trait not in replication.supports:
            return ('%s %s; --variable_update %s copies the variables a model makes with '
                    'tf.get_variable (variable scopes, tf-slim): train it with '
                    '--variable_update %s' % (name, what, mode.variable_update,
                                              PARAMETER_SERVER))
        if mode.mixed_precision and trait not in MIXED_PRECISION_SUPPORTS:
            return ('%s %s; mixed precision needs float16 towers built with tf.get_variable '
                    '(tf-slim, tf.layers, variable scopes) whose losses the towers sum: train '
                    'it in float32' % (name, what))
    return None


def check(mode, recipe=None, in_cluster=False, deterministic=False):
    """Raises `TowersError` with `unsupported`'s sentence when `mode` cannot train `recipe`
    (in a cluster's task, deterministically)."""
    reason = unsupported(mode, recipe, in_cluster, deterministic)
    if reason:
        raise TowersError(reason)
