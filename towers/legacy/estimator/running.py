"""What an `Estimator` runs its graphs with: its config, the session `evaluate` and `predict`
monitor, their hooks and summaries, whether evaluations re-estimate batch-norm statistics from
the training input (`use_precise_bn`), and the checks of what a program hands over (a config,
hooks, saving listeners, predict keys, a subclass of `Estimator`), with TF 1.15's exception
types and phrases.
"""
import os
import tempfile

import numpy as np
from google.protobuf import message

from towers.compat import tf
from towers.evaluation import PreciseBN, PreparedBatch, Restored, pipeline_batches
from towers.evaluation.restore import load_variables, restore_checkpoint
from towers.legacy.estimator import calls
from towers.legacy.estimator.run_config import RunConfig, TaskType, default_session_config
from towers.legacy.estimator.spec import (EstimatorError, ModeKeys, checked_instances,
                                          metrics_with_loss)
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
    """`towers.evaluation.Restored` of the graph `build` makes, with graph seed `seed`: its
    variables initialised, then restored from `checkpoint` (when not None) through the
    `model_fn`'s scaffold's saver (under 'saver' in what `build` returns) or a saver of every
    global variable, as TF 1.x's Scaffold restored them; its batch norm normalising with
    `statistics` (the moving averages by default)."""
    def build_seeded():
        if seed is not None:
            tf.get_default_graph().seed = seed
        outputs = build()
        # TF 1.15's Scaffold logged this before the restore, its graph complete.
        tf.logging.info('Graph was finalized.')
        return outputs

    net = Restored(build_seeded, None, config=session_config)
    try:
        if checkpoint is not None:
            with net.graph.as_default():
                saver = net.outputs['saver'] or tf.train.Saver(sharded=True)
            restore_checkpoint(saver, net.session, checkpoint)
            if statistics is not None:
                load_variables(net.session, net.graph, statistics.estimate(
                    build_seeded, checkpoint, config=session_config))
    except BaseException:
        net.close()
        raise
    return net


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


def warn_unless_input_ends(features):
    """Warns, as TF 1.15 did, unless `features` come from a `tf.data` iterator or the default
    graph has queue runners: an input that ends, so that `predict` ends."""
    tensors = [value for value in tf.nest.flatten(features) if isinstance(value, tf.Tensor)]
    if not (any(tensor.op.type == 'IteratorGetNext' for tensor in tensors)
            or tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)):
        tf.logging.warning('Input graph does not use tf.data.Dataset or contain a QueueRunner. '
                           'That means predict yields forever. This is probably a mistake.')


def collected_saver():
    """The one saver of the default graph's `SAVERS` collection (a program's), or None."""
    savers = tf.get_collection(tf.GraphKeys.SAVERS)
    return savers[0] if len(savers) == 1 else None


def summary_op(scaffold):
    """The summary op of a training: the scaffold's, or the default graph's summaries merged
    and collected as `SUMMARY_OP` (as a default `tf.train.Scaffold` keeps it); None without
    summaries."""
    if scaffold.summary_op is not None:
        return scaffold.summary_op
    collected = tf.get_collection(tf.GraphKeys.SUMMARY_OP)
    if collected:
        return collected[0]
    merged = tf.summary.merge_all()
    if merged is not None:
        tf.add_to_collection(tf.GraphKeys.SUMMARY_OP, merged)
    return merged


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


def checked_hooks(hooks, what='hooks'):
    """`hooks` as a list, each a `tf.train.SessionRunHook`.

    Raises:
      EstimatorTypeError: one is not.
    """
    return _checked(hooks, tf.train.SessionRunHook,
                    '%s: Hooks must be a SessionRunHook, given: %%r' % what)


def checked_listeners(listeners):
    """`listeners` as a list, each a `tf.train.CheckpointSaverListener`.

    Raises:
      EstimatorTypeError: one is not.
    """
    return _checked(listeners, tf.train.CheckpointSaverListener,
                    'saving_listeners must be a list of CheckpointSaverListener, given: %r')


