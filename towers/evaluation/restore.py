"""A trained network restored from a checkpoint and run: the one way every evaluation does it.

    with Restored(build_fn, checkpoint, example=images[:1], any_batch_size=True) as net:
        outputs = [net.run(batch) for batch in batches]          # fed through placeholders
    with Restored(build_from_input_pipeline, checkpoint, var_list=averages) as net:
        counts = sum(net.run_batches(num_batches))              # an input pipeline in the graph
    outputs = predict(build_fn, checkpoint, images, batch_size=8)   # arrays in, arrays out
    with Restored(..., statistics=PreciseBN(training_batches, 50)) as net:   # precise BN

The network is built in a graph of its own (the caller's default graph is left as it was),
every global variable (or the given var list) is restored, and its failures are one line
naming the checkpoint. Its batch-norm layers normalise with the moving averages restored, or
with statistics re-estimated from training batches (`towers.evaluation.precise_bn`). A run over
many batches (`run_batches`, `predict`) shows its progress (`towers.bars`).
"""
import numpy as np

from towers import bars
from towers.compat import tf
from towers.errors import TowersError
from towers.evaluation import batch_norm


def restore_checkpoint(saver, sess, checkpoint):
    """`saver.restore` in `sess`'s graph (also where TensorFlow 2 behaviour runs eagerly outside
    graphs), with its failures as one line naming `checkpoint`."""
    try:
        with sess.graph.as_default():
            saver.restore(sess, checkpoint)
    except ValueError as err:
        raise TowersError('cannot restore the network from checkpoint %s: %s'
                          % (checkpoint, err))
    except (tf.errors.NotFoundError, tf.errors.InvalidArgumentError) as err:
        # TensorFlow's message is a paragraph of advice; the cause is its last unindented line
        # (e.g. "Key conv1/weights not found in checkpoint").
        cause = [line for line in err.message.split('\n') if line[:1].strip()][-1]
        raise TowersError("checkpoint %s does not hold the network's variables: %s"
                          % (checkpoint, cause))


def placeholders_like(example, any_batch_size=False):
    """Placeholders of the dtypes and shapes of `example`'s arrays, in its structure; the
    first dimension left open with `any_batch_size`."""
    def placeholder(array):
        shape = np.shape(array)
        return tf.placeholder(tf.as_dtype(np.asarray(array).dtype),
                              (None,) + shape[1:] if any_batch_size else shape)
    return tf.nest.map_structure(placeholder, example)


def feed(placeholders, batch):
    """The feed dict giving each placeholder its array of `batch` (the same structure).

    Raises:
      TowersError: `batch` is not structured as the placeholders.
    """
    try:
        tf.nest.assert_same_structure(placeholders, batch)
    except (ValueError, TypeError) as err:
        raise TowersError('a batch is not structured as the first one: %s' % err)
    return dict(zip(tf.nest.flatten(placeholders), tf.nest.flatten(batch)))


def load_variables(session, graph, values):
    """Loads `values` (dict variable name -> array) into the variables of `graph` so named, in
    `session` only (the checkpoint is not written).

    Raises:
      TowersError: a name is not a global variable of `graph`.
    """
    variables = {v.op.name: v for v in graph.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)}
    missing = sorted(set(values) - set(variables))
    if missing:
        raise TowersError('the evaluated network lacks the batch-norm statistics %s of the '
                          'network they were re-estimated on' % ', '.join(missing))
    for name, value in values.items():
        # What `Variable.load` does, without its deprecation warning: no op is added.
        initializer = variables[name].initializer
        session.run(initializer, {initializer.inputs[1]: np.asarray(
            value, initializer.inputs[1].dtype.as_numpy_dtype)})


