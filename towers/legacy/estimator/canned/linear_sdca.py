"""TF 1.15's `tf.estimator.experimental.LinearSDCA`: the linear classifier (two classes,
'logistic_loss') and regressor (one label, 'squared_loss') trained by stochastic dual
coordinate ascent on TensorFlow's own kernels (`SdcaFprint`, `SdcaOptimizerV2`, a dense hash
table of each example's dual state).

    optimizer = LinearSDCA(example_id_column='example_id', symmetric_l2_regularization=10.)
    LinearClassifier(columns, weight_column='w', optimizer=optimizer)

Each step solves the batch's duals against 'unshrunk' copies of the weights (variables named
'<weights' op name>_unshrunk', made in the model's name scope: 'linear/linear/linear_model/x/
weights/part_0_unshrunk' for the v1 classes, 'linear/linear_model/x/weights_unshrunk' for the
V2), then a chief hook copies them into the model's weights, shrunk by l1/l2 when l1 > 0. The
example states are checkpointed as 'ShardedMutableHashTable-<i>-of-<n>-{keys,values}'. The
kernel visits a batch's examples in an order of its own random choosing, so only batches of
one example train alike from run to run.
"""
import collections

from towers.compat import internal, tf
from towers.legacy.estimator.canned import head as head_lib
from towers.legacy.estimator.spec import EstimatorError, ModeKeys

_fc = internal('feature_column.feature_column_v2')
_TABLE = 'ShardedMutableHashTable'
# An example's state: its dual, primal loss, dual loss and weight.
_STATE_SIZE = 4

# A categorical column's ids of one batch, each (example, id) once: example rows [n] int64,
# feature ids [n] int64, their summed weights [n] float32.
SparseFeature = collections.namedtuple('SparseFeature',
                                       ['example_indices', 'feature_indices', 'feature_values'])


class LinearSDCA:
    """TF 1.15's `tf.estimator.experimental.LinearSDCA`: the optimizer argument that trains a
    `LinearClassifier` (two classes) or `LinearRegressor` (one label) by SDCA.

    Args:
      example_id_column: the feature key of each example's unique id (a string [batch]).
      num_loss_partitions: how many workers share the loss.
      num_table_shards: shards of the example-state table (None: 1).
      symmetric_l1_regularization: float >= 0.
      symmetric_l2_regularization: float > 0, best of the order of the examples' L2 norm.
      adaptive: whether the kernel samples examples by their losses.
    """

    def __init__(self, example_id_column, num_loss_partitions=1, num_table_shards=None,
                 symmetric_l1_regularization=0.0, symmetric_l2_regularization=1.0,
                 adaptive=False):
        self._example_id_column = example_id_column
        self._num_loss_partitions = num_loss_partitions
        self._num_table_shards = num_table_shards
        self._symmetric_l1_regularization = symmetric_l1_regularization
        self._symmetric_l2_regularization = symmetric_l2_regularization
        self._adaptive = adaptive

    def _checked_regularization(self):
        """(l1, l2), refused as TF 1.15 refused them when training began."""
        l1, l2 = self._symmetric_l1_regularization, self._symmetric_l2_regularization
        if l2 <= 0.0:
            raise EstimatorError('symmetric_l2_regularization should be positive.')
        if l2 <= 1.0:
            tf.logging.warning(
                'symmetric_l2_regularization for SDCA should typically be larger than for '
                'online optimization methods. Recommended value is of the order of the average '
                'L2 norm of the training examples.')
        if l1 < 0.0:
            raise EstimatorError('symmetric_l1_regularization should be non-negative.')
        return l1, l2


def loss_type(head):
    """The SDCA loss of `head`: 'logistic_loss' for two classes, 'squared_loss' for one label;
    any other head is refused with TF 1.15's words."""
    if isinstance(head, head_lib.BinaryClassHead):
        return 'logistic_loss'
    if isinstance(head, head_lib.MultiClassHead):
        raise EstimatorError('LinearSDCA cannot be used in a multi-class setting.')
    if isinstance(head, head_lib.RegressionHead):
        if head.logits_dimension != 1:
            raise EstimatorError('LinearSDCA can only be used with one-dimensional label.')
        return 'squared_loss'
    raise EstimatorError('Unsupported head type: {}'.format(head))


