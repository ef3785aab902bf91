"""`tf.estimator.Estimator`: TF 1.15's training API, as a thin face over this project's loop.

    estimator = tf.estimator.Estimator(model_fn, model_dir='/tmp/model', params={...})
    estimator.train(train_input_fn, max_steps=1000)
    metrics = estimator.evaluate(eval_input_fn)        # {'loss': ..., 'global_step': 1000, ...}
    for prediction in estimator.predict(predict_input_fn): ...
    estimator.export_saved_model('/tmp/export', serving_input_receiver_fn)

As TF 1.x's did, each call builds a new graph: the `input_fn` the input (on the CPU), the
`model_fn` the network of one mode. Then the project's own machinery runs it:
`train` is `towers.training.loop.train` (checkpoints, summaries, resuming from the newest
checkpoint that reads whole, stopping cleanly on SIGTERM or Ctrl-C, the divergence guard), with
the Estimator's hooks and log lines added; `evaluate` and `predict` restore through
`towers.evaluation.Restored` (damaged checkpoints skipped); `export_saved_model` writes through
`towers.export.save`. What a TF 1.x user saw stays: `model.ckpt-N` (and `model.ckpt-0` of a new
run) and `graph.pbtxt` in `model_dir`, a checkpoint every 600 s and the 5 newest kept by
default, summaries every 100 steps, `loss = ..., step = ...` and `global_step/sec` lines and
`Loss for final step: ...` through `tf.logging`, evaluation events in `model_dir/eval` (or
`eval_<name>`) and `Saving dict for global step N: ...`.
"""
import copy
import os
import tempfile
import time

import numpy as np

from towers import export as export_lib
from towers.compat import export_utils, tf
from towers.evaluation import PreciseBN, Restored
from towers.legacy.estimator import calls
from towers.legacy.estimator.run_config import RunConfig, default_session_config
from towers.legacy.estimator.spec import EstimatorError, ModeKeys
from towers.legacy.estimator.warm_start import warm_start_settings
from towers.training import checkpoints, preemption
from towers.training import loop as training_loop

LOSS_METRIC_KEY = 'loss'

# Batches of the training input from which every `evaluate` re-estimates the batch-norm
# statistics (`use_precise_bn`, the runner's --precise_bn_batches); None: the moving averages.
_precise_bn_batches = []


def use_precise_bn(num_batches):
    """Makes every `Estimator.evaluate` of this process normalise its batch-norm layers with
    precise statistics re-estimated from `num_batches` batches of the training input (the
    `input_fn` the Estimator last trained on), as towers' evaluations do
    (`towers.evaluation.PreciseBN`); None: with the moving averages, as TF 1.x did."""
    _precise_bn_batches[:] = [] if num_batches is None else [num_batches]


