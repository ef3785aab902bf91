"""`tf.contrib.tpu.TPUEstimatorSpec`, and the `EstimatorSpec` it becomes off a TPU.

    return tf.contrib.tpu.TPUEstimatorSpec(
        mode, loss=loss, train_op=train_op, scaffold_fn=scaffold_fn,
        eval_metrics=(metric_fn, [per_example_loss, labels, logits]),
        host_call=(host_fn, {'loss': tf.reshape(loss, [1])}))

Off a TPU, as TF 1.15's `TPUEstimator(use_tpu=False)` did (`as_estimator_spec`):
`scaffold_fn()` is called, in the model's graph, for the scaffold (BERT restores its
`init_checkpoint` there through `tf.train.init_from_checkpoint`); `eval_metrics`' `metric_fn` is
called with its tensors (a list or tuple as positional arguments, a dict as keyword arguments)
and returns the `eval_metric_ops`; `host_call`'s function is called the same way and what it
returns is run with every step of training, evaluation and prediction, by a hook.
"""
import collections
import inspect

from towers.compat import tf
from towers.legacy.contrib import summary
from towers.legacy.estimator import calls
from towers.legacy.estimator.spec import EstimatorError, EstimatorSpec, checked_instances


class TPUEstimatorSpec(collections.namedtuple('TPUEstimatorSpec', [
        'mode', 'predictions', 'loss', 'train_op', 'eval_metrics', 'export_outputs',
        'scaffold_fn', 'host_call', 'training_hooks', 'evaluation_hooks',
        'prediction_hooks'])):
    """What a `TPUEstimator`'s `model_fn` built for one mode (TF 1.15's fields).

    Fields as `EstimatorSpec`'s, but:
      eval_metrics: (metric_fn, tensors): `tensors` a list of tensors [b, ...] (passed to
        `metric_fn` positionally) or a dict (passed by name); `metric_fn` returns a dict
        name -> (value, update_op).
      scaffold_fn: () -> `tf.train.Scaffold`, called in the model's graph, or None.
      host_call: (fn, tensors) as `eval_metrics`; `fn` returns the ops or tensors to run
        with every step.

    Raises:
      EstimatorError: `eval_metrics` or `host_call` is not (a function, a list or dict of
        tensors matching its arguments).
      EstimatorTypeError: a hook is not a `tf.train.SessionRunHook` (a TypeError, as in
        TF 1.15).
    """

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metrics=None,
                export_outputs=None, scaffold_fn=None, host_call=None, training_hooks=None,
                evaluation_hooks=None, prediction_hooks=None):
        for name, host_call_pair in (('eval_metrics', eval_metrics), ('host_call', host_call)):
            if host_call_pair is not None:
                _check_host_call(name, host_call_pair)
        hooks = [tuple(hooks or ()) for hooks in (training_hooks, evaluation_hooks,
                                                  prediction_hooks)]
        checked_instances(sum(hooks, ()), tf.train.SessionRunHook, 'TPUEstimatorSpec: All '
                          'hooks must be SessionRunHook instances, given: %r')
        if scaffold_fn is not None and not callable(scaffold_fn):
            raise EstimatorError('TPUEstimatorSpec scaffold_fn must be a function returning a '
                                 'tf.train.Scaffold, got %s' % type(scaffold_fn).__name__)
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metrics,
                               export_outputs, scaffold_fn, host_call, *hooks)

    def as_estimator_spec(self):
        """The `EstimatorSpec` of this spec off a TPU (see the module): call in the graph
        the model is built in."""
        eval_metric_ops = None
        if self.eval_metrics is not None:
            eval_metric_ops = call_host_fn('eval_metrics', self.eval_metrics)
            if not isinstance(eval_metric_ops, dict):
                raise EstimatorError('TPUEstimatorSpec eval_metrics: the metric_fn %s returned '
                                     '%s: expected a dict name -> (value, update_op)'
                                     % (_name(self.eval_metrics[0]),
                                        type(eval_metric_ops).__name__))
        hooks = ()
        if self.host_call is not None:
            hooks = (HostCallHook(call_host_fn('host_call', self.host_call)),)
        scaffold = self.scaffold_fn() if self.scaffold_fn is not None else None
        return EstimatorSpec(
            self.mode, predictions=self.predictions, loss=self.loss, train_op=self.train_op,
            eval_metric_ops=eval_metric_ops, export_outputs=self.export_outputs,
            scaffold=scaffold, training_hooks=self.training_hooks + hooks,
            evaluation_hooks=self.evaluation_hooks + hooks,
            prediction_hooks=self.prediction_hooks + hooks)


