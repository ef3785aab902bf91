"""Which batch-norm statistics an evaluation normalises with, and precise ones re-estimated.

    precise = PreciseBN(lambda: pipeline_batches(my_training_input), num_batches=50)
    with Restored(build_fn, checkpoint, example, statistics=precise) as net:
        outputs = net.run(batch)            # with the re-estimated statistics
    save_checkpoint(checkpoint, precise.estimated, '/tmp/precise')   # a separate checkpoint

A network in inference mode normalises with the moving averages of the batch statistics it was
trained on (`MOVING_AVERAGES`, the default). With a momentum of 0.99, after a few hundred steps
they still carry much of their initial mean 0 and variance 1, so the evaluated network is not
the one trained. `PreciseBN` re-estimates them as pycls' and fvcore's `update_bn_stats` and
PyTorch's `swa_utils.update_bn` do ("Rethinking Batch in BatchNorm", Wu and Johnson, 2021): the
restored network runs N training batches in inference layout, but with every batch-norm layer
normalising with the batch's own statistics, as in training (`batch_norm.with_batch_statistics`);
each layer's population mean and variance are those of its input over every value of the N
batches (combined exactly, batch by batch, in float64; not another moving average), with
Bessel's correction (M / (M - 1) over the M values) for the layers whose moving variance has it
(fused kernels, see `towers.evaluation.batch_norm`). They are assigned to the moving statistics
in the evaluation's session only: the checkpoint is not written; `save_checkpoint` writes a
copy of it with them elsewhere. `EACH_BATCH` normalises every evaluation batch with its own
statistics, as training did: a diagnosis (the results then depend on the batch), not an
evaluation.
"""
import collections
import itertools
import logging
import os

import numpy as np

from towers import bars
from towers.compat import tf
from towers.errors import TowersError
from towers.evaluation import batch_norm
from towers.evaluation.restore import feed, placeholders_like, restore_checkpoint
from towers.training import checkpoints

log = logging.getLogger(__name__)


class Statistics:
    """What the batch-norm layers of an evaluated network normalise with: the moving averages
    restored from the checkpoint.

    Attributes:
      description: how results name it.
      of_each_batch: whether every batch is normalised with its own statistics.
    """
    description = 'moving averages'
    of_each_batch = False

    def estimate(self, network_fn, checkpoint, example, var_list=None, config=None):
        """The statistics to assign after the restore: dict variable name -> array (none)."""
        return {}


MOVING_AVERAGES = Statistics()


class _EachBatch(Statistics):
    description = 'statistics of each evaluation batch'
    of_each_batch = True


EACH_BATCH = _EachBatch()


class PreciseBN(Statistics):
    """Population statistics re-estimated from N training batches.

    Args:
      batches: a function of no arguments returning an iterator of training batches as numpy
        arrays (or nested structures of them), e.g. `pipeline_batches(training_input_fn)`; the
        batch-norm layers see each as one batch, so take the training's batch per tower.
      num_batches: N.
      network_fn: builds the network in inference mode on placeholders structured and shaped
        as a batch, with the variable names of the evaluated network; None: the evaluation's
        own `build_fn` (when it takes batches of the same kind).

    Attributes:
      estimated: dict variable name -> the statistics estimated so far, of every network this
        was used for (several models side by side), for `save_checkpoint`.
    """

    def __init__(self, batches, num_batches, network_fn=None):
        if num_batches < 1:
            raise TowersError('precise batch-norm statistics need at least one batch, got %d'
                              % num_batches)
        self.batches = batches
        self.num_batches = num_batches
        self.network_fn = network_fn
        self.estimated = {}

    @property
    def description(self):
        return 'precise (%d training batches)' % self.num_batches

    def estimate(self, network_fn, checkpoint, example=None, var_list=None, config=None):
        """Runs the network restored from `checkpoint` on the batches (its progress shown,
        `towers.bars`) and returns each layer's population mean and variance.

        Args:
          network_fn: the evaluation's build function, used when `self.network_fn` is None.
          checkpoint: the checkpoint prefix to restore.
          example: the evaluation's example batch, None when its network reads an input
            pipeline of its own (then `self.network_fn` is needed); the first training batch
            shapes the placeholders.
          var_list: as for `Restored`: a function returning the saver's var list, or None.
          config: the session's `tf.ConfigProto`, or None.

        Returns:
          A dict: each moving mean's and variance's variable name -> float64 array [channels].

        Raises:
          TowersError: the network has no batch-norm layer with moving statistics, the batches
            end before N, or the checkpoint lacks the network's variables.
        """
        if self.network_fn is None and example is None:
            raise TowersError('precise batch-norm statistics need the network on training '
                              'batches: the evaluation builds on an input pipeline of its own, '
                              'so give PreciseBN a network_fn')
        batches = iter(self.batches())
        first = next(batches, None)
        if first is None:
            raise TowersError('the training input gave no batch for precise batch-norm '
                              'statistics')
        graph = tf.Graph()
        with graph.as_default():
            placeholders = placeholders_like(first)
            (self.network_fn or network_fn)(placeholders)
            layers = batch_norm.find_layers(graph)
            saver = tf.train.Saver(None if var_list is None else var_list())
        if not layers:
            raise TowersError('the network has no batch-norm layer normalising with moving '
                              'statistics (fused batch norm or tf.nn.batch_normalization reading '
                              'variables): there are no statistics to re-estimate')
        rewritten = batch_norm.with_batch_statistics(graph, saver, layers)
        inputs = tf.nest.map_structure(lambda p: batch_norm.tensor_in(rewritten.graph, p),
                                       placeholders)
        populations = {}
        with tf.Session(graph=rewritten.graph, config=config) as session:
            restore_checkpoint(rewritten.saver, session, checkpoint)
            done = 0
            for batch in bars.bar(itertools.islice(itertools.chain([first], batches),
                                                   self.num_batches),
                                  'precise batch-norm statistics', 'batches',
                                  total=self.num_batches):
                moments = session.run(rewritten.moments, feed(inputs, batch))
                for layer in layers:
                    key = (layer.mean, layer.variance, layer.bessel)
                    populations.setdefault(key, _Population()).add(*moments[layer.name])
                done += 1
        if done < self.num_batches:
            raise TowersError('the training input gave %d of the %d batches that precise '
                              'batch-norm statistics were asked to run' % (done, self.num_batches))
        statistics = {}
        for (mean_name, variance_name, bessel), population in populations.items():
            statistics[mean_name] = population.mean
            statistics[variance_name] = population.variance(bessel)
        log.info('precise batch-norm statistics: %d layers re-estimated from %d training '
                 'batches', len(populations), done)
        self.estimated.update(statistics)
        return statistics