def check_estimator(optimizer, head, feature_columns, sparse_combiner):
    """Refuses, as TF 1.15's constructors did, what a `LinearSDCA` `optimizer` cannot train."""
    if not isinstance(optimizer, LinearSDCA):
        return
    if sparse_combiner != 'sum':
        raise EstimatorError('sparse_combiner must be "sum" when optimizer is a LinearSDCA '
                             'object.')
    if not _fc.is_feature_column_v2(feature_columns):
        raise EstimatorError('V2 feature columns required when optimizer is a LinearSDCA '
                             'object.')
    loss_type(head)


def _sparse_feature(id_weight_pair):
    """The `SparseFeature` of a categorical column's ids: negative (out of vocabulary) ids
    dropped, an id repeated in one example once, its weights summed."""
    ids = id_weight_pair.id_tensor
    weights = (tf.ones([tf.shape(ids.indices)[0]], tf.float32)
               if id_weight_pair.weight_tensor is None else id_weight_pair.weight_tensor.values)
    feature_ids = tf.cast(tf.reshape(ids.values, [-1]), tf.int64)
    valid = feature_ids >= 0
    rows, feature_ids, weights = (tf.boolean_mask(value, valid) for value in (
        tf.reshape(ids.indices[:, 0], [-1]), feature_ids, weights))
    span = tf.reduce_max(feature_ids) + 1
    pairs, pair_of = tf.unique(span * rows + feature_ids)
    count = tf.shape(pairs)[0]
    pair_rows = tf.unsorted_segment_min(rows, pair_of, count)
    return SparseFeature(pair_rows, pairs - span * pair_rows,
                         tf.reshape(tf.unsorted_segment_sum(weights, pair_of, count), [-1]))


class _ExampleStates:
    """The example states, keyed by `SdcaFprint` of the ids ([n, 2] int64), in `shards`
    checkpointed dense hash tables; a key's shard is |key[0]| mod shards."""

    def __init__(self, shards):
        with tf.name_scope(_TABLE):
            self._tables = [tf.lookup.experimental.DenseHashTable(
                tf.int64, tf.float32, default_value=[0.0] * _STATE_SIZE, empty_key=[0, 0],
                deleted_key=[1, 1], name='%s-%d-of-%d' % (_TABLE, shard + 1, shards))
                for shard in range(shards)]

    def _sharded(self, keys, values):
        shard_of = tf.cast(tf.mod(tf.abs(keys[:, 0]), len(self._tables)), tf.int32)
        return shard_of, [tf.dynamic_partition(value, shard_of, len(self._tables))
                          for value in values]

    def lookup(self, keys):
        if len(self._tables) == 1:
            return self._tables[0].lookup(keys)
        shard_of, (keys, rows) = self._sharded(keys, [keys, tf.range(tf.shape(keys)[0])])
        return tf.dynamic_stitch(rows, [table.lookup(part)
                                        for table, part in zip(self._tables, keys)])

    def insert(self, keys, states):
        if len(self._tables) == 1:
            return self._tables[0].insert(keys, states)
        _, (keys, states) = self._sharded(keys, [keys, states])
        return tf.group(*[table.insert(part, state)
                          for table, part, state in zip(self._tables, keys, states)])

    def size(self):
        return tf.add_n([table.size() for table in self._tables])

    def state_sums(self):
        """[4] float64: the states summed over every example seen."""
        return tf.add_n([tf.reduce_sum(tf.cast(table.export()[1], tf.float64), 0)
                         for table in self._tables])


def _unshrunk(parts):
    """A zero variable beside each part of a model variable, named after it."""
    slots = []
    for part in parts:
        with tf.colocate_with(part):
            slots.append(tf.Variable(tf.zeros(part.shape, tf.float32),
                                     name=part.op.name + '_unshrunk'))
    return slots


