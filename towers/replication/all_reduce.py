"""The replicated mode: a copy of the variables on every tower device, gradients all-reduced.

tf_cnn_benchmarks' `--variable_update=replicated`, beside the parameter-server towers of
`towers.replication.parameter_server`: no device holds the variables for the others; each tower keeps its own copy,
computes its gradients with respect to it, the towers all-reduce the gradients (each gets the
mean) and each applies the same update to its own copy.

    replicated = build_replicated(tower_fn, batch, setup.tower_devices, optimizer)
    train_op = replicated.train_op('total', global_step)

Variables. Tower 0 makes the model's variables under their plain names (`conv1/weights`), on
its own device, exactly as the parameter-server mode makes them on the parameter device. Tower
i > 0 gets, wherever the model asks `tf.get_variable` for a trainable variable, its copy
`tower_<i>/conv1/weights` on its own device: a local variable, not trainable, not saved. So
`tf.trainable_variables()` (the objectives, a recipe's moving averages and summaries) and every
checkpoint hold the names of the parameter-server mode, and a run can switch modes when it
resumes: the copies, and the optimizer's slots of the copies, are local variables, set from
tower 0's after the global variables are initialised or restored. Non-trainable variables
(batch-norm moving statistics) are not copied: tower 0's update them, as in the
parameter-server mode, and every tower reads tower 0's.

All-reduce. For each variable, `CollectiveReduce` (TensorFlow's collective all-reduce) over the
towers' devices gives each the mean of the towers' gradients: with NCCL when every tower has a
GPU of its own, over a ring otherwise (virtual CPU devices, logical GPUs sharing a GPU). Sparse
gradients are reduced dense.

Update. One `apply_gradients` of every copy: each copy is updated on its own device with the
same gradient, so the copies stay equal; the optimizer keeps slots per copy, advances its own
variables (Adam's powers) once, and increments the global step once.

Models must make their variables with `tf.get_variable` (directly, through tf-slim or the
legacy `tf.layers`); a Keras model shared by object between the towers makes its variables
once and is refused here (use the parameter-server mode). Training across processes is the
parameter-server mode's.
"""
import itertools
import weakref

from towers.compat import tf
from towers.errors import TowersError
from towers.gradients import gradients_per_variable
from towers.replication.tower import (TOTAL, TOWER_NAME, Replicated, build_tower,
                                       objective_optimizer, split_batch)

# Collective ops find their peers by group and instance keys, unique in a session's graph.
_COLLECTIVE_KEYS = weakref.WeakKeyDictionary()


def _collective_key():
    return next(_COLLECTIVE_KEYS.setdefault(tf.get_default_graph(), itertools.count(1)))


def communication(devices, physical_gpus=None):
    """How the towers' gradients are all-reduced: 'nccl' when every device is a GPU of its
    own, else 'ring'.

    Args:
      devices: the tower devices.
      physical_gpus: the machine's GPUs; by default, those TensorFlow sees.
    """
    if physical_gpus is None:
        physical_gpus = len(tf.config.list_physical_devices('GPU'))
    on_gpus = all(tf.DeviceSpec.from_string(d).device_type in ('GPU', 'gpu') for d in devices)
    return 'nccl' if on_gpus and len(devices) <= physical_gpus else 'ring'


def all_reduce_mean(tensors, devices, group_key, hint):
    """The mean of `tensors`, one per device, on every device.

    Args:
      tensors: one tensor (or `tf.IndexedSlices`, made dense) per device, of the same shape.
      devices: the device of each.
      group_key: the collective group of these devices.
      hint: 'nccl' or 'ring', as `communication` chooses.

    Returns:
      A list with the mean on each device, in the order of `devices`. Each waits for the
      collective op of every device, so that any of them can be fetched alone (a summary of
      tower 0's gradients): a collective op run without its peers would wait for them forever.
    """
    if len(tensors) == 1:
        return [tf.convert_to_tensor(tensors[0])]
    instance_key = _collective_key()
    means = []
    for tensor, device in zip(tensors, devices):
        with tf.device(device):
            means.append(tf.raw_ops.CollectiveReduce(
                input=tf.convert_to_tensor(tensor), group_size=len(devices),
                group_key=group_key, instance_key=instance_key, merge_op='Add',
                final_op='Div', subdiv_offsets=[0], communication_hint=hint))
    complete = []
    for mean, device in zip(means, devices):
        with tf.device(device), tf.control_dependencies(means):
            complete.append(tf.identity(mean))
    return complete


class _Copier:
    """The custom getter of tower i > 0: its copy of each trainable variable of tower 0.

    Attributes:
      copies: dict tower 0's variable -> this tower's copy.
      regularization_losses: the regularisers of the variables applied to the copies.
    """

    def __init__(self, index):
        self.index = index
        self.copies = {}
        self.regularization_losses = []

    def __call__(self, getter, *args, **kwargs):
        primary = getter(*args, **kwargs)
        if not any(primary is v for v in tf.trainable_variables()):
            return primary
        if primary not in self.copies:
            copy = self.copies[primary] = self._copy(primary)
            regularizer = kwargs.get('regularizer')
            if regularizer:
                with tf.name_scope(copy.op.name + '/Regularizer/'):
                    loss = regularizer(copy)
                if loss is not None:
                    self.regularization_losses.append(loss)
        return self.copies[primary]

    def _copy(self, primary):
        # Named after tower 0's variable, whatever name scope the model is in (a scope ending
        # in '/' is entered as it is); made in the tower's device scope.
        scope, _, name = primary.op.name.rpartition('/')
        with tf.name_scope('%s_%d/%s' % (TOWER_NAME, self.index, scope + '/' if scope else '')):
            return tf.Variable(primary.value(), trainable=False,
                               collections=[tf.GraphKeys.LOCAL_VARIABLES], name=name,
                               use_resource=primary.op.type == 'VarHandleOp')


