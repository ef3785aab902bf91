"""What an `Estimator` runs its graphs with: the session `evaluate` and `predict` monitor, their
hooks and summaries, whether evaluations re-estimate batch-norm statistics from the training
input (`use_precise_bn`), and the checks of what a program hands over (hooks,
predict keys).
"""
import os

import numpy as np

from towers.compat import tf
from towers.evaluation import PreciseBN, PreparedBatch, Restored, pipeline_batches
from towers.legacy.estimator import calls
from towers.legacy.estimator.spec import EstimatorError, ModeKeys
from towers.training import checkpoints


# The batches of the training input from which every `evaluate` re-estimates the batch-norm
# statistics (`use_precise_bn`, the runner's --precise_bn_batches); empty: the moving averages.
_precise_bn_batches = []


def use_precise_bn(num_batches):
    """Makes every `Estimator.evaluate` of this process normalise its batch-norm layers with
    precise statistics re-estimated from `num_batches` batches of the training input (the
    `input_fn` the Estimator last trained on), as towers' evaluations do
    (`towers.evaluation.PreciseBN`); None: with the moving averages, as TF 1.x did."""
    _precise_bn_batches[:] = [] if num_batches is None else [num_batches]


def precise_bn_batches():
    """The batches of `use_precise_bn`, or None."""
    return _precise_bn_batches[0] if _precise_bn_batches else None


def restored(build, checkpoint, seed, session_config, statistics=None):
    """`towers.evaluation.Restored` of the graph `build` makes (with the `model_fn`'s
    scaffold's saver, under 'saver' in what it returns) with graph seed `seed`: that saver's
    variables (every global variable by default) from `checkpoint`, or initialised when it is
    None; its batch norm normalising with `statistics` (the moving averages by default)."""
    savers = {}

    def build_seeded():
        graph = tf.get_default_graph()
        if seed is not None:
            graph.seed = seed
        outputs = build()
        savers[graph] = outputs['saver']
        return outputs

    def var_list():
        saver = savers.get(tf.get_default_graph())
        if saver is None or saver._var_list is None:
            return tf.global_variables()
        return saver._var_list

    return Restored(build_seeded, checkpoint, var_list=var_list, config=session_config,
                    statistics=statistics)


def precise_statistics(input_fn, call_model_fn, params, config, session_config):
    """`PreciseBN` of the `model_fn`'s EVAL network (`call_model_fn(features, labels, mode)`)
    over the training input `input_fn`, or None (said in a warning) when this Estimator has
    not trained in this process."""
    if input_fn is None:
        tf.logging.warning('precise batch-norm statistics need the training input, and '
                           'this Estimator has not trained in this process: evaluating '
                           'with the moving averages')
        return None

    def training_batch():
        if config.tf_random_seed is not None:
            tf.get_default_graph().seed = config.tf_random_seed
        features, labels, hooks = calls.call_input_fn(input_fn, ModeKeys.TRAIN, params, config)
        return PreparedBatch(features if labels is None else (features, labels), hooks)

    def network_fn(batch):
        features, labels = batch if isinstance(batch, tuple) else (batch, None)
        tf.train.get_or_create_global_step()
        call_model_fn(features, labels, ModeKeys.EVAL)

    return PreciseBN(lambda: pipeline_batches(training_batch, session_config),
                     precise_bn_batches(), network_fn)


def run_monitored(net, fetches, hooks):
    """Runs `fetches` under a `MonitoredSession` of `net`'s restored session (a
    `towers.evaluation.Restored` whose outputs hold 'local_init') with `hooks`, until a hook
    asks to stop or the input ends; yields the values of each run."""
    with net.graph.as_default():
        creator = GivenSession(net.session, net.outputs['local_init'])
        with tf.train.MonitoredSession(session_creator=creator, hooks=hooks) as session:
            while not session.should_stop():
                yield session.run(fetches)


def collected_saver():
    """The one saver of the default graph's `SAVERS` collection (a program's), or None."""
    savers = tf.get_collection(tf.GraphKeys.SAVERS)
    return savers[0] if len(savers) == 1 else None


def readable_checkpoint(path, what, given):
    """The checkpoint of `path`: a checkpoint's prefix, or the newest checkpoint of a folder
    that reads whole (damaged ones skipped), or None when the folder holds none.

    Args:
      path: a checkpoint prefix or a folder.
      what: the call asking, for errors ('evaluate').
      given: whether the program named `path` (as `checkpoint_path`), which must then exist.
    """
    path = os.fspath(path)
    if not given or os.path.isdir(path):
        found = checkpoints.newest_readable(path)
        if found is None and given:
            raise EstimatorError('%s: checkpoint_path %s holds no checkpoint' % (what, path))
        return found
    if not checkpoints.exists(path):
        raise EstimatorError('%s: checkpoint_path %s is no checkpoint (no %s.index)'
                             % (what, path, path))
    return path