def _scatter_add(parts, ids, updates):
    """Adds `updates` [n, ...] at the rows `ids` [n] of the variable split in `parts` (the
    rows of each part following the previous part's)."""
    if len(parts) == 1:
        return [tf.scatter_add(parts[0], ids, updates)]
    starts = [0]
    for part in parts[:-1]:
        starts.append(starts[-1] + int(part.shape[0]))
    owner = tf.add_n([tf.cast(ids >= start, tf.int32) for start in starts[1:]])
    local = ids - tf.gather(tf.constant(starts, tf.int64), owner)
    return [tf.scatter_add(part, part_ids, part_updates)
            for part, part_ids, part_updates in zip(
                parts, tf.dynamic_partition(local, owner, len(parts)),
                tf.dynamic_partition(updates, owner, len(parts)))]


class SDCAModel:
    """The SDCA train step of a linear model over `columns` of one output.

    Args:
      optimizer: the `LinearSDCA`.
      loss_type: 'logistic_loss' or 'squared_loss'.
      columns: the feature columns.
      cols_to_vars: column -> the parts of its weights [ids or width, 1]; 'bias' -> the bias's.
      features: the batch's features, the example ids and weights among them.
      labels: [batch] or [batch, 1].
      weight_key: None or the features' key of the example weights.
    """

    def __init__(self, optimizer, loss_type, columns, cols_to_vars, features, labels,
                 weight_key):
        self._l1, self._l2 = optimizer._checked_regularization()
        self._optimizer, self._loss_type = optimizer, loss_type
        batch_size = tf.shape(labels)[0]
        cache = _fc.FeatureTransformationCache(features)
        self._sparse, self._dense, sparse_vars, dense_vars = [], [], [], []
        for column in sorted(columns, key=lambda column: column.name):
            if isinstance(column, _fc.CategoricalColumn):
                self._sparse.append(_sparse_feature(column.get_sparse_tensors(cache, None)))
                sparse_vars.append(list(cols_to_vars[column]))
            elif isinstance(column, _fc.DenseColumn):
                if column.variable_shape.ndims != 1:
                    raise EstimatorError('Column %s has rank %d, larger than 1.' % (
                        type(column).__name__, column.variable_shape.ndims))
                self._dense.append(column.get_dense_tensor(cache, None))
                dense_vars.append(list(cols_to_vars[column]))
            else:
                raise EstimatorError('LinearSDCA does not support column type %s.'
                                     % type(column).__name__)
        self._dense.append(tf.ones([batch_size, 1]))
        # The sparse columns' weights, then the dense columns' and the bias's.
        self._variables = sparse_vars + dense_vars + [list(cols_to_vars['bias'])]
        self._slots = [_unshrunk(parts) for parts in self._variables]
        self._example_ids = features[optimizer._example_id_column]
        self._weights = (tf.reshape(features[weight_key], [-1]) if weight_key
                         else tf.ones([batch_size]))
        self._labels = tf.cast(tf.reshape(labels, [-1]), tf.float32)
        self._states = _ExampleStates(optimizer._num_table_shards or 1)
        tf.summary.scalar('approximate_duality_gap', self._approximate_duality_gap())
        tf.summary.scalar('examples_seen', self._states.size())

    def _regularization_sums(self):
        """(sum |w|, sum w^2) over the model's weights, float64."""
        weights = [tf.cast(part, tf.float64) for parts in self._variables for part in parts]
        return (tf.add_n([tf.reduce_sum(tf.abs(w)) for w in weights]),
                tf.add_n([tf.reduce_sum(tf.square(w)) for w in weights]))

    def _approximate_duality_gap(self):
        with tf.name_scope('sdca/approximate_duality_gap'):
            sums = self._states.state_sums()
            abs_sum, square_sum = self._regularization_sums()
            return (sums[1] + sums[2] + self._l1 * abs_sum + self._l2 * square_sum) / sums[3]

    def minimize(self, global_step):
        """The train op: the kernel's pass over the batch, its deltas added to the unshrunk
        weights, the states stored, then `global_step` + 1."""
        with tf.name_scope('sdca/minimize'):
            keys = tf.raw_ops.SdcaFprint(input=tf.convert_to_tensor(self._example_ids))
            sparse_slots = self._slots[:len(self._sparse)]
            dense_slots = self._slots[len(self._sparse):]
            sparse_ids = [tf.cast(tf.unique(tf.cast(feature.feature_indices, tf.int32))[0],
                                  tf.int64) for feature in self._sparse]
            states, sparse_deltas, dense_deltas = tf.raw_ops.SdcaOptimizerV2(
                sparse_example_indices=[feature.example_indices for feature in self._sparse],
                sparse_feature_indices=[feature.feature_indices for feature in self._sparse],
                sparse_feature_values=[feature.feature_values for feature in self._sparse],
                dense_features=self._dense, example_weights=self._weights,
                example_labels=self._labels, sparse_indices=sparse_ids,
                sparse_weights=[tf.gather(tf.concat(slots, 0), ids)
                                for slots, ids in zip(sparse_slots, sparse_ids)],
                dense_weights=[tf.concat(slots, 0) for slots in dense_slots],
                example_state_data=self._states.lookup(keys), loss_type=self._loss_type,
                l1=self._l1, l2=self._l2,
                num_loss_partitions=self._optimizer._num_loss_partitions,
                num_inner_iterations=1, adaptive=self._optimizer._adaptive)
            with tf.control_dependencies([states]):
                updates = [self._states.insert(keys, states)]
                for slots, ids, delta in zip(sparse_slots, sparse_ids, sparse_deltas):
                    updates += _scatter_add(slots, ids, delta)
                for slots, delta in zip(dense_slots, dense_deltas):
                    updates += [tf.assign_add(slot, part) for slot, part in zip(
                        slots, tf.split(delta, [int(slot.shape[0]) for slot in slots]))]
            with tf.control_dependencies(updates):
                return tf.assign_add(global_step, 1).op

    def update_weights(self, train_op):
        """After `train_op`: the model's weights set to the unshrunk ones, then, for l1 > 0,
        shrunk towards zero by l1/l2."""
        with tf.control_dependencies([train_op]):
            updates = [part.assign(slot) for parts, slots in zip(self._variables, self._slots)
                       for part, slot in zip(parts, slots)]
        if self._l1 <= 0:
            return tf.group(*updates)
        shrinkage = self._l1 / self._l2
        with tf.control_dependencies(updates):
            return tf.group(*[part.assign(tf.sign(part) * tf.maximum(
                0.0, tf.abs(part) - shrinkage)) for parts in self._variables for part in parts])


class _UpdateWeightsHook(tf.train.SessionRunHook):
    """Runs `SDCAModel.update_weights` with every training step (a chief hook)."""

    def __init__(self, model, train_op):
        self._model, self._train_op = model, train_op

    def begin(self):
        self._update = self._model.update_weights(self._train_op)

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._update)


def estimator_spec(optimizer, head, features, labels, mode, logits, columns, cols_to_vars):
    """`head`'s spec for the linear model's `logits`, trained in TRAIN by SDCA (the model's
    variables in `cols_to_vars` as `SDCAModel` takes them)."""
    if mode != ModeKeys.TRAIN:
        return head.create_estimator_spec(features=features, mode=mode, logits=logits,
                                          labels=labels)
    weight_column = head._weight_column
    model = SDCAModel(optimizer, loss_type(head), columns, cols_to_vars, features, labels,
                      weight_column.key if weight_column is not None else None)
    train_op = model.minimize(tf.train.get_global_step())
    spec = head.create_estimator_spec(features=features, mode=mode, logits=logits,
                                      labels=labels, train_op_fn=lambda loss: train_op)
    return spec._replace(training_chief_hooks=tuple(spec.training_chief_hooks) + (
        _UpdateWeightsHook(model, train_op),))