class Restored:
    """A network restored from a checkpoint in a graph and session of its own.

    Args:
      build_fn: builds the network in test mode (no dropout, batch-norm moving statistics)
        and returns what `run` fetches (e.g. a dict name -> tensor). Called with placeholders
        structured and shaped as `example` when it is given, else with no argument (the
        network reads an input pipeline of its own).
      checkpoint: the checkpoint prefix, e.g. '/tmp/train/model.ckpt-1000'; None: the
        variables take their initial values instead (TF 1.x's Estimator evaluated and
        predicted so before any training).
      example: a batch (a numpy array or a nested structure of them) whose dtypes and shapes
        the placeholders take, or None.
      any_batch_size: leave the placeholders' first dimension open (batches of any size).
      var_list: a function of no arguments, called after `build_fn`, returning the
        `tf.train.Saver` var list (e.g. moving averages restored into the variables); every
        global variable by default.
      config: the session's `tf.ConfigProto` (devices, threads), or None.
      statistics: what the batch-norm layers normalise with, a
        `towers.evaluation.precise_bn.Statistics`: the moving averages restored (None, the
        default), precise ones re-estimated after the restore (`PreciseBN`), or each batch's
        own (`EACH_BATCH`: the network is rewritten so, see `towers.evaluation.batch_norm`).

    Attributes:
      graph: the network's graph.
      outputs: what `build_fn` returned (tensors of `graph`).

    Raises:
      TowersError: naming `checkpoint`, when it is missing or does not hold the network's
        variables; or the network has no batch norm for `statistics` to change.
    """

    def __init__(self, build_fn, checkpoint, example=None, any_batch_size=False, var_list=None,
                 config=None, statistics=None):
        self.graph = tf.Graph()
        with self.graph.as_default():
            self._placeholders = (None if example is None
                                  else placeholders_like(example, any_batch_size))
            self.outputs = (build_fn() if example is None else build_fn(self._placeholders))
            saver = tf.train.Saver(tf.global_variables() if var_list is None else var_list())
        if statistics is not None and statistics.of_each_batch:
            saver = self._rewrite(saver)
        with self.graph.as_default():
            # Lookup tables are not variables: initialised here, once.
            tables = tf.tables_initializer()
            initial = tf.global_variables_initializer() if checkpoint is None else None
        self._session = tf.Session(graph=self.graph, config=config)
        try:
            self._session.run(tables)
            if checkpoint is None:
                self._session.run(initial)
            else:
                restore_checkpoint(saver, self._session, checkpoint)
            if statistics is not None:
                load_variables(self._session, self.graph, statistics.estimate(
                    build_fn, checkpoint, example, var_list, config))
        except BaseException:
            self.close()
            raise

    def _rewrite(self, saver):
        """Copies the network to normalise each batch with its own statistics; returns the
        copy's `saver`."""
        layers = batch_norm.find_layers(self.graph)
        if not layers:
            raise TowersError('the network has no batch-norm layer normalising with moving '
                              'statistics: each batch\'s own statistics change nothing')
        rewritten = batch_norm.with_batch_statistics(self.graph, saver, layers)
        self.graph = rewritten.graph
        self.outputs, self._placeholders = tf.nest.map_structure(
            lambda value: batch_norm.tensor_in(self.graph, value),
            (self.outputs, self._placeholders))
        return rewritten.saver

    def run(self, batch=None, fetches=None):
        """Runs `fetches` (default: `outputs`) with the placeholders fed `batch`; numpy values
        come back."""
        return self._session.run(self.outputs if fetches is None else fetches,
                                 None if batch is None else feed(self._placeholders, batch))

    def run_batches(self, num_batches, fetches=None, what='evaluation'):
        """Runs `fetches` (default: `outputs`) `num_batches` times, the network reading an input
        pipeline of its own, its progress shown as `what`; yields the numpy values of each
        run."""
        for _ in bars.bar(range(num_batches), what, 'batches'):
            yield self.run(fetches=fetches)

    @property
    def session(self):
        """The session holding the restored variables (e.g. to save them in another format)."""
        return self._session

    def close(self):
        self._session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


def predict(build_fn, checkpoint, inputs, batch_size, config=None, names=None, statistics=None,
            what='evaluation'):
    """Runs a network restored from `checkpoint` on `inputs`, `batch_size` rows at a time.

    Args:
      build_fn: called once with a placeholder [b, ...] of `inputs`' dtype and row shape;
        builds the network in test mode and returns a dict of tensors [b, ...].
      checkpoint: the checkpoint prefix to restore.
      inputs: [n, ...] array, n >= 1.
      batch_size: rows per run; the results do not depend on it in test mode (but do when
        each batch is normalised with its own statistics).
      config: the `tf.ConfigProto` of the session, or None.
      names: the keys of `build_fn`'s dict to compute; None for all of them.
      statistics: what batch norm normalises with, as for `Restored`; the moving averages by
        default (with `PreciseBN`, its `network_fn` or `build_fn` on its batches).
      what: the loop as its progress names it (`towers.bars`).

    Returns:
      A dict from each of `names` to a numpy array [n, ...].

    Raises:
      TowersError: naming `checkpoint`, when it is missing or does not hold the network's
        variables.
    """
    inputs = np.asarray(inputs)

    def build(placeholder):
        outputs = build_fn(placeholder)
        return {name: outputs[name] for name in (outputs if names is None else names)}

    with Restored(build, checkpoint, inputs[:1], any_batch_size=True, config=config,
                  statistics=statistics) as net:
        batches = [net.run(inputs[start:start + batch_size])
                   for start in bars.bar(range(0, len(inputs), batch_size), what, 'batches')]
    return {name: np.concatenate([batch[name] for batch in batches]) for name in batches[0]}
