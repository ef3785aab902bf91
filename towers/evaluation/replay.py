"""Replaying a graph from given weights on given batches, for a regression against an original.

`measure_builder` builds a graph (any builder's) on N virtual CPU towers with one thread per
pool (which fixes the order of float additions, as the originals were measured), loads the
given initial values by variable name and hands the measuring code a `Replay`, which runs
fetches on batches, restarts from the initial values and saves checkpoints; `measure_training`
does it for a `towers.Recipe`'s training step; `classic_towers` builds an original program's
towers from its own `tower_loss` and `average_gradients`; `evaluate_checkpoint` runs a network
restored from a checkpoint on given batches. `towers.evaluation.regression` compares what they
measure.
"""
import collections

import numpy as np

from towers import bars
from towers.compat import tf
from towers.devices import configure_devices
from towers.errors import TowersError
from towers.evaluation.restore import Restored, feed, placeholders_like
from towers.replication.tower import split_batch
from towers.training.assembly import assemble


def _virtual_cpu_setup(num_towers):
    """The devices the originals were measured on: virtual CPUs (no GPU even where one is),
    one thread per pool."""
    setup = configure_devices(num_towers, intra_op_threads=1, inter_op_threads=1,
                              physical_gpus=0)
    setup.config.device_count['GPU'] = 0
    return setup


class Replay:
    """What measuring code does with the session of `measure_builder` (or `measure_training`).

    Attributes:
      outputs: what the graph builder returned (for `measure_training`, the `towers.Training`
        assembled from the recipe, also named `training`).
      variable_shapes: dict variable name -> shape (list of ints) of the variables loaded
        with initial values: every global variable but the global step.
    """

    def __init__(self, outputs, placeholders, session, variables, initial, global_step):
        self.outputs = outputs
        self.variable_shapes = {v.op.name: v.shape.as_list() for v in variables}
        self._placeholders = placeholders
        self._session = session
        self._variables = variables
        self._initial = initial
        self._global_step = global_step

    @property
    def training(self):
        """The `towers.Training` that `measure_training` assembled: `outputs` under its name."""
        return self.outputs

    def run(self, fetches, batch=None):
        """Runs `fetches` (any structure `Session.run` takes) with the placeholders fed
        `batch`, a global batch structured as the example one; numpy values come back."""
        return self._session.run(
            fetches, None if batch is None else feed(self._placeholders, batch))

    def restart(self):
        """Sets every variable back to its initial value, and the global step (if the graph
        has one) to its initializer's."""
        if self._global_step is not None:
            self._session.run(self._global_step.initializer)
        for variable in self._variables:
            variable.load(self._initial[variable.op.name], self._session)

    def save(self, prefix):
        """Writes every global variable to the checkpoint `prefix` (e.g. '/tmp/x/model.ckpt')."""
        tf.train.Saver(tf.global_variables()).save(self._session, prefix,
                                                   write_meta_graph=False)


def _initial_values(variables, initial_values):
    """`initial_values` of `variables`, checked and of their dtypes.

    Raises:
      TowersError: naming the variable that has no value, the value that has no variable, or
        the value of the wrong shape.
    """
    shapes = {v.op.name: v.shape.as_list() for v in variables}
    values = initial_values(dict(shapes))
    missing = sorted(set(shapes) - set(values))
    if missing:
        raise TowersError('no initial value for variable(s) %s' % ', '.join(missing))
    unknown = sorted(set(values) - set(shapes))
    if unknown:
        raise TowersError('initial value(s) for %s, which the graph does not have (its '
                          'variables: %s)' % (', '.join(unknown), ', '.join(sorted(shapes))))
    checked = {}
    for variable in variables:
        name = variable.op.name
        value = np.asarray(values[name], variable.dtype.base_dtype.as_numpy_dtype)
        if list(value.shape) != shapes[name]:
            raise TowersError('the initial value of variable %s has shape %s, the variable %s'
                              % (name, list(value.shape), shapes[name]))
        checked[name] = value
    return checked


def _global_step():
    """The default graph's global step: the variable of the `GLOBAL_STEP` collection, else the
    one named 'global_step' (the tutorials made a float32 one by hand), else None."""
    found = tf.get_collection(tf.GraphKeys.GLOBAL_STEP) or [
        v for v in tf.global_variables() if v.op.name == 'global_step']
    return found[0] if found else None


def measure_builder(build, batch, num_towers, initial_values, measure):
    """Builds a graph with `build` and hands it to `measure` in a session.

    The graph is built new, fed by placeholders shaped like `batch`, with `num_towers` virtual
    CPU devices (one intra-op and one inter-op thread, which fixes the order of float
    additions). Every global variable but the global step (if the graph has one) starts at its
    value from `initial_values`.

    Args:
      build: a function (inputs, setup) -> outputs (e.g. a dict of tensors and ops): builds
        the graph on the placeholders `inputs` (structured as `batch`) and the devices of
        `setup`, a `towers.DeviceSetup` of `num_towers` tower devices.
      batch: an example global batch: a numpy array or a nested structure (tuple, dict) of
        them, [num_towers * b, ...] each; its dtypes and shapes make the placeholders.
      num_towers: towers, >= 1.
      initial_values: a function from dict variable name -> shape (list of ints) of those
        variables to dict name -> array of that shape, one for each.
      measure: a function of a `Replay`, whose `outputs` are `build`'s; may add ops (e.g.
        norms of gradients) to the graph.

    Returns:
      What `measure` returns.

    Raises:
      TowersError: when `initial_values` misses a variable, has one the graph does not, or
        gives a value of the wrong shape (naming it).
    """
    setup = _virtual_cpu_setup(num_towers)
    with tf.Graph().as_default():
        placeholders = placeholders_like(batch)
        outputs = build(placeholders, setup)
        global_step = _global_step()
        variables = [v for v in tf.global_variables() if v is not global_step]
        initial = _initial_values(variables, initial_values)
        with tf.Session(config=setup.config) as session:
            # Lookup tables (an original's `tf.contrib.lookup`) are not variables: they are
            # initialized here, once.
            session.run([tf.global_variables_initializer(), tf.tables_initializer()])
            replay = Replay(outputs, placeholders, session, variables, initial, global_step)
            replay.restart()
            return measure(replay)


