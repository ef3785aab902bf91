"""Towers of a function that trains itself: each tower builds its own train op, as a TF 1.x
Estimator's `model_fn` does, and the towers still make one update.

`parameter_server.build_towers` takes each tower's gradients itself. A `model_fn` computes and
applies its own (clipped, from several optimizers, through a Keras optimizer), so here each
tower's calls of an optimizer's `apply_gradients` are captured instead of applied: the
gradients of the k-th call are averaged over the towers on the parameter device
(`towers.gradients.average_gradients`) and applied once, by tower 0's optimizer, once tower 0's
own train op has run (its batch-norm updates, as every mode of `towers.replication` runs
tower 0's).
This is the classic pattern applied to a `model_fn`, as TF 1.x's `MirroredStrategy` and
`tf.contrib.estimator.replicate_model_fn` applied it.

    def tower_fn(index, shard):                   # builds one tower, returns (result, train_op)
        spec = model_fn(shard, ...)
        return spec, spec.train_op
    built = build_self_training_towers(tower_fn, shards, ['/gpu:0', '/gpu:1'])
    built.train_op                                # the towers' one update

Variables: tower 0 makes them, on the parameter device, under the names a one-device graph
gives them (tower 0 opens no name scope, so a checkpoint moves between one and N devices).
Tower i > 0 builds in name scope 'tower_<i>' and gets tower 0's variable wherever it asks for
one: through `tf.get_variable` (variable-scope reuse), or by creating one (`tf.Variable`, a
Keras layer built anew in each tower), matched by its name less the tower's scope and Keras'
uniquifying suffixes ('tower_1/dense_3/kernel' is 'dense/kernel'), in the order tower 0 made
them. Local variables (metrics' accumulators) stay each tower's own.

Collections: each tower finds only its own losses and update ops in `LOSSES` and `UPDATE_OPS`
(`tf.losses.get_total_loss()` in tower 1 is tower 1's); afterwards the collections hold every
tower's. Summaries of towers i > 0 are dropped, as TF 1.x's replicas past the first wrote none.
"""
import collections
import contextlib
import re

from towers.compat import keras, tf
from towers.devices import assign_to_device
from towers.errors import TowersError
from towers.gradients import average_gradients
from towers.replication.tower import TOWER_NAME

# The optimizers whose `apply_gradients` a tower's train op may call: TF 1.x's and tf-keras'
# (the legacy OptimizerV2, which Keras models compiled in graph mode use).
OPTIMIZER_CLASSES = (tf.train.Optimizer, keras.optimizers.legacy.Optimizer)
# Collections each tower sees only its own part of while it builds.
PER_TOWER_COLLECTIONS = (tf.GraphKeys.LOSSES, tf.GraphKeys.UPDATE_OPS)

Applied = collections.namedtuple('Applied', ['optimizer', 'grads_and_vars', 'args', 'kwargs',
                                             'scope'])
SelfTrained = collections.namedtuple('SelfTrained', ['results', 'train_op', 'applied'])
SelfTrained.__doc__ = """The towers of `build_self_training_towers`.

Attributes:
  results: what `tower_fn` returned for each tower (its first element), in tower order.
  train_op: the one update: tower 0's train op, then the averaged gradients applied.
  applied: per tower, the list of its captured `Applied` calls.
"""

_UNIQUIFIED = re.compile(r'_\d+$')


def canonical_name(name):
    """A variable's name as every tower asks for it: without a leading 'tower_<i>/' and the
    '_<n>' suffixes with which a graph tells apart layers or scopes of the same name."""
    name = re.sub(r'^%s_\d+/' % TOWER_NAME, '', name.split(':')[0])
    return '/'.join(_UNIQUIFIED.sub('', part) for part in name.split('/'))


def _is_local(kwargs):
    collections_ = kwargs.get('collections')
    return bool(collections_) and tf.GraphKeys.GLOBAL_VARIABLES not in collections_


class _VariableSharing:
    """Variable creators: tower 0's records what it makes, tower i's returns tower 0's."""

    def __init__(self):
        self._made = collections.defaultdict(list)

    def recording(self, next_creator, **kwargs):
        variable = next_creator(**kwargs)
        if not _is_local(kwargs):
            self._made[canonical_name(variable.op.name)].append(variable)
        return variable

    def reusing(self, index):
        taken = collections.Counter()

        def reuse(next_creator, **kwargs):
            if _is_local(kwargs):
                return next_creator(**kwargs)
            scope = tf.get_default_graph().get_name_scope()
            name = canonical_name('/'.join(filter(None, [scope, kwargs.get('name')
                                                         or 'Variable'])))
            made = self._made.get(name, [])
            if taken[name] >= len(made):
                raise TowersError('tower %d makes a variable %s that tower 0 did not make: '
                                  'every tower must build the same model' % (index, name))
            taken[name] += 1
            return made[taken[name] - 1]
        return reuse


@contextlib.contextmanager
def _captured_apply_gradients(applied):
    """Within: every optimizer's `apply_gradients` records its call in `applied` and returns
    a no-op in place of the update."""
    originals = {cls: cls.__dict__['apply_gradients'] for cls in OPTIMIZER_CLASSES}

    def capture(optimizer, grads_and_vars, *args, **kwargs):
        applied.append(Applied(optimizer, list(grads_and_vars), args, kwargs,
                               tf.get_default_graph().get_name_scope()))
        return tf.no_op(name='captured_apply_gradients')
    try:
        for cls in OPTIMIZER_CLASSES:
            cls.apply_gradients = capture
        yield
    finally:
        for cls, original in originals.items():
            cls.apply_gradients = original


