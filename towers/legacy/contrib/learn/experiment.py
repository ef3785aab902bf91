"""`tf.contrib.learn.Experiment`: an Estimator with its training and evaluation input, and the
schedules `learn_runner` runs on it (TF 1.x's, on `tf.estimator.Estimator`).

    experiment = tf.contrib.learn.Experiment(estimator, train_input_fn, eval_input_fn,
                                             train_steps=1000, eval_steps=100)
    experiment.train_and_evaluate()          # -> (eval_result, export_results)

The schedules, as TF 1.x ran them:

- `train_and_evaluate` (a single machine's, and a 'master' task's): trains `train_steps`, and
  meanwhile evaluates each new checkpoint at most every `min_eval_frequency` steps (default 1:
  every new checkpoint, looked for at most every `check_interval_secs`; 0: none), or with
  `checkpoint_and_export` after each checkpoint saved, exporting too; then evaluates the last
  checkpoint and exports. Evaluations go to `model_dir/eval` ('Validation (step N): ...').
- `train` (a 'worker' task's): trains, after `min(60, 5 * task_id)` seconds.
- `evaluate`: waits `eval_delay_secs` (120), evaluates once ('eval_one_pass').
- `continuous_eval`, `continuous_eval_on_train_data`: evaluate each new checkpoint, at most every
  `continuous_eval_throttle_secs`, until the global step reaches `train_steps`.
- `continuous_train_and_eval`: trains `train_steps_per_iteration` steps, evaluates, and again.
- `local_run`, `test` (one step of each), `run_std_server` (a 'ps' task's).

The estimator is a `tf.estimator.Estimator` (its metrics the `model_fn`'s `eval_metric_ops`,
its monitors session-run hooks), or one of contrib.learn's interfaces `Evaluable` and `Trainable`
(trained by `fit`, evaluated with `eval_metrics`); contrib.learn's own estimators are not
provided.
"""
import math
import os
import time

from towers.compat import tf
from towers.legacy.contrib.learn.export import ExportStrategy
from towers.legacy.contrib.learn.interfaces import ContribAsCore, Evaluable, Trainable
from towers.legacy.estimator import calls
from towers.legacy.estimator.spec import EstimatorError


