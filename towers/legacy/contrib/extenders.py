"""`tf.contrib.estimator`'s wrappers of an Estimator and its training, on `tf.estimator`:
`add_metrics`, `forward_features`, `clip_gradients_by_norm` and the early-stopping hooks.

    estimator = tf.contrib.estimator.add_metrics(estimator, lambda labels, predictions: {
        'auc': tf.metrics.auc(labels, predictions['logistic'])})
    estimator = tf.contrib.estimator.forward_features(estimator, 'example_id')
    hook = tf.contrib.estimator.stop_if_no_decrease_hook(estimator, 'loss', 1000)

`add_metrics` and `forward_features` return a new `Estimator` (same `model_dir` and `config`)
whose `model_fn` calls the old one's (`Estimator.model_fn`) and changes its `EstimatorSpec`.
The early-stopping hooks read the metrics `evaluate` wrote into `estimator.eval_dir()` (event
files) every `run_every_secs` (or `run_every_steps`) and stop training when the predicate
holds; they stop a chief through a `signal_early_stopping/STOP` variable that the other
workers' hooks read, as TF 1.15's did.
"""
import collections
import operator
import os

from towers.compat import tf
from towers.legacy.estimator import calls
from towers.legacy.estimator.estimator import Estimator
from towers.legacy.estimator.export import PredictOutput
from towers.legacy.estimator.spec import EstimatorError, ModeKeys

_METRIC_FN_ARGS = ('features', 'labels', 'predictions', 'config')


def _estimator_like(estimator, model_fn):
    return Estimator(model_fn=model_fn, model_dir=estimator.model_dir, config=estimator.config)


def add_metrics(estimator, metric_fn):
    """A new Estimator whose evaluation also reports `metric_fn`'s metrics.

    Args:
      estimator: a `tf.estimator.Estimator`.
      metric_fn: a function of any of `features`, `labels`, `predictions`, `config` that
        returns a dict name -> (value, update_op), as `tf.metrics.*` give; a name the
        `model_fn` has too is replaced.

    Raises:
      EstimatorError: `metric_fn` takes another argument.
    """
    names, _ = calls.arg_names(metric_fn)
    unexpected = [name for name in names if name not in _METRIC_FN_ARGS and name != 'self']
    if unexpected:
        raise EstimatorError('add_metrics: metric_fn %s takes %s; it may take only %s'
                             % (getattr(metric_fn, '__name__', metric_fn),
                                ', '.join(unexpected), ', '.join(_METRIC_FN_ARGS)))

    def model_fn(features, labels, mode, config):
        spec = estimator.model_fn(features, labels, mode, config)
        if mode != ModeKeys.EVAL:
            return spec
        given = {'features': features, 'labels': labels, 'predictions': spec.predictions,
                 'config': config}
        metrics = dict(spec.eval_metric_ops)
        metrics.update(metric_fn(**{name: given[name] for name in names if name in given}))
        return _replaced(spec, eval_metric_ops=metrics)
    return _estimator_like(estimator, model_fn)


def forward_features(estimator, keys=None, sharded_output=False, sparse_default_values=None):
    """A new Estimator whose predictions (and 'predict'/'serving_default' export outputs) also
    hold the input features named `keys` (all when None), e.g. an example id to join the
    predictions back to their inputs.

    Args:
      estimator: a `tf.estimator.Estimator` whose predictions are a dict.
      keys: a feature name or a list of them, or None.
      sharded_output: TF 1.x's flag for predictions sharded over towers; accepted, the
        features are forwarded as they are.
      sparse_default_values: dict feature name -> the default value that makes that sparse
        feature dense (TF 1.15's); other features must be dense tensors.

    Raises:
      EstimatorError: `keys` is neither a string nor a list of strings; when the model is
        built: a key is not a feature or is a prediction already, the predictions are no
        dict, or a forwarded feature is sparse without a default value.
    """
    del sharded_output
    if isinstance(keys, str):
        keys = [keys]
    if keys is not None and (not isinstance(keys, list)
                             or not all(isinstance(key, str) for key in keys)):
        raise EstimatorError('forward_features: keys must be a string or a list of strings, '
                             'got %r' % (keys,))
    defaults = sparse_default_values or {}

    def model_fn(features, labels, mode, config):
        spec = estimator.model_fn(features, labels, mode, config)
        if spec.predictions is None:
            return spec
        if not isinstance(spec.predictions, dict):
            raise EstimatorError('forward_features: the predictions must be a dict to forward '
                                 'features into, got %s' % type(spec.predictions).__name__)
        predictions = dict(spec.predictions)
        for key in list(features) if keys is None else keys:
            if key not in features:
                raise EstimatorError('forward_features: %r is not a feature (the features are '
                                     '%s)' % (key, ', '.join(sorted(features))))
            if key in predictions:
                raise EstimatorError('forward_features: cannot forward feature %r: the '
                                     'predictions have that key already' % key)
            predictions[key] = _dense(key, features[key], defaults)
        for name in ('predict', 'serving_default'):
            output = (spec.export_outputs or {}).get(name)
            if isinstance(output, PredictOutput):
                output.outputs.update({key: predictions[key] for key in predictions
                                       if key not in spec.predictions})
        return _replaced(spec, predictions=predictions)
    return _estimator_like(estimator, model_fn)