class _Population:
    """The exact mean and variance of values met in batches, merged batch by batch (Chan et
    al.'s pairwise update) in float64."""

    def __init__(self):
        self.count = 0
        self.mean = 0.0
        self._squares = 0.0

    def add(self, mean, variance, count):
        """Adds a batch of `count` values per channel of `mean` and biased `variance`."""
        mean = np.asarray(mean, np.float64)
        total = self.count + int(count)
        delta = mean - self.mean
        self._squares = (self._squares + np.asarray(variance, np.float64) * count
                         + delta ** 2 * self.count * count / total)
        self.mean = self.mean + delta * count / total
        self.count = total

    def variance(self, bessel):
        """The variance over every value: the squares over M, or over M - 1 with `bessel`."""
        return self._squares / (self.count - 1 if bessel and self.count > 1 else self.count)


def pipeline_batches(input_fn, config=None):
    """The batches of an input pipeline as numpy arrays, one per run, until it ends.

    Args:
      input_fn: a function of no arguments building the pipeline (e.g. a data set's
        `training_input`) and returning its batch, or (its batch, `SessionRunHook`s that
        prepare it in a new session, as a `Dataset`'s initializable iterator needs); called in
        a graph of its own, which is the default graph only while it runs, so that a consumer
        may stop iterating anywhere (`PreciseBN` takes N batches).
      config: the session's `tf.ConfigProto`, or None.

    Yields:
      Each batch, as the pipeline's structure of numpy arrays.
    """
    graph = tf.Graph()
    with graph.as_default():
        built = input_fn()
        batch, hooks = built if isinstance(built, PreparedBatch) else (built, ())
        for hook in hooks:
            hook.begin()
    coordinator = tf.train.Coordinator()
    with tf.Session(graph=graph, config=config) as session:
        # A TF1 program's queues (tf.train.batch) need their runners.
        threads = tf.train.start_queue_runners(session, coordinator)
        for hook in hooks:
            hook.after_create_session(session, coordinator)
        try:
            while True:
                yield session.run(batch)
        except tf.errors.OutOfRangeError:
            return
        finally:
            coordinator.request_stop()
            coordinator.join(threads, stop_grace_period_secs=5)


class PreparedBatch(collections.namedtuple('PreparedBatch', ['batch', 'hooks'])):
    """What an `input_fn` of `pipeline_batches` returns when its batch needs `hooks` run in a
    new session first (a `Dataset`'s initializable iterator)."""


def save_checkpoint(checkpoint, statistics, directory):
    """Writes a copy of `checkpoint` with `statistics` in place of the stored values.

    Args:
      checkpoint: the checkpoint prefix read, e.g. '/tmp/train/model.ckpt-150'.
      statistics: dict variable name -> array, e.g. `PreciseBN.estimated`.
      directory: where the copy goes, under the checkpoint's own name, with a `checkpoint`
        index naming it; not the checkpoint's own directory.

    Returns:
      The prefix written.

    Raises:
      TowersError: `directory` is the checkpoint's, or the checkpoint lacks a name of
        `statistics`.
    """
    if os.path.abspath(directory) == os.path.dirname(os.path.abspath(checkpoint)):
        raise TowersError('--save_precise_bn %s is the directory of checkpoint %s; the '
                          'training checkpoint is never rewritten: name another directory'
                          % (directory, checkpoint))
    reader = tf.train.NewCheckpointReader(checkpoint)
    dtypes = reader.get_variable_to_dtype_map()
    missing = sorted(set(statistics) - set(dtypes))
    if missing:
        raise TowersError('checkpoint %s lacks %s' % (checkpoint, ', '.join(missing)))
    names = sorted(dtypes)
    prefix = os.path.join(os.path.abspath(directory), os.path.basename(checkpoint))
    os.makedirs(directory, exist_ok=True)
    with tf.Graph().as_default():
        # A training input's position (a variant, of --deterministic) goes from the checkpoint
        # to the copy in the graph: the reader cannot turn it into numpy.
        values = [checkpoints.stored_tensor(checkpoint, name, dtypes[name])
                  if dtypes[name] == tf.variant else tf.placeholder(dtypes[name])
                  for name in names]
        save = tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names,
                                 shape_and_slices=[''] * len(names), tensors=values)
        with tf.Session() as session:
            session.run(save, {placeholder: (np.asarray(statistics[name],
                                                        dtypes[name].as_numpy_dtype)
                                             if name in statistics else reader.get_tensor(name))
                               for placeholder, name in zip(values, names)
                               if dtypes[name] != tf.variant})
    tf.train.update_checkpoint_state(os.path.abspath(directory), prefix)
    log.info('wrote %s: checkpoint %s with %d precise batch-norm statistics', prefix,
             checkpoint, len(statistics))
    return prefix