def _checked(items, kind, message):
    return list(checked_instances(items, kind, message))


def config_with_model_dir(config, model_dir):
    """The `RunConfig` of an Estimator given `config` (None: the default one) and `model_dir`:
    with its model_dir (`model_dir`, or `config`'s, or a new temporary folder) and a session
    config (`config`'s, or TF 1.15's default).

    Raises:
      EstimatorError: `config` is not a `RunConfig`; `model_dir` differs from `config`'s or is
        a file.
    """
    if config is None:
        config = RunConfig()
        tf.logging.info('Using default config.')
    elif not isinstance(config, RunConfig):
        raise EstimatorError('config must be an instance of `RunConfig`, but provided %r'
                             % (config,))
    model_dir = os.fspath(model_dir) if model_dir is not None else None
    if model_dir and config.model_dir and model_dir != config.model_dir:
        raise EstimatorError('`model_dir` are set both in constructor and `RunConfig`, but '
                             'with different values: %s and %s' % (model_dir, config.model_dir))
    model_dir = model_dir or config.model_dir
    if not model_dir:
        model_dir = tempfile.mkdtemp()
        tf.logging.warning('Using temporary folder as model directory: %s', model_dir)
    if os.path.exists(model_dir) and not os.path.isdir(model_dir):
        raise EstimatorError('model_dir %s is a file: expected a directory for the '
                             "model's checkpoints (new, or holding them)" % model_dir)
    return config.replace(model_dir=model_dir,
                          session_config=config.session_config or default_session_config())


def check_trains(config):
    """Raises `EstimatorError` for `Estimator.train` in an evaluator's or parameter server's
    task of `config`, which TF 1.15 refused."""
    if config.task_type in (TaskType.EVALUATOR, TaskType.PS):
        raise EstimatorError('Train has been called wrong configuration: a task of type %s does '
                             'not train. Please use tf.estimator.train_and_evaluate, which runs '
                             'each task as its TF_CONFIG says' % config.task_type)


def check_saver_for(listeners, config, chief_hooks):
    """Raises `EstimatorError` for saving listeners when nothing saves checkpoints: no
    cadence in `config`, no `CheckpointSaverHook` among the `model_fn`'s chief hooks."""
    if listeners and not (config.save_checkpoints_steps or config.save_checkpoints_secs) and (
            not any(isinstance(hook, tf.train.CheckpointSaverHook) for hook in chief_hooks)):
        raise EstimatorError(
            'There should be a CheckpointSaverHook to use saving_listeners. Please set one of '
            'the RunConfig.save_checkpoints_steps or RunConfig.save_checkpoints_secs.')


# What a subclass of `Estimator` may redefine (TF 1.15's list).
_OVERRIDABLE = frozenset([
    'model_fn', '_create_and_assert_global_step', '_export_all_saved_models', '_tf_api_names',
    '_tf_api_names_v1', '_estimator_api_names', '_estimator_api_names_v1',
    '_estimator_api_constants', '_estimator_api_constants_v1'])


def check_not_overridden(estimator, module):
    """Raises `EstimatorError` when the class of `estimator` redefines a member of the class of
    `module` (the name of `Estimator`'s) it derives from, as TF 1.15 forbade (`TPUEstimator`
    aside)."""
    cls = type(estimator)
    base = next(klass for klass in cls.__mro__ if klass.__module__ == module)
    if cls is base or cls.__name__ == 'TPUEstimator':
        return
    overridden = sorted(name for name in set(dir(base)) & set(vars(cls)) - _OVERRIDABLE
                        if not name.startswith('__') and getattr(base, name) != getattr(cls, name))
    if overridden:
        raise EstimatorError('Subclasses of Estimator cannot override members of Estimator. '
                             '%s does override %s' % (cls.__name__, overridden))


