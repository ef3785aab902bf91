"""Assembling a training step around a model: the one place that does it for every model.

A model supplies only what is its own, as a `Recipe`: the tower function, the learning-rate
schedule, the optimizer, the ops to run once per step and extra summaries. `assemble` does the
rest, as tf-slim's `model_deploy.deploy` and tf_cnn_benchmarks' `BenchmarkCNN` do: the global step
and the optimizer on the parameter device, the process's role in a cluster (the optimizer
wrapped for synchronous workers, once-per-step ops kept where they belong), one set of towers in
the replication mode asked for, and a train op per objective. `fit` assembles in a new graph and
runs the training loop:

    class MyRecipe(towers.Recipe):
        def tower_fn(self, batch): ...           # builds one tower, adds its losses
        def learning_rate(self, global_step, num_towers): return 0.1

    def work(role, setup):
        return towers.fit(MyRecipe(), lambda: my_inputs(global_batch), setup, role,
                          train_dir, max_steps, examples_per_step=global_batch)
    status = towers.cluster.run_task(args, work)
"""
import collections
import contextlib
import logging
import os

from towers import replication
from towers.cluster.roles import SingleProcess
from towers.compat import tf
from towers.errors import TowersError
from towers.files import write_file_atomically
from towers.replication.tower import TOTAL
from towers.training import determinism
from towers.training import loop as training_loop
from towers.training import validation

log = logging.getLogger(__name__)


class Recipe:
    """What a model trains with, without devices, sessions or clusters.

    Subclass it and override `tower_fn` and `learning_rate`; the other members have the
    defaults of most 2016-2019 recipes. The constructor holds only configuration; `assemble`
    calls the members in the order they are listed here.

    Attributes:
      objectives: dict name -> `towers.Objective`: what the model's train ops minimise (one
        set of towers computes the gradients of all of them). The default is 'total': each
        tower's total loss over every trainable variable.
      variables_shared_by_object: whether the tower function calls one Keras model object in
        every tower (`towers.replication.keras_models`) rather than making its variables with
        `tf.get_variable`; the replication modes that copy variables by name refuse it.
      losses_summed_in_tower: whether the tower function sums its losses itself (several
        models side by side), which the modes that add losses to the towers' sums refuse.
    """
    objectives = TOTAL
    variables_shared_by_object = False
    losses_summed_in_tower = False

    def train_ops(self):
        """The train ops the model offers: dict name -> the objectives one step of it applies.

        By default each objective is a train op of its own, under its name. A train op of
        several objectives applies each one's gradients (with its own optimizer, when
        `optimizer` gives each its own), then increments the global step once: several
        models side by side train in one such step.
        """
        return {name: (name,) for name in self.objectives}

    def create_global_step(self):
        """Makes the global step (on the parameter device); an int64 by default."""
        return tf.train.get_or_create_global_step()

    def learning_rate(self, global_step, num_towers):
        """The learning rate: a float or a scalar tensor of `global_step`; or a dict objective
        name -> learning rate, when each objective has its own schedule.

        Args:
          global_step: the global step variable.
          num_towers: towers whose gradients make one update (every worker's in a synchronous
            cluster): for schedules counted in epochs.
        """
        raise NotImplementedError

    def optimizer(self, learning_rate):
        """The `tf.train.Optimizer` (plain gradient descent by default), or a dict objective
        name -> optimizer; its variables (Adam's powers) are then named after the objective."""
        return tf.train.GradientDescentOptimizer(learning_rate)

    def tower_fn(self, batch):
        """Builds one tower on its shard of the batch, as `towers.build_towers` calls it."""
        raise NotImplementedError

    def once_per_step_ops(self, global_step):
        """Ops that must run once per global step with the update, e.g. moving averages of the
        weights; called after the towers are built. None by default."""
        return []

    def summaries(self, replicated, learning_rate):
        """Summaries besides the towers' losses and the learning rate: a list (none by
        default); or a dict TensorBoard run name -> its summaries, for a recipe that writes
        several runs ('' is `train_dir` itself) and then makes every summary itself.

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

    def validation_outputs(self, batch):
        """The network on a validation batch in inference mode (no batch-norm update, no
        dropout), for validation while training (`towers.training.validation`): called after
        the step is assembled, in a variable scope that reuses the training's variables.

        Args:
          batch: a batch of the validation input (the structure its data set gives).

        Returns:
          A dict name -> tensor [b, ...] of per-example values that `validation_metrics`
          reduces. A recipe without validation raises NotImplementedError (the default).
        """
        raise NotImplementedError

    def validation_metrics(self, outputs):
        """The metric of a validation pass, as the model's evaluation script reports it.

        Args:
          outputs: dict name -> numpy array [n, ...]: `validation_outputs` over the split.

        Returns:
          A dict metric name -> float; or a dict TensorBoard run name -> such a dict, for a
          recipe that writes several runs (as `summaries`).
        """
        raise NotImplementedError


Training = collections.namedtuple(
    'Training', ['train_ops', 'losses', 'global_step', 'learning_rate', 'replicated',
                 'summary_op'])
Training.__doc__ = """An assembled training step.

