"""The parameter-server mode: one copy of the model per device, one shared set of variables.

`build_towers` is the loop of the TF1 multi-GPU tutorials made reusable: for each device it
builds the model on that device's shard of the batch under `assign_to_device`, in name scope
`tower_<i>`, in one `variable_scope` whose variables are created by tower 0 and reused by the
others; it then averages each objective's gradients over the towers on the parameter device.

Batch-norm statistics: the `UPDATE_OPS` of tower 0 alone are run with each train op (as
tf-slim's model_deploy does), so the moving mean and variance follow tower 0's shard of the
batch. The other towers' update ops exist in the graph (in `Tower.update_ops`) but are not run.
An objective limited to a variable scope runs only the update ops under that scope, so that
training one part of a model leaves the statistics of the others as they are.
"""
from towers.compat import tf
from towers.devices import assign_to_device
from towers.errors import TowersError
from towers.gradients import average_gradients
from towers.replication.tower import TOTAL, TOWER_NAME, Replicated, build_tower, split_batch


def build_towers(tower_fn, inputs, devices, optimizer, objectives=None, ps_device='/cpu:0'):
    """Builds `tower_fn` once per device and averages its gradients.

    Args:
      tower_fn: called as `tower_fn(shard)` once per tower, where `shard` has the structure of
        `inputs`. It builds the model for that shard, adds its losses to the `losses`
        collection (`tf.add_to_collection('losses', ...)` or `tf.losses.*`), and returns a dict
        of named tensors (or None). Variables must be made with `tf.get_variable` (directly or
        through layers) so that towers 1..N-1 reuse those of tower 0.
      inputs: the global batch, a tensor or nested structure of tensors; split into
        `len(devices)` equal shards.
      devices: one device string per tower.
      optimizer: a `tf.train.Optimizer`; its `compute_gradients` runs in each tower. Or a
        dict objective name -> optimizer, when each objective has its own (several models
        trained side by side, see `towers.training.side_by_side`).
      objectives: dict name -> `Objective`; the default is one objective 'total' (the tower's
        total loss over every trainable variable). Several objectives share one set of towers.
      ps_device: where variables live and gradients are averaged: a device string, or a
        device function (a cluster worker's `VariablePlacement`).

    Returns:
      A `Replicated`.
    """
    objectives = dict(objectives or TOTAL)
    if not devices:
        raise TowersError('build_towers needs at least one device')
    with tf.device(ps_device):
        shards = split_batch(inputs, len(devices))
    towers = []
    with tf.variable_scope(tf.get_variable_scope()):
        for i, device in enumerate(devices):
            with tf.device(assign_to_device(device, ps_device)), \
                    tf.name_scope('%s_%d' % (TOWER_NAME, i)) as scope:
                towers.append(build_tower(i, device, scope, tower_fn, shards[i], optimizer,
                                          objectives))
            tf.get_variable_scope().reuse_variables()
    with tf.device(ps_device):
        grads = {}
        for name in objectives:
            with tf.name_scope('average_%s' % name):
                grads[name] = average_gradients([t.grads[name] for t in towers])
    summaries = [s for t in towers for s in t.summaries]
    return Replicated(towers, grads, towers[0].update_ops, summaries, optimizer, ps_device,
                      objectives)