def selected(predictions, keys):
    """The predictions named by `keys` (all when None; those of them the `model_fn` gives).

    Raises:
      EstimatorError: `keys` are given for predictions that are one tensor, or name none of
        the predictions.
    """
    if not keys:
        return predictions
    if not isinstance(predictions, dict):
        raise EstimatorError('predict_keys argument is not valid in case of non-dict '
                             'predictions: the model_fn\'s predictions are one tensor')
    keys = [keys] if isinstance(keys, str) else list(keys)
    chosen = {key: value for key, value in predictions.items() if key in keys}
    if not chosen:
        raise EstimatorError('Expected to run at least one output from %s, provided %s: '
                             'predict_keys name none of the predictions'
                             % (sorted(predictions), keys))
    return chosen


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
        # What TF's SessionManager logged around it in TF 1.15's evaluate and predict.
        tf.logging.info('Running local_init_op.')
        self._session.run(self._local_init)
        tf.logging.info('Done running local_init_op.')
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
    """Writes `results` at their global step into `directory` as TF 1.x's `evaluate` did:
    numbers as scalars, arrays as tensors, a serialized `tf.Summary` (an image summary's
    value, say) as its values tagged `<key>/<i>`; then, in an event of its own, the
    checkpoint's path as text."""
    step = results['global_step']
    tf.logging.info('Saving dict for global step %d: %s', step,
                    ', '.join('%s = %s' % item for item in sorted(results.items())))
    values = []
    for key, value in results.items():
        if key != 'global_step' and value is not None:
            values.extend(_summary_values(key, value))
    writer = tf.summary.FileWriterCache.get(directory)
    writer.add_summary(tf.Summary(value=values), step)
    if checkpoint is not None:
        tf.logging.info("Saving 'checkpoint_path' summary for global step %d: %s", step,
                        checkpoint)
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(
            tag='checkpoint_path', tensor=tf.make_tensor_proto(checkpoint, tf.string),
            metadata=tf.SummaryMetadata(
                plugin_data=tf.SummaryMetadata.PluginData(plugin_name='text')))]), step)
    writer.flush()


def _summary_values(key, value):
    """The `tf.Summary.Value`s of the metric `key` (none, said in a warning, for a value
    that is not a number, an array or a serialized `tf.Summary`)."""
    if isinstance(value, (float, int, np.floating, np.integer)):
        return [tf.Summary.Value(tag=key, simple_value=float(value))]
    if isinstance(value, np.ndarray):
        return [tf.Summary.Value(tag=key, node_name=key, tensor=tf.make_tensor_proto(value))]
    if isinstance(value, bytes):
        try:
            summary = tf.Summary.FromString(value)
        except message.DecodeError:
            tf.logging.warning('Skipping summary for %s, cannot parse string to Summary.', key)
            return []
        for index, item in enumerate(summary.value):
            item.tag = '%s/%d' % (key, index)
        return list(summary.value)
    tf.logging.warning('Skipping summary for %s, must be a float, np.float32, np.int64, '
                       'np.int32 or int or np.ndarray or a serialized string of Summary.', key)
    return []


def evaluation_outputs(spec, global_step, input_hooks):
    """What an evaluation of the EVAL `spec` runs: a dict of 'update' (every metric's update
    op), 'values' (name -> value tensor; the mean loss as 'loss'), 'global_step',
    'local_init', 'hooks' (the input's and the spec's evaluation hooks) and 'saver' (the
    scaffold's, or None)."""
    metrics = metrics_with_loss(spec)
    return {'update': tf.group(*[update for _, update in metrics.values()]),
            'values': {key: value for key, (value, _) in metrics.items()},
            'global_step': global_step, 'local_init': tf.local_variables_initializer(),
            'hooks': list(input_hooks) + list(spec.evaluation_hooks),
            'saver': spec.scaffold.saver}