def _name(fn):
    return getattr(fn, '__name__', None) or type(fn).__name__


def _check_host_call(name, host_call):
    """Raises `EstimatorError` where TF 1.15 refused an `eval_metrics` or `host_call`."""
    if not isinstance(host_call, (tuple, list)) or len(host_call) != 2:
        raise EstimatorError('TPUEstimatorSpec %s must be a pair (function, tensors), got %r'
                             % (name, host_call))
    fn, tensors = host_call
    if not callable(fn):
        raise EstimatorError('TPUEstimatorSpec %s[0] must be a function, got %s'
                             % (name, type(fn).__name__))
    if not isinstance(tensors, (tuple, list, dict)):
        raise EstimatorError('TPUEstimatorSpec %s[1] must be a list, tuple or dict of tensors, '
                             'got %s' % (name, type(tensors).__name__))
    if isinstance(tensors, (tuple, list)) and not _takes_varargs(fn):
        names, _ = calls.arg_names(fn)
        names = [arg for arg in names if arg != 'self']
        if len(names) != len(tensors):
            raise EstimatorError('TPUEstimatorSpec %s: %d tensors given, but %s() takes %d '
                                 'arguments (%s)' % (name, len(tensors), _name(fn), len(names),
                                                     ', '.join(names)))


def _takes_varargs(fn):
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.kind == p.VAR_POSITIONAL for p in parameters)


def call_host_fn(name, host_call):
    """`host_call`'s function called with its tensors: a list or tuple positionally, a dict
    by name (TF 1.15's rule).

    Raises:
      EstimatorError: the dict's keys do not match the function's arguments.
    """
    fn, tensors = host_call
    if isinstance(tensors, dict):
        names, takes_kwargs = calls.arg_names(fn)
        unknown = sorted(set(tensors) - set(names)) if not takes_kwargs else []
        missing = [arg for arg in names if arg not in tensors and arg != 'self'
                   and _required(fn, arg)]
        if unknown or missing:
            raise EstimatorError('TPUEstimatorSpec %s: the tensors %s do not match the '
                                 'arguments of %s(%s)' % (name, sorted(tensors), _name(fn),
                                                          ', '.join(names)))
        return fn(**tensors)
    return fn(*tensors)


def _required(fn, arg):
    try:
        parameter = inspect.signature(fn).parameters[arg]
    except (TypeError, ValueError, KeyError):
        return False
    return parameter.default is parameter.empty


class HostCallHook(tf.train.SessionRunHook):
    """Runs a `host_call`'s outputs (ops, tensors, or a structure of them) with every step,
    as TF 1.15's `TPUEstimator(use_tpu=False)` ran them; the `tf.contrib.summary` writers the
    host_call made are initialized with the session and flushed at the end, as TF 1.15's hook
    did."""

    def __init__(self, outputs):
        self._outputs = outputs
        self._initializers, self._flushes = [], []

    def begin(self):
        self._initializers = summary.summary_writer_initializer_op()
        self._flushes = [summary.flush(writer=op.inputs[0]) for op in self._initializers]

    def after_create_session(self, session, coord):
        session.run(self._initializers)

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._outputs)

    def end(self, session):
        session.run(self._flushes)
