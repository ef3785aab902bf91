"""Assembling a training step around a model: the one place that does it for every model.

A model supplies only what is its own, as a `Recipe`: the tower function, the learning-rate
schedule, the optimizer, the ops to run once per step and extra summaries. `assemble` does the
rest, as tf-slim's `model_deploy.deploy` and tf_cnn_benchmarks' `BenchmarkCNN` do: the global step
and the optimizer on the parameter device, the process's role in a cluster (the optimizer
wrapped for synchronous workers, once-per-step ops kept where they belong), one set of towers and
a train op per objective. `fit` assembles in a new graph and runs the training loop:

    class MyRecipe(towers.Recipe):
        def tower_fn(self, batch): ...           # builds one tower, adds its losses
        def learning_rate(self, global_step, num_towers): return 0.1

    def work(role, setup):
        return towers.fit(MyRecipe(), lambda: my_inputs(global_batch), setup, role,
                          train_dir, max_steps, examples_per_step=global_batch)
    status = towers.cluster.run_task(args, work)
"""
import collections
import logging

from towers.replication import registry as modes
from towers.replication import precision
from towers.training import loop as training_loop
from towers.cluster.roles import SingleProcess
from towers.compat import tf
from towers.errors import TowersError
from towers.replication.parameter_server import TOTAL, Replicated, build_towers
from towers.replication.all_reduce import build_replicated

log = logging.getLogger(__name__)


class Recipe:
    """What a model trains with, without devices, sessions or clusters.

    Subclass it and override `tower_fn` and `learning_rate`; the other members have the
    defaults of most 2016-2019 recipes. The constructor holds only configuration; `assemble`
    calls the members in the order they are listed here.

    Attributes:
      objectives: dict name -> `towers.Objective`: the train ops the model offers (one set of
        towers computes the gradients of all of them). The default is 'total': each tower's
        total loss over every trainable variable.
    """
    objectives = TOTAL

    def create_global_step(self):
        """Makes the global step (on the parameter device); an int64 by default."""
        return tf.train.get_or_create_global_step()

    def learning_rate(self, global_step, num_towers):
        """The learning rate: a float or a scalar tensor of `global_step`.

        Args:
          global_step: the global step variable.
          num_towers: towers whose gradients make one update (every worker's in a synchronous
            cluster): for schedules counted in epochs.
        """
        raise NotImplementedError

    def optimizer(self, learning_rate):
        """The `tf.train.Optimizer` (plain gradient descent by default)."""
        return tf.train.GradientDescentOptimizer(learning_rate)

    def tower_fn(self, batch):
        """Builds one tower on its shard of the batch, as `towers.build_towers` calls it."""
        raise NotImplementedError

    def once_per_step_ops(self, global_step):
        """Ops that must run once per global step with the update, e.g. moving averages of the
        weights; called after the towers are built. None by default."""
        return []

    def summaries(self, replicated, learning_rate):
        """Summaries besides the towers' losses and the learning rate. None by default.

        Args:
          replicated: the `towers.Replicated`.
          learning_rate: as returned by `learning_rate`.
        """
        return []

    def initial_values(self):
        """Values some variables start from instead of their initializers' (pretrained
        weights), as a dict variable -> numpy array; called once the step is assembled, used
        by a run that has no checkpoint to resume. None by default (an empty dict)."""
        return {}


Training = collections.namedtuple(
    'Training', ['train_ops', 'losses', 'global_step', 'learning_rate', 'replicated',
                 'summary_op'])
Training.__doc__ = """An assembled training step.

Attributes:
  train_ops: dict objective name -> the op of one step with that objective: it applies the
    averaged gradients, increments `global_step` and runs the once-per-step ops.
  losses: dict objective name -> the last tower's loss of that objective (scalar), which the
    training loop logs, as the tutorials did.
  global_step: the global step variable.
  learning_rate: the learning rate (a tensor or a float).
  replicated: the `towers.Replicated` the ops share.
  summary_op: the towers' loss summaries, the learning rate and the recipe's summaries, merged.
"""