class AllReduced(Replicated):
    """The result of `build_replicated`: a `towers.Replicated` whose towers each update their
    own copy of the variables.

    Attributes (besides those of `towers.Replicated`):
      grads: dict objective name -> tower 0's all-reduced (mean gradient, variable) pairs, the
        variables under their plain names (as the parameter-server mode's averaged ones).
      tower_grads: dict objective name -> for each tower, its (mean gradient, its copy) pairs.
      copies: for each tower, dict tower 0's variable -> that tower's copy (empty for tower 0).
    """

    def __new__(cls, replicated, tower_grads, copies):
        self = super().__new__(cls, *replicated)
        self.tower_grads = tower_grads
        self.copies = copies
        return self

    def gradients_to_apply(self, objective):
        """Every tower's (mean gradient, copy) pairs: one update of all the copies."""
        return [pair for tower in self.tower_grads[objective] for pair in tower]

    def train_op(self, objective='total', global_step=None, extra_ops=()):
        """As `towers.Replicated.train_op`, updating every copy; the optimizer's slots of the
        copies become local variables set from tower 0's slots (see the module's doc)."""
        op = super().train_op(objective, global_step, extra_ops)
        self._localise_slots_of_copies(objective_optimizer(self.optimizer, objective))
        return op

    def _localise_slots_of_copies(self, optimizer):
        global_variables = tf.get_collection_ref(tf.GraphKeys.GLOBAL_VARIABLES)
        pairs = []
        for copies in self.copies[1:]:
            for primary, copy in copies.items():
                for name in optimizer.get_slot_names():
                    slot = optimizer.get_slot(copy, name)
                    if slot is not None and any(slot is v for v in global_variables):
                        global_variables[:] = [v for v in global_variables if v is not slot]
                        tf.add_to_collection(tf.GraphKeys.LOCAL_VARIABLES, slot)
                        pairs.append((slot, optimizer.get_slot(primary, name)))
        if not pairs:
            return
        # Local variables are initialised together, after the global ones; a marker variable
        # whose initial value waits for these assignments puts them in that initialisation,
        # each after the initialiser of the slot it overwrites.
        with tf.name_scope('synchronise_slots'):
            assignments = []
            for slot, source in pairs:
                with tf.control_dependencies([slot.initializer]):
                    assignments.append(tf.assign(slot, source))
            with tf.control_dependencies(assignments):
                done = tf.constant(True)
            tf.Variable(done, trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES],
                        name='done')


def build_replicated(tower_fn, inputs, devices, optimizer, objectives=None, ps_device='/cpu:0'):
    """Builds `tower_fn` once per device, each on its own copy of the variables, and
    all-reduces the gradients.

    Args:
      tower_fn, inputs, devices, optimizer, objectives: as for `towers.build_towers`.
      ps_device: where the global batch is split and the global step is incremented.

    Returns:
      An `AllReduced`.

    Raises:
      TowersError: as `towers.build_towers`, or a tower other than tower 0 computes with tower
        0's variables themselves (a model that shares them by object, not by name).
    """
    objectives = dict(objectives or TOTAL)
    if not devices:
        raise TowersError('build_replicated needs at least one device')
    with tf.device(ps_device):
        shards = split_batch(inputs, len(devices))
    towers, copies = [], []
    with tf.variable_scope(tf.get_variable_scope()):
        for i, device in enumerate(devices):
            copier = _Copier(i) if i else None
            with tf.device(device), tf.name_scope('%s_%d' % (TOWER_NAME, i)) as scope, \
                    tf.variable_scope(tf.get_variable_scope(), custom_getter=copier,
                                      auxiliary_name_scope=False):
                own = {'copies': copier.copies,
                       'regularization_losses': lambda: copier.regularization_losses} if i else {}
                towers.append(build_tower(i, device, scope, tower_fn, shards[i], optimizer,
                                          objectives, **own))
            if copier:
                _check_copied(towers[-1], copier.copies)
            copies.append(copier.copies if copier else {})
            tf.get_variable_scope().reuse_variables()
    primary_of = {copy: primary for tower in copies for primary, copy in tower.items()}
    group_key = _collective_key()
    hint = communication(devices)
    tower_grads = {}
    for name in objectives:
        tower_grads[name] = [[] for _ in devices]
        per_variable = gradients_per_variable(
            [[(g, primary_of.get(v, v)) for g, v in t.grads[name]] for t in towers])
        with tf.name_scope('all_reduce_%s' % name):
            for grads, primary in per_variable:
                means = all_reduce_mean(grads, devices, group_key, hint)
                for i, mean in enumerate(means):
                    tower_grads[name][i].append((mean, copies[i].get(primary, primary)))
    summaries = [s for t in towers for s in t.summaries]
    replicated = Replicated(towers, {name: tower_grads[name][0] for name in objectives},
                            towers[0].update_ops, summaries, optimizer, ps_device, objectives)
    return AllReduced(replicated, tower_grads, copies)


def _check_copied(tower, copies):
    copied = set(copies.values())
    for pairs in tower.grads.values():
        for grad, var in pairs:
            if grad is not None and var not in copied:
                raise TowersError(
                    'tower %d computes with %s itself, not with a copy of it: the replicated '
                    'mode copies the variables a model makes with tf.get_variable (variable '
                    'scopes, tf-slim); a model that shares its variables between the towers by '
                    'object (a Keras model) trains with --variable_update parameter_server'
                    % (tower.index, var.op.name))