Attributes:
  train_ops: dict train op name -> the op of one step: it applies the averaged gradients of
    its objectives, increments `global_step` and runs the once-per-step ops.
  losses: dict train op name -> the last tower's loss of its objective (scalar), which the
    training loop logs, as the tutorials did; for a train op of several objectives, a dict
    objective name -> loss.
  global_step: the global step variable.
  learning_rate: the learning rate (a tensor or a float, or a dict per objective).
  replicated: the `towers.Replicated` the ops share.
  summary_op: the towers' loss summaries, the learning rate and the recipe's summaries,
    merged; or a dict run name -> merged summaries, when the recipe writes several runs.
"""


def assemble(recipe, input_fn, setup, role=None, objectives=None, num_towers=None, mode=None):
    """Builds the training step of `recipe` on the devices of `setup` in the default graph.

    Args:
      recipe: a `Recipe`.
      input_fn: a function of no arguments returning the global batch (a tensor or a nested
        structure of tensors); called on the parameter device, after the global step exists.
      setup: a `towers.DeviceSetup`: the tower devices and the parameter device.
      role: the process's role from `towers.cluster` (a process training alone by default).
      objectives: names of `recipe.train_ops()` to build (by default one per objective,
        named after it); all of them by default. A synchronous cluster builds one train op
        of one objective, since `SyncReplicasOptimizer` applies gradients in one train op only.
      num_towers: towers contributing to one update, for the schedule; the towers of `setup`
        times the workers the role aggregates by default.
      mode: a `towers.Mode`: the variable update (parameter server or replicated), XLA, mixed
        precision; `Mode()` (parameter server, float32, no XLA) by default.

    Returns:
      A `Training`.

    Raises:
      TowersError: unknown train ops, or a mode that cannot train the recipe (in this role).
    """
    role = role or SingleProcess()
    mode = mode or replication.Mode()
    replication.check(mode, recipe, in_cluster=not isinstance(role, SingleProcess))
    offered = recipe.train_ops()
    names = list(offered) if objectives is None else list(objectives)
    unknown = sorted(set(names) - set(offered))
    if unknown or not names:
        raise TowersError('unknown train op(s) %s; %s offers %s'
                          % (unknown, type(recipe).__name__, sorted(offered)))
    steps = {name: tuple(offered[name]) for name in names}
    if role.replicas_to_aggregate > 1 and any(len(step) > 1 for step in steps.values()):
        raise TowersError('a synchronous cluster applies one objective per train op; %s are '
                          'applied together' % ', '.join(steps[names[0]]))
    built = sorted({objective for step in steps.values() for objective in step})
    if num_towers is None:
        num_towers = len(setup.tower_devices) * role.replicas_to_aggregate
    with tf.device(setup.ps_device):
        global_step = recipe.create_global_step()
        inputs = input_fn()
        learning_rate = recipe.learning_rate(global_step, num_towers)
        optimizer = role.wrap_optimizer(replication.wrap_optimizer(
            mode, recipe.optimizer(learning_rate)))
    log.info('%d towers: %s', len(setup.tower_devices), mode.describe())
    replicated = replication.build(mode, recipe.tower_fn, inputs, setup.tower_devices,
                                   optimizer, {name: recipe.objectives[name] for name in built},
                                   ps_device=setup.ps_device)
    with tf.device(setup.ps_device):
        summary_op = _summary_op(recipe.summaries(replication.as_summarized(replicated, mode),
                                                  learning_rate), replicated, learning_rate)
        extra_ops = role.once_per_step(recipe.once_per_step_ops(global_step))
        train_ops = {name: _train_op(replicated, step, global_step, extra_ops, name)
                     for name, step in steps.items()}
    losses = {name: replicated.objective_loss(step[0]) if len(step) == 1
              else {objective: replicated.objective_loss(objective) for objective in step}
              for name, step in steps.items()}
    return Training(train_ops, losses, global_step, learning_rate, replicated, summary_op)


def _train_op(replicated, objectives, global_step, extra_ops, name):
    """One step of `objectives`: `replicated.train_op` of one; of several, each applied
    (under its name, when it has an optimizer of its own), then one increment of the step."""
    if len(objectives) == 1:
        return replicated.train_op(objectives[0], global_step, extra_ops=extra_ops)
    applied = []
    for objective in objectives:
        # An optimizer of the objective's own names its variables (Adam's powers) after it.
        with (tf.name_scope(objective + '/') if isinstance(replicated.optimizer, dict)
              else contextlib.nullcontext()):
            applied.append(replicated.train_op(objective, extra_ops=extra_ops))
    with tf.control_dependencies(applied):
        return tf.group(tf.assign_add(global_step, 1), *extra_ops, name='train_op_%s' % name)


def _summary_op(recipe_summaries, replicated, learning_rate):
    """The merged summaries of the main run (the towers' losses, each learning rate, the
    recipe's), or the recipe's own runs, each merged."""
    if isinstance(recipe_summaries, dict):
        return {run: tf.summary.merge(list(summaries))
                for run, summaries in recipe_summaries.items()}
    summaries = list(replicated.summaries)
    if isinstance(learning_rate, dict):
        summaries += [tf.summary.scalar('learning_rate/' + name, rate)
                      for name, rate in learning_rate.items()]
    else:
        summaries.append(tf.summary.scalar('learning_rate', learning_rate))
    return tf.summary.merge(summaries + list(recipe_summaries))


def fit(recipe, input_fn, setup, role, train_dir, max_steps, examples_per_step,
        objective=None, mode=None, eval_every_steps=None, validation_input=None, seed=None,
        deterministic=False, flag_lines=None, **loop_options):
    """Assembles `recipe` in a new graph and trains it with `towers.train` to `max_steps`.

    Args:
      recipe, input_fn, setup, role: as for `assemble`.
      train_dir: checkpoints and event files; a checkpoint there is resumed.
      max_steps: the global step to stop at.
      examples_per_step: the global batch of this process, for examples/sec.
      objective: the train op to run; the recipe's only train op by default.
      mode: a `towers.Mode`, as for `assemble`.
      eval_every_steps: validate on `validation_input` after every this many steps and after
        the last (`towers.training.validation`); None or 0: no validation.
      validation_input: a function of no arguments returning a `tf.data.Dataset` of the
        validation split's batches, one pass, in order; needed with `eval_every_steps`.
      seed: the graph's seed (`tf.set_random_seed`): of the initial weights, every random op,
        and the input's shuffles and augmentations (`towers.datasets.input_seed`); a cluster's
        worker adds its task index. None: each run draws its own.
      deterministic: bit-reproducible training (`towers.training.determinism`): op
        determinism while it runs, the seed `seed` (0 by default), and the input's position
        in every checkpoint, so that a resumed run ends as an uninterrupted one. Refused in
        a cluster.
      flag_lines: the run's flags, one '--name=value' a line (`towers.flags.FlagParser`): the
        chief writes them to `train_dir/flags.txt`, a flag file that reruns the training
        (`--flagfile=train_dir/flags.txt`). None: nothing is written.
      **loop_options: further arguments of `towers.train` (intervals, printer, ...).

    Returns:
      The `towers.TrainResult`.

    Raises:
      TowersError: the recipe offers several train ops and none is named; validation is asked
        for without an input, or of a recipe without validation.
    """
    if objective is None:
        offered = recipe.train_ops()
        if len(offered) != 1:
            raise TowersError('%s offers several train ops (%s): name the one to run'
                              % (type(recipe).__name__, sorted(offered)))
        objective = next(iter(offered))
    if eval_every_steps and validation_input is None:
        raise TowersError('--eval_every_steps needs the validation split, which this training '
                          'does not give')
    role = role or SingleProcess()
    replication.check(mode or replication.Mode(), recipe,
                      in_cluster=not isinstance(role, SingleProcess), deterministic=deterministic)
    seed = determinism.graph_seed(seed, deterministic, role.task_index)
    if flag_lines is not None and role.is_chief:
        write_flag_file(train_dir, flag_lines)
    with determinism.op_determinism(deterministic), tf.Graph().as_default():
        if seed is not None:
            tf.set_random_seed(seed)
        training = assemble(recipe, input_fn, setup, role, objectives=[objective], mode=mode)
        if eval_every_steps:
            loop_options['validation'] = validation.build(recipe, validation_input, setup,
                                                          eval_every_steps)
        return training_loop.train(
            training.train_ops[objective], training.losses[objective], training.global_step,
            train_dir, max_steps, examples_per_step, num_towers=len(setup.tower_devices),
            config=setup.config, summary_op=training.summary_op, master=role.master,
            is_chief=role.is_chief, hooks=role.hooks, initial_values=recipe.initial_values(),
            save_input_position=deterministic, **loop_options)


FLAGS_FILE = 'flags.txt'


def write_flag_file(train_dir, flag_lines):
    """Writes `flag_lines` to `train_dir/flags.txt` (atomically), under a comment saying how to
    rerun with them."""
    tf.gfile.MakeDirs(train_dir)
    path = os.path.join(train_dir, FLAGS_FILE)
    text = '\n'.join(['# The flags of the run that trains this folder; rerun it with',
                      '# --flagfile=%s' % path] + list(flag_lines)) + '\n'

    def write(temporary):
        with open(temporary, 'w') as f:
            f.write(text)
    write_file_atomically(path, write)
