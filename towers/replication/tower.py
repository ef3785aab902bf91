"""One tower and what every replication mode shares: objectives, shards, the tower's build.

A tower is one copy of the model on one device, built on its shard of the global batch
(`split_batch`) by `build_tower`: the model's tower function, its total loss, summaries and
each objective's gradients. Every mode (`towers.replication.parameter_server`,
`towers.replication.all_reduce`) builds its towers with it and returns a `Replicated`, whose
`train_op` applies an objective's gradients once per step.
"""
import collections
import re

from towers.compat import tf
from towers.errors import TowersError

TOWER_NAME = 'tower'


class Objective(collections.namedtuple('Objective', ['loss', 'scope'])):
    """What one train op minimises and which variables it may change.

    Attributes:
      loss: None for each tower's total loss (the sum of its `losses` collection and the
        regularisation losses), or the key of a scalar in the dict the tower function returns.
      scope: None for every trainable variable, or a variable scope name: only the trainable
        variables under `scope/` get gradients.
    """
    __slots__ = ()

    def __new__(cls, loss=None, scope=None):
        return super().__new__(cls, loss, scope)

    def variables(self):
        """The trainable variables of the default graph that this objective may change."""
        variables = tf.trainable_variables()
        if self.scope is None:
            return variables
        prefix = self.scope.rstrip('/') + '/'
        return [v for v in variables if v.op.name.startswith(prefix)]


TOTAL = {'total': Objective()}


Tower = collections.namedtuple(
    'Tower', ['index', 'device', 'name_scope', 'outputs', 'total_loss', 'losses',
              'grads', 'update_ops', 'summaries'])
Tower.__doc__ = """One replica of the model.

Attributes:
  index: tower number i.
  device: the device of its compute ops.
  name_scope: 'tower_<i>/'.
  outputs: the dict returned by the tower function.
  total_loss: scalar, the sum of `losses`.
  losses: the loss tensors of this tower's `losses` collection plus the regularisation losses.
  grads: dict objective name -> list of (gradient, variable) pairs of this tower.
  update_ops: this tower's `UPDATE_OPS` (batch-norm moving statistics).
  summaries: this tower's summaries.
"""


class Replicated(collections.namedtuple(
        'Replicated', ['towers', 'grads', 'update_ops', 'summaries', 'optimizer',
                       'ps_device', 'objectives'])):
    """The result of `build_towers`.

    Attributes:
      towers: list of `Tower`.
      grads: dict objective name -> averaged list of (gradient, variable) pairs.
      update_ops: tower 0's `UPDATE_OPS`, those an objective over every variable runs.
      summaries: the summaries of every tower.
      optimizer: the optimizer that computed the gradients and applies them, or a dict
        objective name -> the optimizer of that objective.
      ps_device: where the averaging happened and the update is applied.
      objectives: dict objective name -> `Objective`.
    """
    __slots__ = ()

    def objective_update_ops(self, objective):
        """Tower 0's `UPDATE_OPS` that a train op of `objective` runs: those built under the
        objective's variable scope, or all of them for an objective without scope."""
        scope = self.objectives[objective].scope
        if scope is None:
            return list(self.update_ops)
        prefix = self.towers[0].name_scope + scope.rstrip('/') + '/'
        return [op for op in self.update_ops if op.name.startswith(prefix)]

    def train_op(self, objective='total', global_step=None, extra_ops=()):
        """Applies the averaged gradients of `objective` once per run.

        Args:
          objective: a name from the `objectives` given to `build_towers`.
          global_step: incremented by each update, or None.
          extra_ops: ops to run with the update (e.g. moving averages of the weights), before
            it: they read the variables and the step as the step found them. (The multi-GPU
            CIFAR-10 tutorial grouped its moving averages with the update in no order, so they
            read a weight while it was being written and differed in their last bits from run
            to run; they had mostly read it before.)

        Returns:
          An op that applies the update after `objective_update_ops(objective)` and
          `extra_ops`.
        """
        if objective not in self.grads:
            raise TowersError('no objective named %r; the towers were built for %s'
                              % (objective, sorted(self.grads)))
        with tf.device(self.ps_device):
            with tf.control_dependencies(self.objective_update_ops(objective)
                                         + list(extra_ops)):
                apply_op = objective_optimizer(self.optimizer, objective).apply_gradients(
                    self.gradients_to_apply(objective), global_step=global_step)
            return tf.group(apply_op, *extra_ops, name='train_op_%s' % objective)

    def gradients_to_apply(self, objective):
        """The (gradient, variable) pairs one update of `objective` applies: the averaged
        gradients of the shared variables."""
        return self.grads[objective]

    def objective_loss(self, objective='total', tower=-1):
        """The loss `objective` minimises in one tower (the last by default): the tower's
        total loss, or the output the objective names."""
        key = self.objectives[objective].loss
        chosen = self.towers[tower]
        return chosen.total_loss if key is None else chosen.outputs[key]

    @property
    def tower_losses(self):
        """List of each tower's total loss."""
        return [t.total_loss for t in self.towers]