class Estimator:
    """TF 1.15's `tf.estimator.Estimator` (its arguments, methods and what they log and write).

    Args:
      model_fn: (features, labels, mode, params, config) -> `EstimatorSpec`, taking any of
        them but `features`, which it must take.
      model_dir: where checkpoints and events go; `config.model_dir` or a new temporary folder
        when not given.
      config: a `RunConfig`.
      params: a dict handed to `model_fn` (and `input_fn`) as `params`.
      warm_start_from: a checkpoint (or its folder, or a SavedModel's folder) or a
        `WarmStartSettings`, whose variables start the training of a new model.

    Raises:
      EstimatorError: `model_dir` is a file or differs from `config.model_dir`; `config` is not
        a `RunConfig`; `model_fn` takes no `features`, or arguments an Estimator does not give,
        or no `params` while `params` are given.
    """

    def __init__(self, model_fn, model_dir=None, config=None, params=None,
                 warm_start_from=None):
        if config is None:
            config = RunConfig()
        elif not isinstance(config, RunConfig):
            raise EstimatorError('config must be a tf.estimator.RunConfig, got %s'
                                 % type(config).__name__)
        model_dir = os.fspath(model_dir) if model_dir is not None else None
        if model_dir and config.model_dir and model_dir != config.model_dir:
            raise EstimatorError('model_dir are set both in constructor and RunConfig, but with '
                                 'different values: %s and %s' % (model_dir, config.model_dir))
        model_dir = model_dir or config.model_dir
        if not model_dir:
            model_dir = tempfile.mkdtemp()
            tf.logging.warning('Using temporary folder as model directory: %s', model_dir)
        if os.path.exists(model_dir) and not os.path.isdir(model_dir):
            raise EstimatorError('model_dir %s is a file: expected a directory for the '
                                 "model's checkpoints (new, or holding them)" % model_dir)
        calls.check_model_fn(model_fn, params)
        self._model_dir = model_dir
        self._config = config.replace(model_dir=model_dir)
        self._model_fn = model_fn
        self._params = copy.deepcopy(params or {})
        self._warm_start = warm_start_settings(warm_start_from)
        self._train_input_fn = None
        tf.logging.info('Using config: %s', self._config)

    @property
    def model_dir(self):
        return self._model_dir

    @property
    def config(self):
        return copy.deepcopy(self._config)

    @property
    def params(self):
        return copy.deepcopy(self._params)

    @property
    def model_fn(self):
        """The `model_fn` as a function (features, labels, mode, config) -> `EstimatorSpec`,
        with this Estimator's params (what `tf.contrib.estimator`'s wrappers call)."""
        def public_model_fn(features, labels, mode, config):
            return calls.call_model_fn(self._model_fn, features, labels, mode, self.params,
                                       config)
        return public_model_fn

    def _call_model_fn(self, features, labels, mode):
        return calls.call_model_fn(self._model_fn, features, labels, mode, self.params,
                                   self.config)

    def _new_graph(self):
        graph = tf.Graph()
        if self._config.tf_random_seed is not None:
            graph.seed = self._config.tf_random_seed
        return graph

    def _session_config(self):
        return self._config.session_config or default_session_config()

    # Checkpoints.

    def latest_checkpoint(self):
        """The newest checkpoint's prefix in `model_dir`, or None."""
        return tf.train.latest_checkpoint(self._model_dir)

    def _readable_checkpoint(self, checkpoint_path, what):
        """`checkpoint_path` (which must exist), or the newest checkpoint of `model_dir` that
        reads whole (damaged ones skipped), or None."""
        if checkpoint_path is None:
            return checkpoints.newest_readable(self._model_dir)
        checkpoint_path = os.fspath(checkpoint_path)
        if os.path.isdir(checkpoint_path):
            found = checkpoints.newest_readable(checkpoint_path)
            if found is None:
                raise EstimatorError('%s: checkpoint_path %s holds no checkpoint'
                                     % (what, checkpoint_path))
            return found
        if not checkpoints.exists(checkpoint_path):
            raise EstimatorError('%s: checkpoint_path %s is no checkpoint (no %s.index)'
                                 % (what, checkpoint_path, checkpoint_path))
        return checkpoint_path

    def get_variable_names(self):
        """The names of the variables in the newest checkpoint."""
        return [name for name, _ in tf.train.list_variables(self._require_checkpoint())]

    def get_variable_value(self, name):
        """The value (a numpy array) of variable `name` in the newest checkpoint."""
        return tf.train.load_variable(self._require_checkpoint(), name)

    def _require_checkpoint(self):
        checkpoint = self.latest_checkpoint()
        if checkpoint is None:
            raise EstimatorError('Estimator is not trained yet: no checkpoint in model_dir %s'
                                 % self._model_dir)
        return checkpoint

    def eval_dir(self, name=None):
        """Where `evaluate` writes its events: `model_dir/eval` or `model_dir/eval_<name>`."""
        return os.path.join(self._model_dir, 'eval' if not name else 'eval_' + name)

    def _checkpoint_step(self):
        checkpoint = self.latest_checkpoint()
        if checkpoint is None:
            return 0
        try:
            return int(tf.train.load_variable(checkpoint, tf.GraphKeys.GLOBAL_STEP))
        except (tf.errors.OpError, ValueError):
            return 0

    # Training.

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains `steps` more steps, or up to the global step `max_steps`, or (neither given)
        until `input_fn`'s input ends; resumes from the newest checkpoint of `model_dir`.

        A SIGTERM or Ctrl-C ends training after the current step with a checkpoint of it, and
        the program with status 143 or 130 (a rerun resumes from there).

        Returns:
          self.
        """
        if steps is not None and max_steps is not None:
            raise EstimatorError('Can not provide both steps and max_steps.')
        for name, value in (('steps', steps), ('max_steps', max_steps)):
            if value is not None and value <= 0:
                raise EstimatorError('Must specify %s > 0, given: %s' % (name, value))
        hooks = _checked_hooks(hooks, 'hooks')
        listeners = list(saving_listeners or ())
        if self._config.cluster_spec.jobs:
            raise EstimatorError(
                'training across processes (TF_CONFIG with a cluster: task %s %s) is not '
                'provided by towers-legacy yet; unset TF_CONFIG to train in this process'
                % (self._config.task_type, self._config.task_id))
        if max_steps is not None and self._checkpoint_step() >= max_steps:
            tf.logging.info('Skipping training since max_steps has already saved.')
            return self
        self._train_input_fn = input_fn
        with preemption.stop_signals() as stop:
            final_loss = self._train(input_fn, hooks, steps, max_steps,
                                     [_EndUnlessStopped(listener, stop) for listener in listeners])
        if stop.requested:
            raise SystemExit(stop.exit_status)
        tf.logging.info('Loss for final step: %s.', final_loss)
        return self

    def _train(self, input_fn, hooks, steps, max_steps, listeners):
        config = self._config
        with self._new_graph().as_default():
            global_step = tf.train.get_or_create_global_step()
            features, labels, input_hooks = calls.call_input_fn(
                input_fn, ModeKeys.TRAIN, self.params, self.config)
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN)
            if self._warm_start is not None:
                tf.train.warm_start(*self._warm_start)
            if not any(summary.op.name == 'loss'
                       for summary in tf.get_collection(tf.GraphKeys.SUMMARIES)):
                tf.summary.scalar('loss', spec.loss)
            scaffold = spec.scaffold
            # Built when the session is made, after the hooks' `begin`: it saves the variables
            # they make too (an early-stopping hook's flag), as TF 1.x's did.
            saver = scaffold.saver or _collected_saver() or tf.train.Saver(
                sharded=True, max_to_keep=config.keep_checkpoint_max,
                keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours,
                defer_build=True, save_relative_paths=True)
            summary_op = ({} if not config.save_summary_steps
                          else scaffold.summary_op or tf.summary.merge_all())
            final = calls.FinalLossHook(spec.loss)
            train_hooks = list(input_hooks) + list(spec.training_hooks) + hooks + [final]
            step_hooks = []
            if config.is_chief:
                train_hooks += list(spec.training_chief_hooks)
                train_hooks.append(calls.GraphWriterHook(self._model_dir))
            if config.log_step_count_steps:
                step_hooks.append(lambda steps_done: calls.LossLoggingHook(
                    steps_done, spec.loss, config.log_step_count_steps))
                if config.is_chief:
                    writer = tf.summary.FileWriterCache.get(self._model_dir)
                    step_hooks.append(lambda steps_done: calls.StepRateHook(
                        steps_done, config.log_step_count_steps, writer))
            tf.gfile.MakeDirs(self._model_dir)
            training_loop.train(
                spec.train_op, spec.loss, global_step, self._model_dir, max_steps,
                calls.batch_size(features), config=self._session_config(),
                summary_op=summary_op, saver=saver, log_every_n_steps=None,
                save_summaries_steps=config.save_summary_steps,
                save_checkpoint_secs=config.save_checkpoints_secs,
                save_checkpoint_steps=config.save_checkpoints_steps, master=config.master,
                is_chief=config.is_chief, hooks=train_hooks, scaffold=scaffold,
                saving_listeners=listeners, save_initial_checkpoint=True, steps=steps,
                step_hooks=step_hooks)
        return final.loss

    # Evaluation.

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Evaluates the newest checkpoint (or `checkpoint_path`) on `steps` batches of
        `input_fn` (all of them when None), writes the metrics to `eval_dir(name)`.

        Returns:
          A dict: each of the `model_fn`'s `eval_metric_ops`, 'loss' (the mean of the loss
          over the batches) and 'global_step' (the checkpoint's).
        """
        if steps is not None and steps <= 0:
            raise EstimatorError('Must specify steps > 0, given: %s' % steps)
        hooks = _checked_hooks(hooks, 'hooks')
        checkpoint = self._readable_checkpoint(checkpoint_path, 'evaluate')
        if checkpoint is None:
            tf.logging.info('Could not find trained model in model_dir: %s, running '
                            'initialization to evaluate.', self._model_dir)

        def build():
            global_step = tf.train.get_or_create_global_step()
            features, labels, input_hooks = calls.call_input_fn(
                input_fn, ModeKeys.EVAL, self.params, self.config)
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL)
            if LOSS_METRIC_KEY in spec.eval_metric_ops:
                raise EstimatorError('Metric with name "%s" is not allowed, because Estimator '
                                     'already defines a default metric with the same name.'
                                     % LOSS_METRIC_KEY)
            metrics = dict(spec.eval_metric_ops)
            metrics[LOSS_METRIC_KEY] = tf.metrics.mean(spec.loss)
            return {'update': tf.group(*[update for _, update in metrics.values()]),
                    'values': {key: value for key, (value, _) in metrics.items()},
                    'global_step': global_step, 'local_init': tf.local_variables_initializer(),
                    'hooks': list(input_hooks) + list(spec.evaluation_hooks),
                    'saver': spec.scaffold.saver}

        tf.logging.info('Starting evaluation at %s', time.strftime('%Y-%m-%dT%H:%M:%S'))
        with self._restored(build, checkpoint, self._statistics(checkpoint)) as net:
            ends = tf.train.FinalOpsHook({'values': net.outputs['values'],
                                          'global_step': net.outputs['global_step']})
            for _ in self._run(net, net.outputs['update'], net.outputs['hooks'] + hooks
                               + [_EvaluationStepsHook(steps), ends]):
                pass
        tf.logging.info('Finished evaluation at %s', time.strftime('%Y-%m-%dT%H:%M:%S'))
        results = dict(ends.final_ops_values['values'])
        results['global_step'] = int(ends.final_ops_values['global_step'])
        tf.logging.info('Saving dict for global step %d: %s', results['global_step'],
                        ', '.join('%s = %s' % item for item in sorted(results.items())))
        _write_summaries(self.eval_dir(name), results, checkpoint)
        return results

    def _restored(self, build, checkpoint, statistics=None):
        """`towers.evaluation.Restored` of the graph `build` makes (with the `model_fn`'s
        scaffold's saver, under 'saver' in what it returns): that saver's variables (every
        global variable by default) from `checkpoint`, or initialised when it is None; its
        batch norm normalising with `statistics` (the moving averages by default)."""
        savers = {}

        def build_seeded():
            graph = tf.get_default_graph()
            if self._config.tf_random_seed is not None:
                graph.seed = self._config.tf_random_seed
            outputs = build()
            savers[graph] = outputs['saver']
            return outputs

        def var_list():
            saver = savers.get(tf.get_default_graph())
            if saver is None or saver._var_list is None:
                return tf.global_variables()
            return saver._var_list

        return Restored(build_seeded, checkpoint, var_list=var_list,
                        config=self._session_config(), statistics=statistics)

    def _statistics(self, checkpoint):
        """What `evaluate` normalises batch norm with: precise statistics of the training
        input under `use_precise_bn`, else (or before any training) the moving averages."""
        if not _precise_bn_batches or checkpoint is None:
            return None
        if self._train_input_fn is None:
            tf.logging.warning('precise batch-norm statistics need the training input, and '
                               'this Estimator has not trained in this process: evaluating '
                               'with the moving averages')
            return None
        input_fn = self._train_input_fn

        def network_fn(batch):
            features, labels = batch if isinstance(batch, tuple) else (batch, None)
            tf.train.get_or_create_global_step()
            self._call_model_fn(features, labels, ModeKeys.EVAL)

        return PreciseBN(lambda: self._numpy_batches(input_fn), _precise_bn_batches[0],
                         network_fn)

    def _numpy_batches(self, input_fn):
        """The training input's batches as numpy: (features, labels), or features alone.

        The graph is the default one only while it is built: a consumer may stop iterating
        anywhere."""
        graph = self._new_graph()
        with graph.as_default():
            features, labels, hooks = calls.call_input_fn(input_fn, ModeKeys.TRAIN, self.params,
                                                          self.config)
            batch = features if labels is None else (features, labels)
            for hook in hooks:
                hook.begin()
        coordinator = tf.train.Coordinator()
        with tf.Session(graph=graph, config=self._session_config()) as session:
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

    def _run(self, net, fetches, hooks):
        """Runs `fetches` under a `MonitoredSession` of `net`'s restored session with `hooks`
        until a hook asks to stop or the input ends; returns the values of each run."""
        with net.graph.as_default():
            creator = _GivenSession(net.session, net.outputs['local_init'])
            with tf.train.MonitoredSession(session_creator=creator, hooks=hooks) as session:
                while not session.should_stop():
                    yield session.run(fetches)

    # Prediction.

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yields the predictions of the newest checkpoint (or `checkpoint_path`) on every
        batch of `input_fn` until it ends: one dict (or array, for a `model_fn` whose
        predictions are one tensor) per example, or per batch without
        `yield_single_examples`."""
        hooks = _checked_hooks(hooks, 'hooks')
        checkpoint = self._readable_checkpoint(checkpoint_path, 'predict')
        if checkpoint is None:
            tf.logging.info('Could not find trained model in model_dir: %s, running '
                            'initialization to predict.', self._model_dir)

        def build():
            tf.train.get_or_create_global_step()
            features, _, input_hooks = calls.call_input_fn(
                input_fn, ModeKeys.PREDICT, self.params, self.config)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT)
            return {'predictions': _selected(spec.predictions, predict_keys),
                    'local_init': tf.local_variables_initializer(),
                    'hooks': list(input_hooks) + list(spec.prediction_hooks),
                    'saver': spec.scaffold.saver}

        with self._restored(build, checkpoint) as net:
            predictions = net.outputs['predictions']
            for batch in self._run(net, predictions, net.outputs['hooks'] + hooks):
                if not yield_single_examples:
                    yield batch
                    continue
                if not isinstance(batch, dict):
                    yield from batch
                    continue
                sizes = {key: len(value) for key, value in batch.items()}
                if len(set(sizes.values())) != 1:
                    raise EstimatorError('Batch length of predictions should be same: %s'
                                         % sizes)
                for index in range(next(iter(sizes.values()))):
                    yield {key: value[index] for key, value in batch.items()}

    # Export.

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                           assets_extra=None, as_text=False, checkpoint_path=None,
                           experimental_mode=ModeKeys.PREDICT):
        """Writes the `model_fn`'s network in `experimental_mode` (PREDICT), restored from the
        newest checkpoint, as a SavedModel in a new folder `export_dir_base/<timestamp>`, with
        a signature per `export_outputs` entry (TF 1.x's names: 'serving_default', ...);
        `assets_extra` ({path inside assets.extra: a file}) copied beside it, its graph as
        text with `as_text`.

        Returns:
          The new folder's path, as bytes (as TF 1.x returned it).
        """
        for inside, source in (assets_extra or {}).items():
            if not os.path.isfile(source):
                raise EstimatorError('export_saved_model: assets_extra[%r] is %s, which is no '
                                     'file' % (inside, source))
        checkpoint = self._readable_checkpoint(checkpoint_path, 'export_saved_model')
        if checkpoint is None:
            raise EstimatorError("Couldn't find trained model at %s." % self._model_dir)
        signature_defs = {}

        def build():
            tf.train.get_or_create_global_step()
            receiver = serving_input_receiver_fn()
            if not hasattr(receiver, 'receiver_tensors'):
                raise EstimatorError(
                    'serving_input_receiver_fn returned %s: expected a '
                    'tf.estimator.export.ServingInputReceiver' % type(receiver).__name__)
            spec = self._call_model_fn(receiver.features, None, experimental_mode)
            outputs = export_utils.export_outputs_for_mode(
                experimental_mode, serving_export_outputs=spec.export_outputs,
                predictions=spec.predictions, loss=spec.loss,
                metrics=spec.eval_metric_ops or None)
            signature_defs.update(export_utils.build_all_signature_defs(
                receiver.receiver_tensors, outputs,
                getattr(receiver, 'receiver_tensors_alternatives', None),
                serving_only=experimental_mode == ModeKeys.PREDICT))
            inputs = receiver.receiver_tensors
            predictions = spec.predictions
            return (inputs if isinstance(inputs, dict) else {'input': inputs},
                    predictions if isinstance(predictions, dict) else {'output': predictions})

        export_dir = export_utils.get_timestamped_export_dir(export_dir_base).decode()
        export_lib.save(export_lib.Serving(build, 'the model of %s' % self._model_dir,
                                           signature_defs=lambda: signature_defs),
                        checkpoint, export_dir, as_text=as_text, assets_extra=assets_extra)
        tf.logging.info('SavedModel written to: %s', export_dir)
        return export_dir.encode()

    def export_savedmodel(self, export_dir_base, serving_input_receiver_fn, assets_extra=None,
                          as_text=False, checkpoint_path=None, strip_default_attrs=False):
        """TF 1.x's older name of `export_saved_model`."""
        return self.export_saved_model(export_dir_base, serving_input_receiver_fn,
                                       assets_extra, as_text, checkpoint_path)


def _collected_saver():
    savers = tf.get_collection(tf.GraphKeys.SAVERS)
    return savers[0] if len(savers) == 1 else None


def _checked_hooks(hooks, what):
    hooks = list(hooks or ())
    for hook in hooks:
        if not isinstance(hook, tf.train.SessionRunHook):
            raise EstimatorError('%s must be tf.train.SessionRunHooks, got %s'
                                 % (what, type(hook).__name__))
    return hooks


def _selected(predictions, keys):
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


class _EndUnlessStopped(tf.train.CheckpointSaverListener):
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


class _GivenSession(tf.train.SessionCreator):
    """Hands a `MonitoredSession` the restored session, its local variables initialised."""

    def __init__(self, session, local_init):
        self._session = session
        self._local_init = local_init

    def create_session(self):
        self._session.run(self._local_init)
        return self._session


class _EvaluationStepsHook(tf.train.SessionRunHook):
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


def _write_summaries(directory, results, checkpoint):
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