class Experiment:
    """TF 1.x's `Experiment` (its arguments and schedules; see the module).

    Raises:
      EstimatorError: `estimator` is neither a `tf.estimator.Estimator` nor an `Evaluable` and
        `Trainable`; `eval_metrics` given with the one, `saving_listeners` with the other; an
        export strategy is not an `ExportStrategy`, or `train_steps_per_iteration` is not an
        int.
    """

    def __init__(self, estimator, train_input_fn, eval_input_fn, eval_metrics=None,
                 train_steps=None, eval_steps=100, train_monitors=None, eval_hooks=None,
                 local_eval_frequency=None, eval_delay_secs=120,
                 continuous_eval_throttle_secs=60, min_eval_frequency=None,
                 delay_workers_by_global_step=False, export_strategies=None,
                 train_steps_per_iteration=None, checkpoint_and_export=False,
                 saving_listeners=None, check_interval_secs=5):
        self._core = _as_core(estimator, eval_metrics, saving_listeners)
        if (train_steps_per_iteration is not None
                and not isinstance(train_steps_per_iteration, int)):
            raise EstimatorError('Experiment: train_steps_per_iteration must be an int, got %r'
                                 % (train_steps_per_iteration,))
        self._estimator = estimator
        self._eval_metrics = eval_metrics
        self._train_input_fn = train_input_fn
        self._eval_input_fn = eval_input_fn
        self._train_steps = train_steps
        self._eval_steps = eval_steps
        self._train_hooks = list(train_monitors or ())
        self._eval_hooks = list(eval_hooks or ())
        self._local_eval_frequency = local_eval_frequency
        self._eval_delay_secs = eval_delay_secs
        self._continuous_eval_throttle_secs = continuous_eval_throttle_secs
        self._min_eval_frequency = 1 if min_eval_frequency is None else min_eval_frequency
        self._delay_workers_by_global_step = delay_workers_by_global_step
        self._train_steps_per_iteration = train_steps_per_iteration
        self._checkpoint_and_export = checkpoint_and_export
        self._saving_listeners = list(saving_listeners or ())
        self._check_interval_secs = check_interval_secs
        self._export_strategies = _export_strategies(export_strategies)

    @property
    def estimator(self):
        return self._estimator

    @property
    def eval_metrics(self):
        return self._eval_metrics

    @property
    def train_steps(self):
        return self._train_steps

    @property
    def eval_steps(self):
        return self._eval_steps

    def extend_train_hooks(self, additional_hooks):
        """Adds session-run hooks to training."""
        self._train_hooks.extend(additional_hooks)

    def reset_export_strategies(self, new_export_strategies=None):
        """Replaces the export strategies; returns the old ones (a tuple)."""
        old, self._export_strategies = (self._export_strategies,
                                        _export_strategies(new_export_strategies))
        return old

    def train(self, delay_secs=None):
        """Trains up to `train_steps` (forever when None), after `delay_secs` (by default 5 s
        per task index, at most 60, or by global step with `delay_workers_by_global_step`);
        starts this task's server first in a 'cloud' cluster. Returns the estimator."""
        return self._train(delay_secs, self._train_hooks, self._saving_listeners)

    def _train(self, delay_secs, hooks, saving_listeners):
        config = self._estimator.config
        if (getattr(config, 'environment', None) not in (None, 'local', 'google')
                and config.cluster_spec and config.master):
            self._start_server()
        extra_hooks = []
        if delay_secs is None:
            task_id = config.task_id or 0
            if self._delay_workers_by_global_step:
                extra_hooks.append(tf.train.GlobalStepWaiterHook(
                    int(8000.0 * math.log(task_id + 1))))
                delay_secs = 0
            else:
                delay_secs = min(60, task_id * 5)
        _wait(delay_secs, 'training')
        return self._core.train(self._train_input_fn, hooks=list(hooks) + extra_hooks,
                                max_steps=self._train_steps, saving_listeners=saving_listeners)

    def evaluate(self, delay_secs=None, name=None):
        """Evaluates the newest checkpoint on `eval_steps` batches after `delay_secs`
        (`eval_delay_secs` by default); returns the metrics."""
        _wait(self._eval_delay_secs if delay_secs is None else delay_secs, 'evaluation')
        return self._evaluate(name or 'one_pass')

    def _evaluate(self, name, checkpoint_path=None, input_fn=None):
        return self._core.evaluate(input_fn or self._eval_input_fn, steps=self._eval_steps,
                                   name=name, checkpoint_path=checkpoint_path,
                                   hooks=self._eval_hooks)

    def local_run(self):
        """`train_and_evaluate`, evaluating every `local_eval_frequency` steps (None: after
        training only)."""
        frequency, self._min_eval_frequency = self._min_eval_frequency, self._local_eval_frequency
        try:
            return self.train_and_evaluate()
        finally:
            self._min_eval_frequency = frequency

    def train_and_evaluate(self):
        """Trains, evaluating new checkpoints meanwhile, then evaluates and exports (see the
        module). Returns (the last evaluation's metrics, the export results)."""
        config = self._estimator.config
        hooks, listeners = list(self._train_hooks), list(self._saving_listeners)
        evaluations = None
        if self._checkpoint_and_export and (config.save_checkpoints_secs
                                            or config.save_checkpoints_steps):
            evaluations = _EvaluateAfterSave(self)
            listeners.append(evaluations)
        elif self._min_eval_frequency:
            hooks.append(_EvaluateNewCheckpoints(self, self._min_eval_frequency,
                                                 self._check_interval_secs))
        self._train(0, hooks, listeners)
        if evaluations is not None and evaluations.eval_result is not None:
            return evaluations.eval_result, evaluations.export_results
        eval_result = self._evaluate(None)
        return eval_result, self._maybe_export(eval_result)

    def continuous_train_and_eval(self, continuous_eval_predicate_fn=None):
        """Trains `train_steps_per_iteration` steps (default a tenth of `train_steps`, or 1000),
        evaluates ('one_pass') and exports, until `continuous_eval_predicate_fn(eval_result[,
        checkpoint_path])` is False or the global step reaches `train_steps`. Returns (the
        last metrics, the last export results)."""
        predicate = _predicate(continuous_eval_predicate_fn)
        steps = self._train_steps_per_iteration or (
            int(self._train_steps / 10) if self._train_steps is not None else 1000)
        eval_result = export_results = checkpoint = None
        while predicate is None or predicate(eval_result,
                                             checkpoint if eval_result else None):
            if self._training_done(eval_result):
                tf.logging.info('Stop training model as max steps reached')
                break
            tf.logging.info('Training model for %s steps', steps)
            self._core.train(self._train_input_fn, hooks=self._train_hooks,
                             steps=max(steps, 1), saving_listeners=self._saving_listeners)
            checkpoint = tf.train.latest_checkpoint(self._estimator.model_dir)
            tf.logging.info('Evaluating model now.')
            eval_result = self._evaluate('one_pass', checkpoint)
            export_results = self._maybe_export(eval_result)
        return eval_result, export_results

    def continuous_eval(self, delay_secs=None, throttle_delay_secs=None,
                        evaluate_checkpoint_only_once=True, continuous_eval_predicate_fn=None,
                        name='continuous'):
        """Evaluates each new checkpoint (see the module), exporting after each."""
        self._continuous_eval(self._eval_input_fn, name, delay_secs, throttle_delay_secs,
                              evaluate_checkpoint_only_once, continuous_eval_predicate_fn, True)

    def continuous_eval_on_train_data(self, delay_secs=None, throttle_delay_secs=None,
                                      continuous_eval_predicate_fn=None,
                                      name='continuous_on_train_data'):
        """`continuous_eval` on the training input, without exporting."""
        self._continuous_eval(self._train_input_fn, name, delay_secs, throttle_delay_secs,
                              True, continuous_eval_predicate_fn, False)

    def _continuous_eval(self, input_fn, name, delay_secs, throttle_delay_secs, only_once,
                         predicate_fn, export):
        predicate = _predicate(predicate_fn)
        _wait(self._eval_delay_secs if delay_secs is None else delay_secs, 'evaluation')
        throttle = (self._continuous_eval_throttle_secs if throttle_delay_secs is None
                    else throttle_delay_secs)
        previous = eval_result = None
        warned = 0
        while predicate is None or predicate(eval_result, previous if eval_result else None):
            if self._training_done(eval_result):
                tf.logging.info('Exiting continuous eval, global_step=%s >= train_step=%s',
                                eval_result['global_step'], self._train_steps)
                return
            start = time.time()
            latest = tf.train.latest_checkpoint(self._estimator.model_dir)
            if not latest or (only_once and latest == previous):
                eval_result = {}
                if time.time() - warned > 600:
                    tf.logging.warning('Estimator is not fitted yet. Will start an evaluation '
                                       'when a checkpoint is ready.' if not latest else
                                       'No new checkpoint ready for evaluation.')
                    warned = time.time()
            else:
                eval_result = self._evaluate(name, latest, input_fn) or {}
                if export:
                    self._maybe_export(eval_result, latest)
                previous, warned = latest, 0
            _wait(throttle - (time.time() - start), 'the next evaluation')

    def _training_done(self, eval_result):
        step = (eval_result or {}).get('global_step')
        return bool(step and self._train_steps and step >= self._train_steps)

    def test(self):
        """Trains one step, evaluates one batch, exports; returns the metrics."""
        self._core.train(self._train_input_fn, hooks=self._train_hooks, steps=1,
                         saving_listeners=self._saving_listeners)
        eval_result = self._core.evaluate(self._eval_input_fn, steps=1, name='one_pass')
        self._maybe_export(eval_result)
        return eval_result

    def run_std_server(self):
        """Starts this task's `tf.train.Server` and serves until the process ends ('ps')."""
        self._start_server().join()

    def _start_server(self):
        config = self._estimator.config
        if (not config.cluster_spec or not config.task_type or not config.master
                or config.task_id is None):
            raise EstimatorError('Could not start server; be sure to specify cluster_spec, '
                                 'task_type, master, and task in RunConfig or set the '
                                 'TF_CONFIG environment variable.')
        server = tf.train.Server(config.cluster_spec, job_name=config.task_type,
                                 task_index=config.task_id,
                                 config=getattr(config, 'tf_config', None), start=False)
        server.start()
        return server

    def _maybe_export(self, eval_result, checkpoint_path=None):
        """Each export strategy's export into `model_dir/export/<its name>`; their results."""
        base = os.path.join(self._estimator.model_dir, 'export')
        return [strategy.export(self._estimator, os.path.join(base, strategy.name),
                                checkpoint_path=checkpoint_path, eval_result=eval_result)
                for strategy in self._export_strategies]


