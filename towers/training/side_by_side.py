"""Several models trained side by side: one set of towers, one input stream, one step.

To compare architectures on the same data without running one training after another, every
model is built in every tower on the same shard of the batch, each under a variable scope named
after it, and one `session.run` steps them all:

    models = [('unet', UnetRecipe()), ('fpn', FpnRecipe())]       # towers.Recipe each
    side_by_side.fit(models, lambda: my_input(global_batch), setup, '/tmp/train',
                     max_steps=1000, examples_per_step=global_batch)

What each model keeps its own:
- its variables, under `<name>/`, batch-norm moving statistics included (updated, as
  `towers.build_towers` does, from tower 0's `UPDATE_OPS` under `tower_0/<name>/`);
- its loss: the losses its tower function adds to the `losses` collection, plus the
  regularisation losses of its variables; its gradients are of that loss over its variables;
- its learning rate (`recipe.learning_rate`, of the shared global step) and optimizer
  (`recipe.optimizer`), whose slots and other variables (Adam's `beta1_power`) are also under
  `<name>/`; and its train op. The step runs every model's train op, then increments the one
  global step, so every schedule reads the same step.
One checkpoint holds every model; each model's variables carry its scope, so building one model
alone under `model_scope(name)` restores it from that checkpoint (a saver of only its
variables reads only theirs). TensorBoard gets one run per model, `train_dir/<name>`, with
the same tags ('loss', 'learning_rate', 'tower_<i>/loss'), so the curves overlay.

Of a `towers.Recipe` this uses `tower_fn`, `learning_rate` and `optimizer`. Its
`create_global_step`, `summaries` and `objectives` are not used (one global step and the
summaries above serve all models; each model trains its total loss), and a recipe with
once-per-step ops is refused: they are written for a model alone in its graph (e.g. moving
averages of every trainable variable). Training runs in one process (no cluster role: a
synchronous cluster's optimizer makes a single train op).
"""
import collections
import glob
import os
import re

from towers.replication import registry as modes
from towers.training import loop as training_loop
from towers.compat import tf
from towers.errors import TowersError
from towers.replication.parameter_server import TOWER_NAME, Objective, build_towers

# The key of each model's loss among the outputs of the towers: '<name>/total_loss'.
TOTAL_LOSS = 'total_loss'
_NAME = re.compile(r'^[A-Za-z][A-Za-z0-9_]*$')

SideBySide = collections.namedtuple(
    'SideBySide', ['train_op', 'losses', 'global_step', 'replicated', 'summary_ops'])
SideBySide.__doc__ = """An assembled side-by-side training step.

Attributes:
  train_op: one step of every model, then the global step's increment.
  losses: dict model name -> its loss in the last tower (scalar), as the loop logs it; in the
    order the models were given.
  global_step: the global step variable.
  replicated: the `towers.Replicated`, with one objective per model, named after it.
  summary_ops: dict model name -> its merged summaries: 'loss' (the mean over the towers),
    'learning_rate' and 'tower_<i>/loss', tagged alike for every model.
"""


def model_scope(name):
    """The variable scope of model `name`: build a model in it to restore it alone from a
    side-by-side checkpoint."""
    return tf.variable_scope(name)


def _checked(models):
    models = list(models)
    if not models:
        raise TowersError('side-by-side training needs at least one model')
    names = [name for name, _ in models]
    bad = [name for name in names if not _NAME.match(name)]
    if bad:
        raise TowersError('model names %s cannot be variable scopes: use letters, digits and '
                          'underscores, starting with a letter' % bad)
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise TowersError('models %s are given more than once; every model needs its own name'
                          % repeated)
    return models


class _SideBySideTower:
    """The tower function of all models: each in its scope, on the same shard."""

    def __init__(self, models):
        self._models = models

    def __call__(self, shard):
        outputs = {}
        for name, recipe in self._models:
            with model_scope(name):
                name_scope = tf.get_default_graph().get_name_scope() + '/'
                model_outputs = recipe.tower_fn(shard) or {}
                # Regularisers are built with the variables, in tower 0's name scope
                # (layers) or in the variable's own (`tf.get_variable`).
                losses = (tf.get_collection(tf.GraphKeys.LOSSES, re.escape(name_scope))
                          + tf.losses.get_regularization_losses(
                              '(%s_0/)?%s/' % (TOWER_NAME, re.escape(name))))
                if not losses:
                    raise TowersError('model %s added no loss to the `losses` collection'
                                      % name)
                total_loss = tf.add_n(losses, name=TOTAL_LOSS)
            outputs.update(('%s/%s' % (name, key), value)
                           for key, value in model_outputs.items())
            outputs['%s/%s' % (name, TOTAL_LOSS)] = total_loss
        return outputs


def _summaries(name, replicated, learning_rate):
    """The summaries of model `name`, with tags that do not name it (raw summary ops: the
    `tf.summary` functions would make the second model's tags unique, 'loss_1')."""
    key = '%s/%s' % (name, TOTAL_LOSS)
    tower_losses = [tower.outputs[key] for tower in replicated.towers]
    with tf.name_scope('%s/summaries/' % name):
        tags = [('loss', tf.add_n(tower_losses) / len(tower_losses)),
                ('learning_rate', learning_rate)]
        tags += [('tower_%d/loss' % tower.index, loss)
                 for tower, loss in zip(replicated.towers, tower_losses)]
        return tf.summary.merge([
            tf.raw_ops.ScalarSummary(tags=tag, values=tf.cast(value, tf.float32))
            for tag, value in tags])


