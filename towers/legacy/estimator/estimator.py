"""`tf.estimator.Estimator`: TF 1.15's training API, as a thin face over this project's loop.

    estimator = tf.estimator.Estimator(model_fn, model_dir='/tmp/model', params={...})
    estimator.train(train_input_fn, max_steps=1000)
    metrics = estimator.evaluate(eval_input_fn)        # {'loss': ..., 'global_step': 1000, ...}

Each call builds a new graph, as TF 1.x's did: the `input_fn`'s input (on the CPU), the
`model_fn`'s network of one mode. `train` runs it through `towers.training.loop.train`;
`evaluate` and `predict` restore through `towers.evaluation.Restored`; `export_saved_model`
writes the serving graph through `towers.export.save`, `experimental_export_all_saved_models`
a graph per mode (`exporting`; docs/estimator.md: what a TF 1.x user saw, and sees).
"""
import contextlib
import copy
import os
import time

from towers import bars
from towers.compat import tf
from towers.legacy.estimator import (calls, cluster, distribute, exporting, replicas, running,
                                     warm_start)
from towers.legacy.estimator.spec import EstimatorError, ModeKeys
from towers.legacy.modules import RemovedAttributeError
from towers.training import checkpoints, preemption
from towers.training import loop as training_loop


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
        a `RunConfig`; `model_fn` is None, takes no `features`, or arguments an Estimator does
        not give, or no `params` while `params` are given; a subclass redefines a member.
    """

    def __init__(self, model_fn, model_dir=None, config=None, params=None,
                 warm_start_from=None):
        running.check_not_overridden(self, __name__)
        self._config = running.config_with_model_dir(config, model_dir)
        self._model_dir = self._config.model_dir
        self._session_config = self._config.session_config
        calls.check_model_fn(model_fn, params)
        self._model_fn = model_fn
        self._params = copy.deepcopy(params or {})
        self._warm_start_settings = warm_start.warm_start_settings(warm_start_from)
        self._train_input_fn = None
        self._placement = None
        # The step timing of the last `train` (`towers.training.loop.train`'s), which TF 1.x's
        # Estimator did not keep: for `towers.benchmarks.estimator`.
        self._training_timing = None
        self._train_devices = distribute.replica_devices(self._config.train_distribute,
                                                         'train_distribute')
        self._eval_devices = distribute.replica_devices(self._config.eval_distribute,
                                                        'eval_distribute')
        tf.logging.info('Using config: %s', self._config.logged())

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

    def _session_config_on(self, devices=None):
        return distribute.session_config(self._session_config, devices)

    # Checkpoints.

    def latest_checkpoint(self):
        """The newest checkpoint's prefix in `model_dir`, or None."""
        return tf.train.latest_checkpoint(self._model_dir)

    def _checkpoint_or_initial_values(self, checkpoint_path, what):
        """The checkpoint `evaluate` or `predict` restores; None, said in one line, when
        `model_dir` holds none: they run the initial values then, as TF 1.15's did."""
        checkpoint = self._readable_checkpoint(checkpoint_path, what)
        if checkpoint is None:
            tf.logging.info('Could not find trained model in model_dir: %s, running '
                            'initialization to %s.', self._model_dir, what)
        return checkpoint

    def _readable_checkpoint(self, checkpoint_path, what):
        return running.readable_checkpoint(checkpoint_path or self._model_dir, what,
                                           checkpoint_path is not None)

    @calls.in_a_graph
    def get_variable_names(self):
        """The names of the variables in the newest checkpoint."""
        return [name for name, _ in tf.train.list_variables(self._require_checkpoint())]

    @calls.in_a_graph
    def get_variable_value(self, name):
        """The value (a numpy array) of variable `name` in the newest checkpoint."""
        return tf.train.load_variable(self._require_checkpoint(), name)

    def _require_checkpoint(self):
        checkpoint = self.latest_checkpoint()
        if checkpoint is None:
            raise EstimatorError('Could not find trained model in model_dir: %s (the Estimator '
                                 'is not trained yet).' % self._model_dir)
        return checkpoint

    def eval_dir(self, name=None):
        """Where `evaluate` writes its events: `model_dir/eval` or `model_dir/eval_<name>`."""
        return os.path.join(self._model_dir, 'eval' if not name else 'eval_' + name)

    def _checkpoint_step(self):
        return checkpoints.saved_step(self.latest_checkpoint())

    # Training.

    @calls.in_a_graph
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains `steps` more steps, or up to the global step `max_steps`, or (neither given)
        until `input_fn`'s input ends; resumes from the newest checkpoint of `model_dir`.

        A SIGTERM or Ctrl-C ends training after the current step with a checkpoint of it, and
        the program with status 143 or 130 (a rerun resumes from there).

        Returns:
          self.
        """
        running.check_trains(self._config)
        if steps is not None and max_steps is not None:
            raise EstimatorError('Can not provide both steps and max_steps.')
        for name, value in (('steps', steps), ('max_steps', max_steps)):
            if value is not None and value <= 0:
                raise EstimatorError('Must specify %s > 0, given: %s' % (name, value))
        if max_steps is not None and self._checkpoint_step() >= max_steps:
            tf.logging.info('Skipping training since max_steps has already saved.')
            return self
        hooks = running.checked_hooks(hooks)
        listeners = running.checked_listeners(saving_listeners)
        if self._config.cluster_spec.jobs and self._placement is None:
            raise EstimatorError(
                'Estimator.train with a TF_CONFIG cluster (task %s %s) needs the task\'s '
                'server: train through tf.estimator.train_and_evaluate, which starts it, or '
                'unset TF_CONFIG to train in this process'
                % (self._config.task_type, self._config.task_id))
        self._train_input_fn = input_fn
        with preemption.stop_signals() as stop:
            final_loss = self._train(input_fn, hooks, steps, max_steps,
                                     [running.EndUnlessStopped(listener, stop)
                                      for listener in listeners])
        if stop.requested:
            raise SystemExit(stop.exit_status)
        tf.logging.info('Loss for final step: %s.', final_loss)
        return self

    @contextlib.contextmanager
    def placed(self, make_placement):
        """Within: training runs where `make_placement(session_config)` (a `cluster.Placement`)
        says, a cluster task's server (`cluster.run`)."""
        self._placement = make_placement
        try:
            yield
        finally:
            self._placement = None

    def _train(self, input_fn, hooks, steps, max_steps, listeners):
        config = self._config
        session_config = self._session_config_on(self._train_devices)
        placement = (self._placement(session_config) if self._placement is not None
                     else cluster.local_placement(config, session_config, self._train_devices))
        with self._new_graph().as_default(), tf.device(placement.device_fn):
            global_step = tf.train.get_or_create_global_step()
            spec, input_hooks, examples_per_step = self._training_spec(input_fn, placement)
            running.check_saver_for(listeners, config, spec.training_chief_hooks)
            warm_start.apply(self._warm_start_settings)
            if not any(summary.op.name == 'loss'
                       for summary in tf.get_collection(tf.GraphKeys.SUMMARIES)):
                tf.summary.scalar('loss', spec.loss)
            scaffold = spec.scaffold
            # Built when the session is made, after the hooks' `begin`: it saves the variables
            # they make too (an early-stopping hook's flag), as TF 1.x's did.
            saver = scaffold.saver or running.collected_saver()
            if saver is None:
                saver = tf.train.Saver(
                    sharded=True, max_to_keep=config.keep_checkpoint_max,
                    keep_checkpoint_every_n_hours=config.keep_checkpoint_every_n_hours,
                    defer_build=True, save_relative_paths=True)
                tf.add_to_collection(tf.GraphKeys.SAVERS, saver)
            summary_op = ({} if not config.save_summary_steps
                          else running.summary_op(scaffold))
            final = calls.FinalLossHook(spec.loss)
            train_hooks = (list(input_hooks) + list(spec.training_hooks) + hooks + [final]
                           + placement.hooks())
            step_hooks = []
            if placement.is_chief:
                train_hooks += list(spec.training_chief_hooks)
                train_hooks.append(calls.GraphWriterHook(self._model_dir))
            if config.log_step_count_steps:
                # The rate's line before the loss's of the same step, as TF 1.15 logged them.
                if placement.is_chief:
                    writer = tf.summary.FileWriterCache.get(self._model_dir)
                    step_hooks.append(lambda steps_done: calls.StepRateHook(
                        steps_done, config.log_step_count_steps, writer))
                step_hooks.append(lambda steps_done: calls.LossLoggingHook(
                    steps_done, spec.loss, config.log_step_count_steps))
            tf.gfile.MakeDirs(self._model_dir)
            if placement.is_chief:
                calls.log_checkpoint_hook(config, train_hooks)
            self._training_timing = training_loop.train(
                spec.train_op, spec.loss, global_step, self._model_dir, max_steps,
                examples_per_step, num_towers=len(placement.replica_devices or ()) or 1,
                config=placement.session_config,
                summary_op=summary_op, saver=saver, log_every_n_steps=None,
                save_summaries_steps=config.save_summary_steps,
                save_checkpoint_secs=config.save_checkpoints_secs,
                save_checkpoint_steps=config.save_checkpoints_steps, master=placement.master,
                is_chief=placement.is_chief, hooks=train_hooks, scaffold=scaffold,
                saving_listeners=listeners, save_initial_checkpoint=True, steps=steps,
                step_hooks=step_hooks, as_tf1_estimator=True).timing
        return final.loss

    def _training_spec(self, input_fn, placement):
        """(spec, input hooks, examples per step) of the training graph: the `model_fn` once,
        or once per device of the placement's replicas (`replicas`)."""
        if placement.replica_devices:
            return replicas.training_spec(self._call_model_fn, input_fn, self.params,
                                          self.config, placement)
        features, labels, input_hooks = calls.call_input_fn(
            input_fn, ModeKeys.TRAIN, self.params, self.config)
        spec = self._call_model_fn(features, labels, ModeKeys.TRAIN)
        return spec, input_hooks, calls.batch_size(features)

    # Evaluation.

    @calls.in_a_graph
    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """Evaluates the newest checkpoint (or `checkpoint_path`) on `steps` batches of
        `input_fn` (all of them when None), writes the metrics to `eval_dir(name)`.

        Returns:
          A dict: each of the `model_fn`'s `eval_metric_ops`, 'loss' (the mean of the loss
          over the batches) and 'global_step' (the checkpoint's).
        """
        if steps is not None and steps <= 0:
            raise EstimatorError('Must specify steps > 0, given: %s' % steps)
        hooks = running.checked_hooks(hooks, 'hooks')
        checkpoint = self._checkpoint_or_initial_values(checkpoint_path, 'evaluate')

        def build():
            global_step = tf.train.get_or_create_global_step()
            if self._eval_devices:
                features, labels, input_hooks = replicas.evaluation_input(
                    input_fn, self.params, self.config, len(self._eval_devices))
            else:
                features, labels, input_hooks = calls.call_input_fn(
                    input_fn, ModeKeys.EVAL, self.params, self.config)
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL)
            warm_start.apply(self._warm_start_settings, checkpoint)
            # After the model_fn, local time marked 'Z', as TF 1.15 logged it.
            tf.logging.info('Starting evaluation at %s', time.strftime('%Y-%m-%dT%H:%M:%SZ'))
            return running.evaluation_outputs(spec, global_step, input_hooks)

        with self._restored(build, checkpoint, self._statistics(checkpoint)) as net:
            ends = tf.train.FinalOpsHook({'values': net.outputs['values'],
                                          'global_step': net.outputs['global_step']})
            for _ in bars.bar(running.run_monitored(
                    net, net.outputs['update'],
                    net.outputs['hooks'] + hooks + [running.EvaluationStepsHook(steps), ends]),
                    'evaluate', 'batches', total=steps):
                pass
        tf.logging.info('Finished evaluation at %s', time.strftime('%Y-%m-%d-%H:%M:%S'))
        results = dict(ends.final_ops_values['values'])
        results['global_step'] = int(ends.final_ops_values['global_step'])
        running.write_summaries(self.eval_dir(name), results, checkpoint)
        return results

    def _restored(self, build, checkpoint, statistics=None):
        return running.restored(build, checkpoint, self._config.tf_random_seed,
                                self._session_config_on(), statistics)

    def _statistics(self, checkpoint):
        """What `evaluate` normalises batch norm with: precise statistics of the training
        input under `running.use_precise_bn`, else (or before any training) the moving
        averages (None)."""
        if not running.precise_bn_batches() or checkpoint is None:
            return None
        return running.precise_statistics(self._train_input_fn, self._call_model_fn,
                                          self.params, self.config, self._session_config_on())

    # Prediction.

    @calls.in_a_graph
    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yields the predictions of the newest checkpoint (or `checkpoint_path`) on every
        batch of `input_fn` until it ends: one dict (or array, for a `model_fn` whose
        predictions are one tensor) per example, or per batch without
        `yield_single_examples`."""
        hooks = running.checked_hooks(hooks, 'hooks')
        checkpoint = self._checkpoint_or_initial_values(checkpoint_path, 'predict')

        def build():
            tf.train.get_or_create_global_step()
            features, _, input_hooks = calls.call_input_fn(
                input_fn, ModeKeys.PREDICT, self.params, self.config)
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT)
            warm_start.apply(self._warm_start_settings, checkpoint)
            running.warn_unless_input_ends(features)
            return {'predictions': running.selected(spec.predictions, predict_keys),
                    'local_init': tf.local_variables_initializer(),
                    'hooks': list(input_hooks) + list(spec.prediction_hooks),
                    'saver': spec.scaffold.saver}

        with self._restored(build, checkpoint) as net:
            predictions = net.outputs['predictions']
            for batch in running.run_monitored(net, predictions, net.outputs['hooks'] + hooks):
                yield from running.examples(batch) if yield_single_examples else [batch]

    # Export.

    @calls.in_a_graph
    def export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                           assets_extra=None, as_text=False, checkpoint_path=None,
                           experimental_mode=ModeKeys.PREDICT):
        """Writes the `model_fn`'s network in `experimental_mode` (PREDICT), restored from the
        newest checkpoint (or, before any, the warm start's), as a SavedModel in a new folder
        `export_dir_base/<timestamp>`, with a signature per `export_outputs` entry (TF 1.x's
        names: 'serving_default', ...); `assets_extra` ({path inside assets.extra: a file})
        copied beside it, its graph as text with `as_text`.

        Returns:
          The new folder's path, as bytes (as TF 1.x returned it).
        """
        if experimental_mode != ModeKeys.PREDICT:
            return self.experimental_export_all_saved_models(
                export_dir_base, {experimental_mode: serving_input_receiver_fn}, assets_extra,
                as_text, checkpoint_path)
        return exporting.export_serving(self, export_dir_base, serving_input_receiver_fn,
                                        assets_extra, as_text, checkpoint_path)

    @calls.in_a_graph
    def experimental_export_all_saved_models(self, export_dir_base, input_receiver_fn_map,
                                             assets_extra=None, as_text=False,
                                             checkpoint_path=None):
        """Writes one SavedModel in a new folder `export_dir_base/<timestamp>` holding the
        `model_fn`'s graph of each mode of `input_receiver_fn_map` (`ModeKeys` value -> its
        receiver fn), each under its tags (TF 1.15's `EXPORT_TAG_MAP`).

        Returns:
          The new folder's path, as bytes.
        """
        return exporting.export_all(self, export_dir_base, input_receiver_fn_map,
                                    assets_extra, as_text, checkpoint_path)

    def export_savedmodel(self, export_dir_base, serving_input_receiver_fn, assets_extra=None,
                          as_text=False, checkpoint_path=None, strip_default_attrs=False):
        """TF 1.x's older name of `export_saved_model` (`EstimatorV2` has it no more)."""
        return self.export_saved_model(export_dir_base, serving_input_receiver_fn,
                                       assets_extra, as_text, checkpoint_path)


class EstimatorV2(Estimator):
    """TF 1.15's `tf.estimator.Estimator` of TF 2.x's API: `Estimator` without
    `export_savedmodel`."""

    @property
    def export_savedmodel(self):
        raise RemovedAttributeError('`Estimator.export_savedmodel` has been deprecated. Please '
                                    'use `export_saved_model` instead.')