def _replaced(spec, **fields):
    """`spec` with `fields` changed, checked again as a new `EstimatorSpec` is."""
    return type(spec)(**dict(spec._asdict(), **fields))


def _dense(key, feature, defaults):
    if key in defaults:
        if not isinstance(feature, tf.SparseTensor):
            raise EstimatorError('forward_features: feature %r has a sparse default value but '
                                 'is not a SparseTensor' % key)
        return tf.sparse.to_dense(feature, default_value=defaults[key])
    if not tf.is_tensor(feature) or isinstance(feature, tf.SparseTensor):
        raise EstimatorError('forward_features: feature %r is a %s, not a dense tensor: leave '
                             'it out of keys, or give its default in sparse_default_values'
                             % (key, type(feature).__name__))
    return feature


def clip_gradients_by_norm(optimizer, clip_norm):
    """An optimizer that clips the gradients to the global norm `clip_norm` (a scalar > 0),
    then applies them with `optimizer`."""
    class ClipByNormOptimizer(tf.train.Optimizer):
        def __init__(self):
            super().__init__(use_locking=False, name='ClipByNorm' + optimizer.get_name())

        def compute_gradients(self, *args, **kwargs):
            return optimizer.compute_gradients(*args, **kwargs)

        def apply_gradients(self, grads_and_vars, global_step=None, name=None):
            gradients, variables = zip(*grads_and_vars)
            clipped, _ = tf.clip_by_global_norm(gradients, clip_norm)
            return optimizer.apply_gradients(list(zip(clipped, variables)), global_step, name)

        def get_slot(self, *args, **kwargs):
            return optimizer.get_slot(*args, **kwargs)

        def get_slot_names(self, *args, **kwargs):
            return optimizer.get_slot_names(*args, **kwargs)
    return ClipByNormOptimizer()


def read_eval_metrics(eval_dir):
    """The scalar metrics in the event files of `eval_dir`: an OrderedDict global step ->
    {metric name: value}, by step."""
    metrics = collections.defaultdict(dict)
    for path in tf.gfile.Glob(os.path.join(eval_dir, 'events.out.tfevents.*')):
        try:
            for event in tf.train.summary_iterator(path):
                metrics[event.step].update({value.tag: value.simple_value
                                            for value in event.summary.value
                                            if value.HasField('simple_value')})
        except tf.errors.DataLossError as err:
            tf.logging.warning('Skipping the rest of %s: it is damaged (%s)', path, err)
    return collections.OrderedDict(sorted((step, values) for step, values in metrics.items()
                                          if values))


def stop_if_higher_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0,
                        run_every_secs=60, run_every_steps=None):
    """A hook that stops training once an evaluation at step >= `min_steps` had `metric_name`
    above `threshold`."""
    return _threshold_hook(estimator, metric_name, threshold, operator.gt, eval_dir, min_steps,
                           run_every_secs, run_every_steps)


def stop_if_lower_hook(estimator, metric_name, threshold, eval_dir=None, min_steps=0,
                       run_every_secs=60, run_every_steps=None):
    """A hook that stops training once an evaluation had `metric_name` below `threshold`."""
    return _threshold_hook(estimator, metric_name, threshold, operator.lt, eval_dir, min_steps,
                           run_every_secs, run_every_steps)


