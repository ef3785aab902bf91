"""An Estimator's training graph on several devices: `RunConfig(train_distribute=...)`.

As TF 1.12-1.15's Estimator ran a `model_fn` under a `MirroredStrategy`: the `input_fn`'s
`Dataset` gives each replica its own batch (its batch size is the batch of one replica, the
global batch is N times it); the `model_fn` runs once per device in TRAIN mode, on this
project's towers (`towers.replication.captured`: one set of variables on the CPU, each
replica's `apply_gradients` captured, their gradients averaged, one update after replica 0's
train op); replica 0's hooks, scaffold and summaries are the run's, and the loss the run logs
and writes is the mean of the replicas' losses. That is TF 1.x's for losses of the default
reductions (its v1 optimizers scaled each replica's loss by 1/N and summed the gradients, and
it reported the mean); a program whose losses use `Reduction.SUM` saw the sums of the losses
and gradients there, and sees their means here. Batch-norm moving statistics follow replica
0's batch (TF 1.x kept one copy per replica and saved their mean).
"""
from towers.compat import tf
from towers.errors import TowersError
from towers.legacy.estimator import calls
from towers.legacy.estimator.spec import EstimatorError, ModeKeys
from towers.replication.captured import build_self_training_towers


def training_spec(call_model_fn, input_fn, params, config, placement):
    """Builds the training graph of one replica per device in the default graph.

    Args:
      call_model_fn: (features, labels, mode) -> the `model_fn`'s `EstimatorSpec`.
      input_fn, params, config: the program's `input_fn` and what it is called with.
      placement: a `cluster.Placement`: the replicas' devices, where the variables live, and
        the wrapper of the optimizer that applies the update (a cluster's synchronous one).

    Returns:
      (spec, input hooks, examples per step): replica 0's `EstimatorSpec` whose train op is
      the replicas' one update and whose loss is the mean of theirs.

    Raises:
      EstimatorError: the `input_fn` returns no `Dataset`; the replicas' train ops cannot be
        replicated (no `apply_gradients`, different models).
    """
    devices = placement.replica_devices
    batches, hooks = calls.call_input_fn(input_fn, ModeKeys.TRAIN, params, config,
                                         num_replicas=len(devices))

    def replica(index, batch):
        spec = call_model_fn(batch[0], batch[1], ModeKeys.TRAIN)
        return spec, spec.train_op

    try:
        built = build_self_training_towers(replica, batches, devices, placement.ps_device,
                                           wrap_optimizer=placement.wrap_optimizer)
    except TowersError as err:
        raise EstimatorError('train_distribute over %s: %s' % (', '.join(devices), err)) from None
    specs = built.results
    with tf.name_scope('replicas'):
        loss = tf.add_n([spec.loss for spec in specs]) / len(specs)
    examples = [calls.batch_size(features) for features, _ in batches]
    per_step = None if None in examples else sum(examples)
    return specs[0]._replace(train_op=built.train_op, loss=loss), hooks, per_step


def evaluation_input(input_fn, params, config, num_replicas):
    """The input of an evaluation under `RunConfig(eval_distribute=...)`: each replica's batch
    (the `Dataset`'s next element, as in training), joined into one batch.

    The `model_fn` then evaluates them in one network: its metrics are those of every
    replica's examples, as TF 1.x's summed its replicas' metric variables, without two
    replicas updating one metric variable at once.

    Returns:
      (features, labels, hooks), as `calls.call_input_fn` returns them.
    """
    batches, hooks = calls.call_input_fn(input_fn, ModeKeys.EVAL, params, config,
                                         num_replicas=num_replicas)
    with tf.device('/cpu:0'), tf.name_scope('replica_batches'):
        features = _joined([features for features, _ in batches])
        labels = None if batches[0][1] is None else _joined([labels for _, labels in batches])
    return features, labels, hooks


def _joined(structures):
    def join(*parts):
        if isinstance(parts[0], tf.SparseTensor):
            return tf.sparse.concat(0, list(parts))
        return tf.concat(parts, axis=0)
    return tf.nest.map_structure(join, *structures)
