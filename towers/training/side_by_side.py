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
the same tags ('loss', 'learning_rate', 'tower_<i>/loss', and with validation while training
'validation/<metric>'), so the curves overlay.

The models together are one `towers.Recipe`, `SideBySideRecipe`, which `towers.assemble` and
`towers.fit` train as any other: each model is an objective (its loss, its variable scope)
with its own schedule and optimizer, and its one train op applies them all. Of each model's
recipe it uses `tower_fn`, `learning_rate`, `optimizer` and, to validate while training,
`validation_outputs` and `validation_metrics`. Its `create_global_step`,
`summaries` and `objectives` are not used (one global step and the summaries above serve all
models; each model trains its total loss), and a recipe with once-per-step ops is refused:
they are written for a model alone in its graph (e.g. moving averages of every trainable
variable). The models sum their losses inside the shared tower function, so they train in the
parameter-server towers in float32, with or without XLA (`towers.replication.registry`), in
one process (a synchronous cluster's optimizer applies one objective per train op).
"""
import glob
import os
import re

from towers.cluster.roles import SingleProcess
from towers.compat import tf
from towers.errors import TowersError
from towers.replication.tower import TOWER_NAME, Objective
from towers.training.assembly import Recipe, assemble as assemble_recipe, fit as fit_recipe

# The key of each model's loss among the outputs of the towers: '<name>/total_loss'.
TOTAL_LOSS = 'total_loss'
# The one train op of the models side by side.
TRAIN_OP = 'side_by_side'
_NAME = re.compile(r'^[A-Za-z][A-Za-z0-9_]*$')


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


class SideBySideRecipe(Recipe):
    """Several models' recipes as one: each model an objective of the one train op `TRAIN_OP`.

    Args:
      models: a list of (name, `towers.Recipe`); a name is the model's variable scope and
        TensorBoard run (letters, digits, underscores).

    Raises:
      TowersError: a name is repeated or not a scope name.
    """
    losses_summed_in_tower = True

    def __init__(self, models):
        self._models = _checked(models)
        self.objectives = {name: Objective(loss='%s/%s' % (name, TOTAL_LOSS), scope=name)
                           for name, _ in self._models}
        self.variables_shared_by_object = any(recipe.variables_shared_by_object
                                              for _, recipe in self._models)

    def train_ops(self):
        return {TRAIN_OP: tuple(name for name, _ in self._models)}

    def learning_rate(self, global_step, num_towers):
        """Each model's schedule, of the shared global step: dict name -> learning rate."""
        rates = {}
        for name, recipe in self._models:
            with tf.name_scope(name + '/'):
                rates[name] = recipe.learning_rate(global_step, num_towers)
        return rates

    def optimizer(self, learning_rate):
        """Each model's optimizer: dict name -> optimizer."""
        optimizers = {}
        for name, recipe in self._models:
            with tf.name_scope(name + '/'):
                optimizers[name] = recipe.optimizer(learning_rate[name])
        return optimizers

    def tower_fn(self, shard):
        """Every model on the same shard, each in its scope; its outputs and its total loss
        under '<name>/' keys."""
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

    def once_per_step_ops(self, global_step):
        """None; a model with once-per-step ops is refused."""
        for name, recipe in self._models:
            if recipe.once_per_step_ops(global_step):
                raise TowersError('model %s (%s) has once-per-step ops, which side-by-side '
                                  'training does not run' % (name, type(recipe).__name__))
        return []

    def summaries(self, replicated, learning_rate):
        """One TensorBoard run per model: dict name -> its summaries."""
        return {name: _summaries(name, replicated, learning_rate[name])
                for name, _ in self._models}

    def validation_outputs(self, batch):
        """Every model's validation outputs on the same batch, each in its scope, under
        '<name>/' keys."""
        outputs = {}
        for name, recipe in self._models:
            with model_scope(name):
                outputs.update(('%s/%s' % (name, key), value)
                               for key, value in recipe.validation_outputs(batch).items())
        return outputs

    def validation_metrics(self, outputs):
        """One TensorBoard run per model: dict name -> its metrics."""
        return {name: recipe.validation_metrics({key[len(name) + 1:]: value
                                                 for key, value in outputs.items()
                                                 if key.startswith(name + '/')})
                for name, recipe in self._models}


def _summaries(name, replicated, learning_rate):
    """The summaries of model `name`, with tags that do not name it (raw summary ops: the
    `tf.summary` functions would make the second model's tags unique, 'loss_1'): 'loss' (the
    mean over the towers), 'learning_rate' and 'tower_<i>/loss'."""
    key = '%s/%s' % (name, TOTAL_LOSS)
    tower_losses = [tower.outputs[key] for tower in replicated.towers]
    with tf.name_scope('%s/summaries/' % name):
        tags = [('loss', tf.add_n(tower_losses) / len(tower_losses)),
                ('learning_rate', learning_rate)]
        tags += [('tower_%d/loss' % tower.index, loss)
                 for tower, loss in zip(replicated.towers, tower_losses)]
        return [tf.raw_ops.ScalarSummary(tags=tag, values=tf.cast(value, tf.float32))
                for tag, value in tags]


def assemble(models, input_fn, setup, mode=None):
    """`towers.assemble` of `SideBySideRecipe(models)` on the devices of `setup`.

    Args:
      models: a list of (name, `towers.Recipe`), as `SideBySideRecipe` takes it.
      input_fn: a function of no arguments returning the global batch, which every model
        takes; called on the parameter device after the global step exists.
      setup: a `towers.DeviceSetup`; its towers make one update (for the schedules).
      mode: a `towers.Mode`; side by side, the parameter-server towers in float32, with or
        without XLA.

    Returns:
      A `towers.Training`: its `train_ops[TRAIN_OP]` steps every model, its
      `losses[TRAIN_OP]` is a dict model name -> its loss in the last tower, its
      `summary_op` a dict model name -> that model's merged summaries.

    Raises:
      TowersError: a name is repeated or not a scope name, a model adds no loss, a recipe
        has once-per-step ops, or `mode` asks for the replicated update or mixed precision.
    """
    return assemble_recipe(SideBySideRecipe(models), input_fn, setup, mode=mode)


def fit(models, input_fn, setup, train_dir, max_steps, examples_per_step, mode=None,
        **loop_options):
    """`towers.fit` of `SideBySideRecipe(models)`, in one process, to `max_steps`.

    The progress line shows every model's loss; `train_dir` gets the checkpoints of all
    models, and `train_dir/<name>` each model's summaries.

    Args:
      models, input_fn, setup, mode: as for `assemble`.
      train_dir: checkpoints and event files; a checkpoint there is resumed.
      max_steps: the global step to stop at.
      examples_per_step: the global batch, for examples/sec (each model sees all of it).
      **loop_options: further arguments of `towers.train` (intervals, printer, ...).

    Returns:
      The `towers.TrainResult`.
    """
    return fit_recipe(SideBySideRecipe(models), input_fn, setup, SingleProcess(), train_dir,
                      max_steps, examples_per_step, mode=mode, **loop_options)


def models_in_checkpoint(checkpoint, candidates):
    """The names among `candidates` whose scope holds variables in `checkpoint`, in order."""
    stored = tf.train.NewCheckpointReader(checkpoint).get_variable_to_shape_map()
    return [name for name in candidates if any(key.startswith(name + '/') for key in stored)]


def curve(train_dir, name, tag):
    """The scalar `tag` of model `name` as training wrote it to `train_dir/<name>`.

    Returns:
      (steps, values): two lists, by step, empty when the run has none; a step written by
      several runs (a resumed training) keeps its last value.
    """
    by_step = {}
    for path in sorted(glob.glob(os.path.join(train_dir, name, 'events.out.tfevents.*'))):
        for event in tf.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == tag:
                    by_step[event.step] = value.simple_value
    steps = sorted(by_step)
    return steps, [by_step[step] for step in steps]


def loss_curve(train_dir, name, tag='loss'):
    """`curve(train_dir, name, tag)` of a scalar every training writes.

    Raises:
      TowersError: the run has no event file or no value of `tag`.
    """
    steps, values = curve(train_dir, name, tag)
    if not steps:
        raise TowersError('no %r summaries of model %s in %s; expected the event files that '
                          'side-by-side training writes there'
                          % (tag, name, os.path.join(train_dir, name)))
    return steps, values
