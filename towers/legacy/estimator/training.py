"""`tf.estimator.train_and_evaluate` on one machine, with its `TrainSpec` and `EvalSpec`.

As TF 1.15 ran it locally: one `Estimator.train` to `TrainSpec.max_steps`, and after each new
checkpoint (the first, of the step training starts from, excepted) an evaluation of it, no
sooner than `EvalSpec.throttle_secs` after the last one, then the `EvalSpec`'s exporters; once
more at the end unless the last checkpoint was evaluated. Evaluations go to
`model_dir/eval` (or `eval_<name>`), exports to `model_dir/export/<exporter name>`.

    train_spec = tf.estimator.TrainSpec(train_input_fn, max_steps=1000)
    eval_spec = tf.estimator.EvalSpec(eval_input_fn, steps=100, throttle_secs=60,
                                      exporters=tf.estimator.LatestExporter('latest', receiver_fn))
    metrics, export_results = tf.estimator.train_and_evaluate(estimator, train_spec, eval_spec)

Across processes (`TF_CONFIG` with a cluster: chief, workers, parameter servers, an
evaluator), each process plays its task as TF 1.x's did: `cluster` says how.
"""
import collections
import os
import time

from towers.compat import tf
from towers.errors import TowersError
from towers.legacy.estimator import cluster
from towers.legacy.estimator.estimator import Estimator
from towers.legacy.estimator.exporter import Exporter
from towers.legacy.estimator.spec import EstimatorError, EstimatorTypeError, checked_instances
from towers.training import checkpoints


class TrainSpec(collections.namedtuple('TrainSpec', ['input_fn', 'max_steps', 'hooks'])):
    """input_fn: the training input; max_steps: the global step to stop at (None: until the
    input ends); hooks: further `SessionRunHook`s of the training."""

    def __new__(cls, input_fn, max_steps=None, hooks=None):
        _check_input_fn(input_fn, 'TrainSpec')
        if max_steps is not None and max_steps <= 0:
            raise EstimatorError('TrainSpec: Must specify max_steps > 0, given: %s'
                                 % max_steps)
        return super().__new__(cls, input_fn, max_steps, _checked_hooks(hooks, 'TrainSpec'))


class EvalSpec(collections.namedtuple('EvalSpec', [
        'input_fn', 'steps', 'name', 'hooks', 'exporters', 'start_delay_secs',
        'throttle_secs'])):
    """input_fn: the evaluation input; steps: batches per evaluation (None: all of them);
    name: the evaluation's name (`eval_<name>`); hooks; exporters: an `Exporter` or a list of
    them; start_delay_secs: (a separate evaluator's wait, unused locally); throttle_secs: the
    least seconds between two evaluations."""

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None,
                start_delay_secs=120, throttle_secs=600):
        _check_input_fn(input_fn, 'EvalSpec')
        if steps is not None and steps <= 0:
            raise EstimatorError('EvalSpec: Must specify steps > 0, given: %s' % steps)
        if name is not None and not isinstance(name, str):
            raise EstimatorTypeError('EvalSpec: `name` must be string, given: %r' % (name,))
        hooks = _checked_hooks(hooks, 'EvalSpec')
        exporters = _checked_exporters(exporters)
        for what, value in (('start_delay_secs', start_delay_secs),
                            ('throttle_secs', throttle_secs)):
            if value < 0:
                raise EstimatorError('EvalSpec: Must specify %s >= 0, given: %s'
                                     % (what, value))
        return super().__new__(cls, input_fn, steps, name, hooks, exporters,
                               start_delay_secs, throttle_secs)


def _check_input_fn(input_fn, spec):
    if not callable(input_fn):
        raise EstimatorTypeError('%s: `input_fn` must be callable, given: %r'
                                 % (spec, input_fn))


def _checked_hooks(hooks, spec):
    """`hooks` as a tuple of `tf.train.SessionRunHook`s (EstimatorTypeError when one is
    not)."""
    return checked_instances(hooks, tf.train.SessionRunHook, '%s hooks: All hooks must be '
                             '`SessionRunHook` instances, given: %%r' % spec)


def _checked_exporters(exporters):
    """`exporters` (None, an `Exporter` or an iterable of them) as a tuple of `Exporter`s,
    each named by a distinct non-empty string.

    Raises:
      EstimatorTypeError: `exporters` is neither, or holds something else.
      EstimatorError: a name is empty, not a string, or repeated.
    """
    if isinstance(exporters, Exporter):
        exporters = [exporters]
    try:
        exporters = tuple(exporters or ())
    except TypeError:
        exporters = None
    if exporters is None or not all(isinstance(item, Exporter) for item in exporters):
        raise EstimatorTypeError('EvalSpec: `exporters` must be an Exporter, an iterable of '
                                 'Exporter, or `None`, found %r' % (exporters,))
    names = [exporter.name for exporter in exporters]
    for name in names:
        if not name:
            raise EstimatorError('EvalSpec: An Exporter cannot have a name that is `None` or '
                                 'empty. All exporter names: %s' % names)
        if not isinstance(name, str):
            raise EstimatorError('EvalSpec: An Exporter must have a string name. Given: %s'
                                 % type(name).__name__)
    if len(set(names)) != len(names):
        raise EstimatorError('EvalSpec: `exporters` must have unique names. All exporter '
                             'names: %s' % names)
    return exporters