def assemble(recipe, input_fn, setup, role=None, objectives=None, num_towers=None, mode=None):
    """Builds the training step of `recipe` on the devices of `setup` in the default graph.

    Args:
      recipe: a `Recipe`.
      input_fn: a function of no arguments returning the global batch (a tensor or a nested
        structure of tensors); called on the parameter device, after the global step exists.
      setup: a `towers.DeviceSetup`: the tower devices and the parameter device.
      role: the process's role from `towers.cluster` (a process training alone by default).
      objectives: names of `recipe.objectives` to build train ops for; all of them by
        default. A synchronous cluster builds one, since `SyncReplicasOptimizer` applies
        gradients in one train op only.
      num_towers: towers contributing to one update, for the schedule; the towers of `setup`
        times the workers the role aggregates by default.
      mode: a `towers.Mode`: the variable update (parameter server or replicated), XLA, mixed
        precision; `Mode()` (parameter server, float32, no XLA) by default.

    Returns:
      A `Training`.
    """
    role = role or SingleProcess()
    mode = mode or modes.Mode()
    if not isinstance(role, SingleProcess):
        modes.check_in_one_process(mode.variable_update)
    names = list(recipe.objectives) if objectives is None else list(objectives)
    unknown = sorted(set(names) - set(recipe.objectives))
    if unknown or not names:
        raise TowersError('unknown train op(s) %s; %s offers %s'
                          % (unknown, type(recipe).__name__, sorted(recipe.objectives)))
    if num_towers is None:
        num_towers = len(setup.tower_devices) * role.replicas_to_aggregate
    with tf.device(setup.ps_device):
        global_step = recipe.create_global_step()
        inputs = input_fn()
        learning_rate = recipe.learning_rate(global_step, num_towers)
        optimizer = recipe.optimizer(learning_rate)
        if mode.mixed_precision:
            optimizer = precision.LossScaleOptimizer(optimizer)
        optimizer = role.wrap_optimizer(optimizer)
    build = build_replicated if mode.variable_update == modes.REPLICATED else build_towers
    log.info('%d towers: %s', len(setup.tower_devices), mode.describe())
    replicated = build(_tower_function(recipe.tower_fn, mode), inputs, setup.tower_devices,
                       optimizer, {name: recipe.objectives[name] for name in names},
                       ps_device=setup.ps_device)
    with tf.device(setup.ps_device):
        summaries = list(replicated.summaries)
        summaries.append(tf.summary.scalar('learning_rate', learning_rate))
        summaries += recipe.summaries(_as_summarized(replicated, mode), learning_rate)
        extra_ops = role.once_per_step(recipe.once_per_step_ops(global_step))
        train_ops = {name: replicated.train_op(name, global_step, extra_ops=extra_ops)
                     for name in names}
    losses = {name: replicated.objective_loss(name) for name in names}
    return Training(train_ops, losses, global_step, learning_rate, replicated,
                    tf.summary.merge(summaries))


def _as_summarized(replicated, mode):
    """`replicated` as a recipe's summaries see it: with mixed precision, the gradients of a
    step the loss scale skips (not finite) show as zeros."""
    if not mode.mixed_precision:
        return replicated
    grads = {name: precision.summarized_gradients(pairs)
             for name, pairs in replicated.grads.items()}
    return Replicated(*replicated)._replace(grads=grads)


def _tower_function(tower_fn, mode):
    """`tower_fn` as `mode` builds it: in float16 from float32 master weights with mixed
    precision; compiled with XLA (forward and backward passes: gradients of compiled ops are
    compiled too) with `xla`."""
    if mode.mixed_precision:
        tower_fn = precision.mixed_precision_tower(tower_fn)
    if not mode.xla:
        return tower_fn

    def compiled_tower(shard):
        with tf.xla.experimental.jit_scope():
            return tower_fn(shard)
    return compiled_tower


def fit(recipe, input_fn, setup, role, train_dir, max_steps, examples_per_step,
        objective=None, mode=None, **loop_options):
    """Assembles `recipe` in a new graph and trains it with `towers.train` to `max_steps`.

    Args:
      recipe, input_fn, setup, role: as for `assemble`.
      train_dir: checkpoints and event files; a checkpoint there is resumed.
      max_steps: the global step to stop at.
      examples_per_step: the global batch of this process, for examples/sec.
      objective: the train op to run; the recipe's only objective by default.
      mode: a `towers.Mode`, as for `assemble`.
      **loop_options: further arguments of `towers.train` (intervals, printer, ...).

    Returns:
      The `towers.TrainResult`.
    """
    if objective is None:
        if len(recipe.objectives) != 1:
            raise TowersError('%s offers several train ops (%s): name the one to run'
                              % (type(recipe).__name__, sorted(recipe.objectives)))
        objective = next(iter(recipe.objectives))
    with tf.Graph().as_default():
        training = assemble(recipe, input_fn, setup, role, objectives=[objective], mode=mode)
        return training_loop.train(
            training.train_ops[objective], training.losses[objective], training.global_step,
            train_dir, max_steps, examples_per_step, num_towers=len(setup.tower_devices),
            config=setup.config, summary_op=training.summary_op, master=role.master,
            is_chief=role.is_chief, hooks=role.hooks, initial_values=recipe.initial_values(),
            **loop_options)