def assemble(models, input_fn, setup, mode=None):
    """Builds the side-by-side training step of `models` on the devices of `setup`.

    Args:
      models: a list of (name, `towers.Recipe`); a name is the model's variable scope and
        TensorBoard run (letters, digits, underscores).
      input_fn: a function of no arguments returning the global batch, which every model
        takes; called on the parameter device after the global step exists.
      setup: a `towers.DeviceSetup`; its towers make one update (for the schedules).
      mode: a `towers.Mode`; side by side, the parameter-server towers in float32, with or
        without XLA.

    Returns:
      A `SideBySide`.

    Raises:
      TowersError: a name is repeated or not a scope name, a model adds no loss, a recipe
        has once-per-step ops, or `mode` asks for the replicated update or mixed precision.
    """
    models = _checked(models)
    mode = mode or modes.Mode()
    if mode.variable_update != modes.PARAMETER_SERVER or mode.mixed_precision:
        # Each model sums its own losses inside the shared tower function, which neither
        # the replicated copies' regularisers nor float32 loss sums reach.
        raise TowersError('side-by-side training runs the parameter-server towers in float32 '
                          '(with or without XLA); %s is not available side by side'
                          % mode.describe())
    num_towers = len(setup.tower_devices)
    with tf.device(setup.ps_device):
        global_step = tf.train.get_or_create_global_step()
        inputs = input_fn()
        learning_rates, optimizers = {}, {}
        for name, recipe in models:
            with tf.name_scope(name + '/'):
                learning_rates[name] = recipe.learning_rate(global_step, num_towers)
                optimizers[name] = recipe.optimizer(learning_rates[name])
    objectives = {name: Objective(loss='%s/%s' % (name, TOTAL_LOSS), scope=name)
                  for name, _ in models}
    tower_fn = _SideBySideTower(models)
    if mode.xla:
        tower_fn = _compiled(tower_fn)
    replicated = build_towers(tower_fn, inputs, setup.tower_devices,
                              optimizers, objectives, ps_device=setup.ps_device)
    train_ops = []
    with tf.device(setup.ps_device):
        for name, recipe in models:
            if recipe.once_per_step_ops(global_step):
                raise TowersError('model %s (%s) has once-per-step ops, which side-by-side '
                                  'training does not run' % (name, type(recipe).__name__))
            # Under the model's name scope, the optimizer's own variables carry its name.
            with tf.name_scope(name + '/'):
                train_ops.append(replicated.train_op(name))
        with tf.control_dependencies(train_ops):
            train_op = tf.group(tf.assign_add(global_step, 1), name='train_op')
        summary_ops = {name: _summaries(name, replicated, learning_rates[name])
                       for name, _ in models}
    losses = {name: replicated.objective_loss(name) for name, _ in models}
    return SideBySide(train_op, losses, global_step, replicated, summary_ops)


def _compiled(tower_fn):
    def compiled_tower(shard):
        with tf.xla.experimental.jit_scope():
            return tower_fn(shard)
    return compiled_tower


def fit(models, input_fn, setup, train_dir, max_steps, examples_per_step, mode=None,
        **loop_options):
    """Assembles `models` side by side in a new graph and trains them to `max_steps`.

    The progress line shows every model's loss; `train_dir` gets the checkpoints of all
    models, and `train_dir/<name>` each model's summaries.

    Args:
      models, input_fn, setup: as for `assemble`.
      train_dir: checkpoints and event files; a checkpoint there is resumed.
      max_steps: the global step to stop at.
      examples_per_step: the global batch, for examples/sec (each model sees all of it).
      mode: as for `assemble`.
      **loop_options: further arguments of `towers.train` (intervals, printer, ...).

    Returns:
      The `towers.TrainResult`.
    """
    with tf.Graph().as_default():
        training = assemble(models, input_fn, setup, mode)
        return training_loop.train(
            training.train_op, training.losses, training.global_step, train_dir, max_steps,
            examples_per_step, num_towers=len(setup.tower_devices), config=setup.config,
            summary_op=training.summary_ops, **loop_options)


def models_in_checkpoint(checkpoint, candidates):
    """The names among `candidates` whose scope holds variables in `checkpoint`, in order."""
    stored = tf.train.NewCheckpointReader(checkpoint).get_variable_to_shape_map()
    return [name for name in candidates if any(key.startswith(name + '/') for key in stored)]


def loss_curve(train_dir, name, tag='loss'):
    """The scalar `tag` of model `name` as training wrote it to `train_dir/<name>`.

    Returns:
      (steps, values): two lists, by step; a step written by several runs (a resumed
      training) keeps its last value.

    Raises:
      TowersError: the run has no event file or no value of `tag`.
    """
    run_dir = os.path.join(train_dir, name)
    by_step = {}
    for path in sorted(glob.glob(os.path.join(run_dir, 'events.out.tfevents.*'))):
        for event in tf.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == tag:
                    by_step[event.step] = value.simple_value
    if not by_step:
        raise TowersError('no %r summaries of model %s in %s; expected the event files that '
                          'side-by-side training writes there' % (tag, name, run_dir))
    steps = sorted(by_step)
    return steps, [by_step[step] for step in steps]