class _Evaluator:
    """Evaluates the newest checkpoint unless it was evaluated, then runs the exporters."""

    def __init__(self, estimator, eval_spec, max_steps):
        self._estimator = estimator
        self._spec = eval_spec
        self._max_steps = max_steps
        self._previous = None
        self.metrics = None
        self.export_results = []

    def evaluate_and_export(self):
        """Returns (metrics, export results) of the newest checkpoint, or None when there is
        none yet or it was evaluated already."""
        checkpoint = self._estimator.latest_checkpoint()
        if checkpoint is None:
            tf.logging.warning('Estimator is not trained yet. Will start an evaluation when a '
                               'checkpoint is ready.')
            return None
        if checkpoint == self._previous:
            tf.logging.warning('No new checkpoint ready for evaluation. Skip the current '
                               'evaluation pass as evaluation results are expected to be same '
                               'for the same checkpoint.')
            return None
        try:
            metrics = self._estimator.evaluate(self._spec.input_fn, steps=self._spec.steps,
                                               hooks=self._spec.hooks,
                                               checkpoint_path=checkpoint, name=self._spec.name)
        except (EstimatorError, TowersError, tf.errors.OpError):
            if checkpoints.exists(checkpoint):
                raise
            # A separate evaluator races the chief, which keeps `keep_checkpoint_max`.
            tf.logging.warning('%s was deleted before its evaluation ended (the chief keeps '
                               'the newest keep_checkpoint_max): evaluating a newer one',
                               checkpoint)
            return None
        final = bool(self._max_steps) and metrics['global_step'] >= self._max_steps
        base = os.path.join(self._estimator.model_dir, 'export')
        self.export_results = [
            exporter.export(self._estimator, os.path.join(base, exporter.name), checkpoint,
                            metrics, final)
            for exporter in self._spec.exporters]
        self.metrics = metrics
        self._previous = checkpoint
        return metrics, self.export_results


class _EvaluateAfterCheckpoint(tf.train.CheckpointSaverListener):
    """Evaluates after each checkpoint written (not the first, of the starting step), at most
    once per `throttle_secs`, and at the end unless the last one was evaluated."""

    def __init__(self, evaluator, throttle_secs, max_steps):
        self._evaluator = evaluator
        self._throttle = throttle_secs
        self._max_steps = max_steps
        self._first = True
        self._last_time = None
        self._last_step = None

    def after_save(self, session, global_step_value):
        if self._first:
            self._first = False
            return False
        now = time.time()
        if self._last_time is not None and now - self._last_time < self._throttle:
            tf.logging.info('Skip the current checkpoint eval due to throttle secs (%s secs).',
                            self._throttle)
            return False
        self._last_time, self._last_step = now, global_step_value
        self._evaluator.evaluate_and_export()
        return bool(self._max_steps) and global_step_value >= self._max_steps

    def end(self, session, global_step_value):
        if global_step_value != self._last_step:
            self._evaluator.evaluate_and_export()


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Trains `estimator` on `train_spec`, evaluating and exporting per `eval_spec` (see the
    module docstring).

    Returns:
      (the last evaluation's metrics dict or None, the last exporters' results).

    Raises:
      EstimatorTypeError: `eval_spec`, `estimator` or `train_spec` (checked in that order, as
        TF 1.15 did) is not an `EvalSpec`, `Estimator` or `TrainSpec`.
      EstimatorError: an evaluator task other than task 0; a `TF_CONFIG` this task cannot
        play.
    """
    for value, kind, what in ((eval_spec, EvalSpec, '`eval_spec`'),
                              (estimator, Estimator, '`estimator`'),
                              (train_spec, TrainSpec, '`train_spec`')):
        if not isinstance(value, kind):
            raise EstimatorTypeError('train_and_evaluate: %s must have type `tf.estimator.%s`, '
                                     'given %s' % (what, kind.__name__, type(value).__name__))
    config = estimator.config
    if config.task_type == cluster.EVALUATOR and config.task_id > 0:
        raise EstimatorError('For distributed training, there can only be one `evaluator` '
                             'task (with task id 0).  Given task id %s (TF_CONFIG\'s "task")'
                             % config.task_id)
    evaluator = _Evaluator(estimator, eval_spec, train_spec.max_steps)
    jobs = config.cluster_spec.jobs
    if not (jobs and 'master' not in jobs and config.train_distribute):
        # TF 1.15's line, but where it ran a cluster's strategy through that coordinator.
        tf.logging.info('Not using Distribute Coordinator.')
    # An evaluator is outside the training cluster: its `cluster_spec` is empty.
    if jobs or config.task_type == cluster.EVALUATOR:
        return cluster.run(estimator, train_spec, eval_spec, evaluator.evaluate_and_export)
    tf.logging.info('Running training and evaluation locally (non-distributed).')
    tf.logging.info('Start train and evaluate loop. The evaluate will happen after every '
                    'checkpoint. Checkpoint frequency is determined based on RunConfig '
                    'arguments: save_checkpoints_steps %s or save_checkpoints_secs %s.',
                    config.save_checkpoints_steps, config.save_checkpoints_secs)
    listener = _EvaluateAfterCheckpoint(evaluator, eval_spec.throttle_secs,
                                        train_spec.max_steps)
    estimator.train(train_spec.input_fn, hooks=list(train_spec.hooks),
                    max_steps=train_spec.max_steps, saving_listeners=[listener])
    return evaluator.metrics, evaluator.export_results