def measure_training(recipe, batch, num_towers, initial_values, measure, objectives=None):
    """`measure_builder` of `recipe`'s training step, assembled with `towers.assemble`.

    Args:
      recipe: a `towers.Recipe`.
      batch, num_towers, initial_values: as `measure_builder`.
      measure: a function of a `Replay`, whose `training` is the `towers.Training`.
      objectives: names of the recipe's objectives to build train ops for; all by default.

    Returns:
      What `measure` returns.
    """
    return measure_builder(
        lambda inputs, setup: assemble(recipe, lambda: inputs, setup, objectives=objectives),
        batch, num_towers, initial_values, measure)


ClassicTowers = collections.namedtuple('ClassicTowers', ['losses', 'grads', 'update_ops'])
ClassicTowers.__doc__ = """The towers of `classic_towers`.

Attributes:
  losses: list of what the original's `tower_loss` returned for each tower.
  grads: the original's `average_gradients` of the towers' (gradient, variable) pairs; with
    `objectives`, a dict train op name -> those of its loss.
  update_ops: tower 0's `UPDATE_OPS` (batch-norm statistics), which the tutorials ran with
    the update.
"""


def classic_towers(tower_loss, average_gradients, inputs, setup, optimizer, device_fn=None,
                   tower_name='tower', objectives=None):
    """The tower loop of the TF1 multi-GPU tutorials, around an original program's functions.

    As the tutorials' `train()` did: in one reused variable scope, for each device i, in
    `tf.device(device)` and name scope '<tower_name>_<i>', the loss of the i-th shard of
    `inputs` and its gradients (`optimizer.compute_gradients`); then the original's average,
    on the parameter device. For a builder of `measure_builder` or `regress_builders`.

    Args:
      tower_loss: the original's function (scope, *shard) -> the tower's loss.
      average_gradients: the original's function of the list of each tower's pairs.
      inputs: a tuple of tensors [num_towers * b, ...], split into equal shards.
      setup: the `towers.DeviceSetup` whose tower devices the towers go on.
      optimizer: a `tf.train.Optimizer`.
      device_fn: a function (tower device) -> what the original put in `tf.device`, e.g. its
        `assign_to_device(device, '/cpu:0')`; the device itself by default.
      tower_name: the prefix of the towers' name scopes.
      objectives: None: one train op, on the loss `tower_loss` returns. Else several from one
        set of towers (originals that train parts of a network apart): a dict train op -> (index,
        name part): its loss is `tower_loss(...)[index]`, its variables the trainable ones
        whose names hold `name part` ('' for all).

    Returns:
      A `ClassicTowers`.
    """
    losses, tower_grads, update_ops = [], [], []
    with tf.variable_scope(tf.get_variable_scope()):
        for i, (device, shard) in enumerate(zip(setup.tower_devices,
                                                split_batch(inputs, len(setup.tower_devices)))):
            with tf.device(device_fn(device) if device_fn else device), \
                    tf.name_scope('%s_%d' % (tower_name, i)) as scope:
                losses.append(tower_loss(scope, *shard))
                tf.get_variable_scope().reuse_variables()
                if i == 0:
                    update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS, scope)
                if objectives is None:
                    tower_grads.append(optimizer.compute_gradients(losses[-1]))
                else:
                    tower_grads.append({name: optimizer.compute_gradients(losses[-1][index], [
                        v for v in tf.trainable_variables() if part in v.name])
                        for name, (index, part) in objectives.items()})
    with tf.device(setup.ps_device):
        if objectives is None:
            return ClassicTowers(losses, average_gradients(tower_grads), update_ops)
        return ClassicTowers(losses, {name: average_gradients([grads[name] for grads in
                                                               tower_grads])
                                      for name in objectives}, update_ops)


def evaluate_checkpoint(build_fn, checkpoint, batches, var_list=None):
    """Restores `checkpoint` into a network and runs it on each of `batches`.

    The network is built in a new graph and run on one CPU with one thread per pool.

    Args:
      build_fn: called once with placeholders structured and shaped as `batches[0]`; builds the
        network in test mode and returns a dict name -> tensor to compute.
      checkpoint: the checkpoint prefix, e.g. '/tmp/train/model.ckpt-1000'.
      batches: a non-empty list of batches (arrays or nested structures of them) of one
        structure, shape and dtype.
      var_list: a function of no arguments, called after `build_fn`, returning the
        `tf.train.Saver` var list (e.g. moving averages restored into the variables); every
        global variable by default.

    Returns:
      A list with, per batch, a dict name -> numpy value.

    Raises:
      TowersError: naming `checkpoint`, when it is missing or does not hold the network's
        variables.
    """
    with Restored(build_fn, checkpoint, batches[0], var_list=var_list,
                  config=_virtual_cpu_setup(1).config) as net:
        return [net.run(batch) for batch in bars.bar(batches, 'evaluation', 'batches')]