@contextlib.contextmanager
def _own_collections(graph, kept):
    """Within: the collections of `PER_TOWER_COLLECTIONS` hold only what is added inside;
    that is appended to `kept` (name -> list) and the collections hold all of `kept` after."""
    for name in PER_TOWER_COLLECTIONS:
        del graph.get_collection_ref(name)[:]
    try:
        yield
    finally:
        for name in PER_TOWER_COLLECTIONS:
            ref = graph.get_collection_ref(name)
            kept[name].extend(ref)
            ref[:] = kept[name]


def _after(grad):
    """`grad` through an identity made in the current control dependencies."""
    if isinstance(grad, tf.IndexedSlices):
        return tf.IndexedSlices(tf.identity(grad.values), grad.indices, grad.dense_shape)
    return tf.identity(grad)


def _scaled(grad, factor):
    if isinstance(grad, tf.IndexedSlices):
        return tf.IndexedSlices(grad.values * factor, grad.indices, grad.dense_shape)
    return grad * factor


def _same(optimizer):
    return optimizer


def build_self_training_towers(tower_fn, shards, devices, ps_device='/cpu:0',
                               sum_gradients=False, wrap_optimizer=None):
    """Builds `tower_fn` once per device and one update from the gradients they apply.

    Args:
      tower_fn: called as `tower_fn(index, shard)`; builds the model of one tower on `shard`
        with its own train op, whose updates go through optimizers' `apply_gradients`
        (`minimize` included), and returns (result, train_op).
      shards: one input per tower, each handed to `tower_fn` as it is.
      devices: one device string per tower.
      ps_device: where the variables live and the gradients are averaged and applied.
      sum_gradients: apply the sum of the towers' gradients instead of their mean (the
        towers' losses are sums, not means, over the global batch).
      wrap_optimizer: None, or a function optimizer -> the optimizer that applies the update
        (a cluster worker's `wrap_optimizer`: synchronous replicas across workers).

    Returns:
      A `SelfTrained`.

    Raises:
      TowersError: no device; a tower applies no gradients, or another number of times than
        tower 0; a tower makes a variable tower 0 did not make; the towers' gradients differ
        in their variables.
    """
    if not devices or len(shards) != len(devices):
        raise TowersError('build_self_training_towers needs one shard per device, got %d '
                          'shard(s) for %d device(s)' % (len(shards), len(devices)))
    graph = tf.get_default_graph()
    sharing = _VariableSharing()
    kept = {name: list(graph.get_collection(name)) for name in PER_TOWER_COLLECTIONS}
    results, train_ops, applied = [], [], []
    for index, (device, shard) in enumerate(zip(devices, shards)):
        calls = []
        summaries = list(graph.get_collection(tf.GraphKeys.SUMMARIES))
        scope = contextlib.nullcontext() if index == 0 else tf.name_scope(
            '%s_%d' % (TOWER_NAME, index))
        with tf.device(assign_to_device(device, ps_device)), scope, \
                tf.variable_scope(tf.get_variable_scope(), reuse=True if index else None), \
                tf.variable_creator_scope(sharing.reusing(index) if index
                                          else sharing.recording), \
                _own_collections(graph, kept), _captured_apply_gradients(calls):
            result, train_op = tower_fn(index, shard)
        if index:
            graph.get_collection_ref(tf.GraphKeys.SUMMARIES)[:] = summaries
        if not calls:
            raise TowersError('tower %d applied no gradients: its train op must update the '
                              "variables through an optimizer's apply_gradients (or minimize)"
                              % index)
        if len(calls) != len(applied[0] if applied else calls):
            raise TowersError('tower %d applied gradients %d times, tower 0 %d times: every '
                              'tower must build the same train op'
                              % (index, len(calls), len(applied[0])))
        results.append(result)
        train_ops.append(train_op)
        applied.append(calls)
    with tf.device(ps_device):
        averaged = []
        for position, first in enumerate(applied[0]):
            with tf.name_scope('average_gradients'):
                grads = average_gradients([calls[position].grads_and_vars
                                           for calls in applied])
                if sum_gradients and len(devices) > 1:
                    grads = [(_scaled(grad, len(devices)), var) for grad, var in grads]
                # The update reads the gradients only after tower 0's train op; the optimizer's
                # own ops (a synchronous optimizer's aggregation, run by its queue runner) stay
                # free of it.
                with tf.control_dependencies([train_ops[0]] if train_ops[0] is not None
                                             else []):
                    grads = [(_after(grad), var) for grad, var in grads]
                averaged.append(grads)
        updates = []
        for first, grads in zip(applied[0], averaged):
            # In tower 0's scope of the call, as TF 1.x made the optimizer's own variables
            # there (Keras's 'training/beta1_power').
            with tf.name_scope(first.scope + '/' if first.scope else None):
                updates.append((wrap_optimizer or _same)(first.optimizer).apply_gradients(
                    grads, *first.args, **first.kwargs))
        train_op = tf.group(*updates, name='train_op')
    return SelfTrained(results, train_op, applied)
