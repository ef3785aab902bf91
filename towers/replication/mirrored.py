"""TensorFlow's `MirroredStrategy` as a replication mode beside the towers, to compare them.

`towers.replication.parameter_server` builds one tower per device and averages their gradients on the parameter
device; this module trains the same tower function with `tf.distribute.MirroredStrategy` in
graph mode, which keeps a copy of every variable on every device and all-reduces the gradients:

    strategy = tf.distribute.MirroredStrategy(setup.tower_devices)
    with strategy.scope():
        optimizer = tf.train.GradientDescentOptimizer(0.1)
        train_op, replica_losses = mirrored_train_op(tower_fn, batch, optimizer)
"""
from towers.compat import tf
from towers.errors import TowersError
from towers.replication.tower import Objective, split_batch


def mirrored_train_op(tower_fn, inputs, optimizer, global_step=None, ps_device='/cpu:0',
                      objective=Objective()):
    """One training step of `tower_fn` replicated by the `tf.distribute` strategy in scope.

    Called inside `tf.distribute.MirroredStrategy(devices).scope()`, this is how that strategy
    trains the model `build_towers` replicates, for comparing the two: replica i trains on
    shard i of `inputs` (the same shards as tower i), minimises its loss divided by the
    number of replicas, and the strategy sums the replicas' gradients, so that the update
    equals the towers' averaged gradient. Variables made by `tower_fn` are mirrored on every
    device. Outside a strategy's scope it builds a plain single-device step.

    Batch-norm moving statistics are not updated (their `UPDATE_OPS` are built, never run):
    under the strategy each update is a cross-replica mean, a synchronisation per statistic
    that the towers, which update from tower 0 alone, do not pay; the comparison stays on the
    gradients and the update.

    Args:
      tower_fn: as for `build_towers`: builds the model of one shard, adds its losses to the
        `losses` collection, returns a dict of tensors or None.
      inputs: the global batch, a tensor or nested structure of tensors, split into one
        shard per replica on `ps_device`.
      optimizer: a `tf.train.Optimizer` made in the strategy's scope.
      global_step: incremented once per step, or None; made in the strategy's scope.
      ps_device: where the global batch is split.
      objective: a `towers.Objective`: the loss each replica minimises (its total loss by
        default) and the variables it trains (every trainable variable by default), as the
        towers' train op of that objective does.

    Returns:
      train_op: the op of one step.
      replica_losses: list of each replica's total loss (unscaled), scalars.

    Raises:
      TowersError: a replica added no loss, the tower function returned no output named by
        `objective.loss`, or the graph has regularisation losses (the strategy's replicas
        would not each differentiate them; add them to `losses` instead).
    """
    strategy = tf.distribute.get_strategy()
    num_replicas = strategy.num_replicas_in_sync
    with tf.device(ps_device):
        shards = split_batch(inputs, num_replicas)

    def replica_step():
        replica = tf.get_static_value(tf.distribute.get_replica_context().replica_id_in_sync_group)
        # Replica 0 builds in the outer name scope; the scope below keeps its losses apart from
        # those of the other replicas ('replica_<i>/...').
        with tf.name_scope('mirrored') as scope:
            outputs = tower_fn(shards[replica]) or {}
            losses = tf.get_collection(tf.GraphKeys.LOSSES, scope)
        if not losses:
            raise TowersError('replica %d added no loss to the `losses` collection' % replica)
        if tf.losses.get_regularization_losses():
            raise TowersError('mirrored_train_op cannot use regularisation losses (%s): add '
                              'weight decay to the `losses` collection in the tower function'
                              % tf.losses.get_regularization_losses()[0].name)
        total_loss = tf.add_n(losses, name='total_loss')
        if objective.loss is None:
            loss = total_loss
        elif objective.loss in outputs:
            loss = outputs[objective.loss]
        else:
            raise TowersError('the objective asks for loss %r, but the tower function returned '
                              'only %s' % (objective.loss, sorted(outputs)))
        grads = optimizer.compute_gradients(loss / num_replicas, var_list=objective.variables())
        return optimizer.apply_gradients(grads, global_step=global_step), total_loss

    step, total_loss = strategy.run(replica_step)
    return (tf.group(strategy.experimental_local_results(step), name='mirrored_train_op'),
            list(strategy.experimental_local_results(total_loss)))