def examples(batch):
    """The predictions of each example of a batch: one dict per example of a dict of arrays
    (which must agree in their first dimension), the rows of one array."""
    if not isinstance(batch, dict):
        return list(batch)
    sizes = {key: len(value) for key, value in batch.items()}
    if len(set(sizes.values())) != 1:
        raise EstimatorError('Batch length of predictions should be same: %s' % sizes)
    return [{key: value[index] for key, value in batch.items()}
            for index in range(next(iter(sizes.values())))]


def checked_hooks(hooks, what):
    hooks = list(hooks or ())
    for hook in hooks:
        if not isinstance(hook, tf.train.SessionRunHook):
            raise EstimatorError('%s must be tf.train.SessionRunHooks, got %s'
                                 % (what, type(hook).__name__))
    return hooks


def selected(predictions, keys):
    """The predictions named by `keys` (all when None)."""
    if keys is None:
        return predictions
    if not isinstance(predictions, dict):
        raise EstimatorError('predict_keys argument is not valid: the model_fn\'s predictions '
                             'are one tensor, not a dict')
    keys = [keys] if isinstance(keys, str) else list(keys)
    missing = [key for key in keys if key not in predictions]
    if missing:
        raise EstimatorError('predict_keys %s are not in the predictions (%s)'
                             % (', '.join(missing), ', '.join(sorted(predictions))))
    return {key: predictions[key] for key in keys}


class EndUnlessStopped(tf.train.CheckpointSaverListener):
    """A listener whose `end` is skipped when a stop signal ended the training: a preempted
    process saves its checkpoint and exits, without the final evaluation of
    `train_and_evaluate`, which its restart will make."""

    def __init__(self, listener, stop):
        self._listener = listener
        self._stop = stop

    def begin(self):
        self._listener.begin()

    def before_save(self, session, global_step_value):
        return self._listener.before_save(session, global_step_value)

    def after_save(self, session, global_step_value):
        return self._listener.after_save(session, global_step_value)

    def end(self, session, global_step_value):
        if not self._stop.requested:
            self._listener.end(session, global_step_value)


class GivenSession(tf.train.SessionCreator):
    """Hands a `MonitoredSession` the restored session, its local variables initialised."""

    def __init__(self, session, local_init):
        self._session = session
        self._local_init = local_init

    def create_session(self):
        self._session.run(self._local_init)
        return self._session


class EvaluationStepsHook(tf.train.SessionRunHook):
    """Stops after `steps` evaluation batches (None: when the input ends), logging
    `Evaluation [i/steps]` as TF 1.x did."""

    def __init__(self, steps):
        self._steps = steps
        self._done = 0

    def after_run(self, run_context, run_values):
        self._done += 1
        if self._steps is None:
            return
        if self._done % max(self._steps // 10, 1) == 0 or self._done == self._steps:
            tf.logging.info('Evaluation [%d/%d]', self._done, self._steps)
        if self._done >= self._steps:
            run_context.request_stop()


def write_summaries(directory, results, checkpoint):
    """Writes the numeric `results` as scalars at their global step into `directory`, and the
    checkpoint's path as text, as TF 1.x's `evaluate` did."""
    step = results['global_step']
    values = []
    for key, value in sorted(results.items()):
        if key == 'global_step':
            continue
        if np.ndim(value) == 0 and np.issubdtype(np.asarray(value).dtype, np.number):
            values.append(tf.Summary.Value(tag=key, simple_value=float(value)))
        else:
            tf.logging.warning('Skipping summary for %s, must be a float, np.float32, '
                               'np.int64, np.int32 or int.', key)
    if checkpoint is not None:
        tf.logging.info("Saving 'checkpoint_path' summary for global step %d: %s", step,
                        checkpoint)
        values.append(tf.Summary.Value(
            tag='checkpoint_path', tensor=tf.make_tensor_proto(checkpoint),
            metadata=tf.SummaryMetadata(
                plugin_data=tf.SummaryMetadata.PluginData(plugin_name='text'))))
    writer = tf.summary.FileWriterCache.get(directory)
    writer.add_summary(tf.Summary(value=values), step)
    writer.flush()