def objective_optimizer(optimizer, objective):
    """The optimizer of `objective`: `optimizer` itself, or its entry when it is a dict."""
    return optimizer[objective] if isinstance(optimizer, dict) else optimizer


def split_batch(inputs, num_towers):
    """Splits every tensor of `inputs` along its first axis into `num_towers` equal shards.

    Args:
      inputs: a tensor or a nested structure (list, tuple, dict) of tensors whose first
        dimension is the global batch.
      num_towers: N.

    Returns:
      A list of N structures like `inputs`; shard i holds rows [i*B, (i+1)*B) of each tensor.

    Raises:
      TowersError: a tensor's batch size does not divide by N.
    """
    def _split(tensor):
        tensor = tf.convert_to_tensor(tensor)
        if tensor.shape.ndims == 0:
            raise TowersError('cannot split scalar input %s between towers' % tensor.name)
        batch = tensor.shape.as_list()[0]
        if batch is not None:
            if batch % num_towers:
                raise TowersError(
                    'the global batch of %s has %d rows, which does not divide into %d towers; '
                    'use a global batch that is a multiple of the number of towers'
                    % (tensor.name, batch, num_towers))
            return tf.split(tensor, num_towers, axis=0)
        check = tf.debugging.assert_equal(
            tf.shape(tensor)[0] % num_towers, 0,
            message='the global batch of %s does not divide into %d towers'
            % (tensor.name, num_towers))
        with tf.control_dependencies([check]):
            return tf.split(tensor, num_towers, axis=0)

    flat = [_split(t) for t in tf.nest.flatten(inputs)]
    return [tf.nest.pack_sequence_as(inputs, [shards[i] for shards in flat])
            for i in range(num_towers)]


def build_tower(index, device, scope, tower_fn, shard, optimizer, objectives, copies=None,
                regularization_losses=tf.losses.get_regularization_losses):
    """Builds tower `index` in the current device and name scope: `tower_fn(shard)`, its total
    loss, summaries and each objective's gradients.

    Args:
      index, device, scope: the tower's number, device and name scope ('tower_<i>/').
      tower_fn, shard, optimizer, objectives: as for `build_towers` (`shard` is this tower's).
      copies: dict variable -> this tower's copy of it, whose gradient the tower takes in its
        place (the replicated mode, `towers.replication.all_reduce`); None: the variables themselves.
      regularization_losses: a function of no arguments returning this tower's regularisation
        losses; by default the graph's, made once with the variables inside tower 0.

    Returns:
      A `Tower`.
    """
    outputs = tower_fn(shard) or {}
    if not isinstance(outputs, dict):
        raise TowersError('the tower function must return a dict of named tensors or None, '
                          'got %s' % type(outputs).__name__)
    losses = tf.get_collection(tf.GraphKeys.LOSSES, scope)
    # Regularisation losses are made once, with the variables, inside tower 0; every tower
    # counts them so that the averaged gradient carries their full weight.
    losses += regularization_losses()
    if not losses:
        raise TowersError('tower %d added no loss to the `losses` collection' % index)
    total_loss = tf.add_n(losses, name='total_loss')
    for loss in losses + [total_loss]:
        tf.summary.scalar(re.sub('%s_[0-9]*/' % TOWER_NAME, '', loss.op.name), loss)
    grads = {}
    for name, objective in objectives.items():
        loss = total_loss if objective.loss is None else outputs.get(objective.loss)
        if loss is None:
            raise TowersError('objective %r asks for loss %r, but the tower function returned '
                              'only %s' % (name, objective.loss, sorted(outputs)))
        var_list = objective.variables()
        if not var_list:
            raise TowersError('objective %r has no trainable variables under scope %r'
                              % (name, objective.scope))
        if copies is not None:
            var_list = [copies.get(v, v) for v in var_list]
        grads[name] = objective_optimizer(optimizer, name).compute_gradients(
            loss, var_list=var_list)
    return Tower(index, device, scope, outputs, total_loss, losses, grads,
                 tf.get_collection(tf.GraphKeys.UPDATE_OPS, scope),
                 tf.get_collection(tf.GraphKeys.SUMMARIES, scope))