class _EvaluateNewCheckpoints(tf.train.SessionRunHook):
    """TF 1.x's `ValidationMonitor` as `train_and_evaluate` used it: every `every_n_steps`
    steps, at most every `check_interval_secs`, evaluates the newest checkpoint if it is new."""

    def __init__(self, experiment, every_n_steps, check_interval_secs):
        self._experiment = experiment
        self._every = every_n_steps
        self._interval = check_interval_secs
        self._last_step = self._last_check = self._last_checkpoint = None

    def after_create_session(self, session, coord):
        # Steps count from the global step the session starts at, as TF 1.x's monitors did.
        self._step = int(session.run(tf.train.get_global_step()))

    def after_run(self, run_context, run_values):
        self._step += 1
        step = self._step
        if self._last_step is not None and step - self._last_step < self._every:
            return
        self._last_step = step
        now = time.time()
        if (self._interval is not None and self._last_check is not None
                and now - self._last_check <= self._interval):
            return
        self._last_check = now
        latest = tf.train.latest_checkpoint(self._experiment.estimator.model_dir)
        if latest is None or latest == self._last_checkpoint:
            return
        self._last_checkpoint = latest
        outputs = self._experiment._evaluate(None)
        tf.logging.info('Validation (step %d): %s', step,
                        ', '.join('%s = %s' % item for item in outputs.items()))