def stop_if_no_increase_hook(estimator, metric_name, max_steps_without_increase, eval_dir=None,
                             min_steps=0, run_every_secs=60, run_every_steps=None):
    """A hook that stops training when `metric_name` has not increased over its best for
    `max_steps_without_increase` steps of evaluations."""
    return _no_improvement_hook(estimator, metric_name, max_steps_without_increase, operator.gt,
                                eval_dir, min_steps, run_every_secs, run_every_steps)


def stop_if_no_decrease_hook(estimator, metric_name, max_steps_without_decrease, eval_dir=None,
                             min_steps=0, run_every_secs=60, run_every_steps=None):
    """A hook that stops training when `metric_name` has not decreased below its best for
    `max_steps_without_decrease` steps of evaluations."""
    return _no_improvement_hook(estimator, metric_name, max_steps_without_decrease, operator.lt,
                                eval_dir, min_steps, run_every_secs, run_every_steps)


def _threshold_hook(estimator, metric_name, threshold, better, eval_dir, min_steps,
                    run_every_secs, run_every_steps):
    eval_dir = eval_dir or estimator.eval_dir()

    def crossed():
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step >= min_steps and better(metrics[metric_name], threshold):
                tf.logging.info('At step %s, metric "%s" has value %s beyond the threshold %s '
                                'for early stopping.', step, metric_name,
                                metrics[metric_name], threshold)
                return True
        return False
    return make_early_stopping_hook(estimator, crossed, run_every_secs, run_every_steps)


def _no_improvement_hook(estimator, metric_name, max_steps, better, eval_dir, min_steps,
                         run_every_secs, run_every_steps):
    eval_dir = eval_dir or estimator.eval_dir()

    def stalled():
        best = best_step = None
        for step, metrics in read_eval_metrics(eval_dir).items():
            if step < min_steps:
                continue
            if best is None or better(metrics[metric_name], best):
                best, best_step = metrics[metric_name], step
            if step - best_step >= max_steps:
                tf.logging.info('No improvement in metric "%s" for %s steps, at least the %s '
                                'steps configured for early stopping.', metric_name,
                                step - best_step, max_steps)
                return True
        return False
    return make_early_stopping_hook(estimator, stalled, run_every_secs, run_every_steps)


def make_early_stopping_hook(estimator, should_stop_fn, run_every_secs=60,
                             run_every_steps=None):
    """A hook that stops training when `should_stop_fn()` is True, asked every `run_every_secs`
    seconds or `run_every_steps` steps (on the chief; the other workers stop when it did)."""
    if not callable(should_stop_fn):
        raise EstimatorError('make_early_stopping_hook: should_stop_fn must be callable')
    if estimator.config.is_chief:
        return _StopOnPredicateHook(should_stop_fn, run_every_secs, run_every_steps)
    return _CheckForStoppingHook()


def _stop_variable():
    with tf.variable_scope('signal_early_stopping', values=[], reuse=tf.AUTO_REUSE):
        return tf.get_variable('STOP', shape=[], dtype=tf.bool,
                               initializer=tf.constant_initializer(False),
                               collections=[tf.GraphKeys.GLOBAL_VARIABLES], trainable=False)


class _StopOnPredicateHook(tf.train.SessionRunHook):
    def __init__(self, should_stop_fn, run_every_secs, run_every_steps):
        self._should_stop = should_stop_fn
        self._timer = tf.train.SecondOrStepTimer(every_secs=run_every_secs,
                                                 every_steps=run_every_steps)

    def begin(self):
        self._global_step = tf.train.get_global_step()
        self._stop = tf.assign(_stop_variable(), True)

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        step = run_values.results
        if self._timer.should_trigger_for_step(step):
            self._timer.update_last_triggered_step(step)
            if self._should_stop():
                tf.logging.info('Requesting early stopping at global step %d', step)
                run_context.session.run(self._stop)
                run_context.request_stop()


class _CheckForStoppingHook(tf.train.SessionRunHook):
    def begin(self):
        self._stop = _stop_variable()

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._stop)

    def after_run(self, run_context, run_values):
        if run_values.results:
            tf.logging.info('Early stopping requested, suspending run.')
            run_context.request_stop()