class _EvaluateAfterSave(tf.train.CheckpointSaverListener):
    """With `checkpoint_and_export`: evaluates ('intermediate_export') and exports each new
    checkpoint right after it is saved; keeps the last results."""

    def __init__(self, experiment):
        self._experiment = experiment
        self._latest = None
        self.eval_result = self.export_results = None

    def after_save(self, session, global_step_value):
        latest = tf.train.latest_checkpoint(self._experiment.estimator.model_dir)
        if not latest or latest == self._latest:
            tf.logging.warning('Skipping evaluation and export: no new checkpoint')
            return
        self._latest = latest
        self.eval_result = self._experiment._evaluate('intermediate_export', latest)
        self.export_results = self._experiment._maybe_export(self.eval_result, latest)


def _as_core(estimator, eval_metrics, saving_listeners):
    """What trains and evaluates `estimator` in `tf.estimator.Estimator`'s terms: itself, or
    for an `Evaluable` and `Trainable` a `ContribAsCore`."""
    if isinstance(estimator, Evaluable) and isinstance(estimator, Trainable):
        if saving_listeners is not None:
            raise EstimatorError('Experiment: `saving_listeners` must be `None` with '
                                 "tf.contrib.learn's Evaluable and Trainable estimators")
        return ContribAsCore(estimator, eval_metrics)
    if not all(callable(getattr(estimator, name, None)) for name in ('train', 'evaluate')):
        raise EstimatorError('Experiment: `estimator` must implement `tf.contrib.learn.Evaluable` '
                             'and `Trainable`, or be a tf.estimator.Estimator, got %s'
                             % type(estimator).__name__)
    if eval_metrics is not None:
        raise EstimatorError('Experiment: `eval_metrics` must be `None` with '
                             "`tf.estimator.Estimator`: its metrics are the model_fn's "
                             'EstimatorSpec(eval_metric_ops=...) (or '
                             'tf.contrib.estimator.add_metrics)')
    return estimator


def _export_strategies(values):
    """`values` (None, an `ExportStrategy` or an iterable of them) as a tuple."""
    if not values:
        return ()
    values = [values] if isinstance(values, ExportStrategy) else list(values)
    for value in values:
        if not isinstance(value, ExportStrategy):
            raise EstimatorError('Experiment: export_strategies must be ExportStrategy '
                                 'objects (make_export_strategy), got %r' % (value,))
    return tuple(values)


def _predicate(predicate_fn):
    """`predicate_fn` as a function (eval_result, checkpoint_path) -> bool, or None."""
    if predicate_fn is None:
        return None
    if not callable(predicate_fn):
        raise EstimatorError('continuous_eval_predicate_fn must be a callable, or None')
    names, _ = calls.arg_names(predicate_fn)
    if 'checkpoint_path' in names:
        return predicate_fn
    return lambda eval_result, checkpoint_path: predicate_fn(eval_result)


def _wait(seconds, what):
    if seconds and seconds > 0:
        tf.logging.info('Waiting %d secs before starting %s.', seconds, what)
        time.sleep(seconds)
