"""What a `model_fn` returns (`EstimatorSpec`), the modes it is called in (`ModeKeys`), the
errors of the Estimator a user acts on (`EstimatorError`, `EstimatorTypeError`), and TF 1.15's
`tf.estimator.experimental.call_logit_fn`.

`EstimatorSpec` checks its fields as TF 1.15's did: a TRAIN spec needs a loss and a train op, an
EVAL spec a loss, a PREDICT spec predictions (ValueError, 'Missing ...'); a field of the wrong
kind is a TypeError ('... must be Tensor', 'All hooks must be SessionRunHook instances'); a
tensor of another graph than the default one a ValueError ('must be from the default graph').
A PREDICT spec without `export_outputs` exports its predictions as 'serving_default'.
"""
import collections

from towers.compat import export_output as export_output_lib
from towers.compat import internal, keras, mode_keys, tf
from towers.legacy.modules import LegacyError

# 'train', 'eval', 'infer', as TF 1.x's `tf.estimator.ModeKeys` (TensorFlow still ships the
# class, for Keras' SavedModels).
ModeKeys = mode_keys.EstimatorModeKeys
# The metrics `evaluate` adds itself: the mean of the EVAL loss; the canned heads' mean of the
# per-example loss.
LOSS_METRIC_KEY = 'loss'
AVERAGE_LOSS_METRIC_KEY = 'average_loss'
# A Keras metric object, which `eval_metric_ops` may hold (TF 1.15 named it at model_fn's path).
Metric = keras.metrics.Metric
SERVING_KEY = tf.saved_model.signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY
_variables = internal('ops.variables')
# The argument names of a function (or partial), as TF 1.x's `util.fn_args` gave them.
fn_args = internal('util.function_utils').fn_args


class EstimatorError(LegacyError, ValueError):
    """A program handed the Estimator something it cannot use: a `model_fn`'s spec, an
    `input_fn`'s output, a `model_dir`, an argument. The runner prints it as one `error:` line
    naming the program's line; it is a `ValueError` too, as TF 1.x raised one."""


class EstimatorTypeError(LegacyError, TypeError):
    """As `EstimatorError`, where TF 1.x raised a `TypeError`: a value of the wrong kind (a
    number or a SparseTensor for a tensor, a list for a dict, an object for a hook)."""


class EstimatorSpec(collections.namedtuple('EstimatorSpec', [
        'mode', 'predictions', 'loss', 'train_op', 'eval_metric_ops', 'export_outputs',
        'training_chief_hooks', 'training_hooks', 'scaffold', 'evaluation_hooks',
        'prediction_hooks'])):
    """What a `model_fn` built for one mode.

    Fields (TF 1.15's):
      mode: a `ModeKeys` value (not checked, as TF 1.15 did not: the Estimator calls the
        `model_fn` in its mode whatever the spec says).
      predictions: a tensor or a dict name -> tensor [b, ...] (PREDICT needs it; {} when not
        given).
      loss: a scalar tensor, or of shape [1] (made a scalar) (TRAIN and EVAL need it).
      train_op: the op (or tensor) of one step (TRAIN needs it); it should increment the global
        step.
      eval_metric_ops: dict name -> (value tensor, update op), or a `tf.keras.metrics.Metric`
        (made its (result, update) and its variables local).
      export_outputs: dict signature name -> `ExportOutput`, for `export_saved_model`; in
        PREDICT, None is {'serving_default': PredictOutput(predictions)} and a lone output is
        'serving_default' too.
      training_chief_hooks, training_hooks, evaluation_hooks, prediction_hooks: iterables of
        `tf.train.SessionRunHook`, kept as tuples.
      scaffold: a `tf.train.Scaffold` (saver, init_fn, init_op, ...); None is a default one.

    Every tensor and op must be of the default graph (the one the `model_fn` was called in).
    `_replace` checks the new spec again and refuses to change `mode`.
    """

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                export_outputs=None, training_chief_hooks=None, training_hooks=None,
                scaffold=None, evaluation_hooks=None, prediction_hooks=None):
        train_op = _checked_train_op(train_op, mode)
        loss = _checked_loss(loss, mode)
        predictions = _checked_predictions(predictions, mode)
        if mode == ModeKeys.PREDICT:
            export_outputs = _checked_export_outputs(export_outputs, predictions)
        hooks = {field: _checked_hooks(value, field) for field, value in (
            ('training_chief_hooks', training_chief_hooks), ('training_hooks', training_hooks),
            ('evaluation_hooks', evaluation_hooks), ('prediction_hooks', prediction_hooks))}
        eval_metric_ops = _checked_metrics(eval_metric_ops)
        scaffold = scaffold or tf.train.Scaffold()
        if not isinstance(scaffold, tf.train.Scaffold):
            raise EstimatorTypeError('EstimatorSpec scaffold must be tf.train.Scaffold. Given: '
                                     '%r' % (scaffold,))
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metric_ops,
                               export_outputs, scaffold=scaffold, **hooks)

    def _replace(self, **fields):
        """This spec with `fields` changed, checked as a new one; `mode` may not change."""
        if fields.get('mode', self.mode) != self.mode:
            raise EstimatorError('mode of EstimatorSpec cannot be changed: it is %r, %r given'
                                 % (self.mode, fields['mode']))
        return EstimatorSpec(**dict(self._asdict(), **fields))


def _is_dense(value):
    """Whether `value` is a dense tensor, as TF 1.x's `is_dense_tensor_like` read it (a
    variable is one; a SparseTensor, a NumPy array or a number is not)."""
    return isinstance(value, (tf.Tensor, _variables.Variable))


def _checked_graph(value, what):
    """Raises `EstimatorError` if `value` (a tensor, an op or a variable) is not of the default
    graph, as happens when it was made outside the `model_fn`, or by an earlier call of it."""
    if not tf.executing_eagerly() and value.graph is not tf.get_default_graph():
        raise EstimatorError(
            'EstimatorSpec %s with "%s" must be from the default graph: it was made outside the '
            'model_fn, or by an earlier call of it (each train, evaluate and predict builds a '
            'new graph)' % (what, value.name))


def _checked_tensor(value, what):
    if not _is_dense(value):
        raise EstimatorTypeError('EstimatorSpec %s must be Tensor, given: %r' % (what, value))
    _checked_graph(value, what)
    return value


def _checked_train_op(train_op, mode):
    if train_op is None:
        if mode == ModeKeys.TRAIN:
            raise EstimatorError('Missing train_op. An EstimatorSpec for mode TRAIN needs one: '
                                 'the model_fn must give train_op=optimizer.minimize(loss, '
                                 'global_step)')
        return None
    if not (isinstance(train_op, tf.Operation) or _is_dense(train_op)):
        raise EstimatorTypeError('EstimatorSpec train_op must be Operation or Tensor, given: %r'
                                 % (train_op,))
    if isinstance(train_op, _variables.Variable):
        train_op = train_op.op
    _checked_graph(train_op, 'train_op')
    return train_op


def _checked_loss(loss, mode):
    """`loss` as a scalar tensor: one of shape [] or [1] (the latter reshaped), or None where
    `mode` needs none."""
    if loss is None:
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise EstimatorError('Missing loss. An EstimatorSpec for mode %r needs one: the '
                                 'model_fn must give loss=<a scalar tensor>' % (mode,))
        return None
    loss = _checked_tensor(loss, 'loss')
    shape = loss.shape
    if shape.num_elements() not in (None, 1):
        raise EstimatorError('Loss must be scalar, given: %s (shape %s)' % (loss, shape))
    return tf.reshape(loss, []) if shape.ndims else loss


def _checked_predictions(predictions, mode):
    """`predictions` (a tensor or a dict of them), {} where `mode` needs none."""
    if predictions is None:
        if mode == ModeKeys.PREDICT:
            raise EstimatorError('Missing predictions. An EstimatorSpec for mode PREDICT needs '
                                 'them: the model_fn must give predictions=<a tensor or a dict '
                                 'of them>')
        return {}
    if isinstance(predictions, dict):
        return {key: _checked_tensor(value, 'predictions[%s]' % (key,))
                for key, value in predictions.items()}
    return _checked_tensor(predictions, 'predictions')


def _checked_export_outputs(export_outputs, predictions):
    """The PREDICT spec's export outputs, with 'serving_default' (see `EstimatorSpec`)."""
    if export_outputs is None:
        export_outputs = {SERVING_KEY: export_output_lib.PredictOutput(predictions)}
    if not isinstance(export_outputs, dict):
        raise EstimatorTypeError('EstimatorSpec export_outputs must be dict, given: %r'
                                 % (export_outputs,))
    if not all(isinstance(output, export_output_lib.ExportOutput)
               for output in export_outputs.values()):
        raise EstimatorTypeError(
            'Values in export_outputs must be ExportOutput objects. Given: %s (expected '
            'tf.estimator.export.PredictOutput, ClassificationOutput or RegressionOutput)'
            % (export_outputs,))
    export_outputs = dict(export_outputs)
    if len(export_outputs) == 1:
        export_outputs[SERVING_KEY] = next(iter(export_outputs.values()))
    elif SERVING_KEY not in export_outputs:
        raise EstimatorError(
            'Multiple export_outputs were provided, but none of them is specified as the '
            'default.  Do this by naming one of them with '
            'signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY. Given: %s'
            % sorted(export_outputs))
    return export_outputs


def checked_instances(items, kind, message):
    """`items` (None or an iterable) as a tuple, each an instance of `kind`.

    Raises:
      EstimatorTypeError: `message % (item,)` of the first item that is not.
    """
    items = tuple(items or ())
    for item in items:
        if not isinstance(item, kind):
            raise EstimatorTypeError(message % (item,))
    return items


def _checked_hooks(hooks, field):
    return checked_instances(hooks, tf.train.SessionRunHook, 'EstimatorSpec %s: All hooks '
                             'must be SessionRunHook instances, given: %%r' % field)


def _checked_metrics(metrics):
    """`eval_metric_ops` as dict name -> (value, update op); a Keras metric object becomes its
    result and its updates, its accumulators local variables, which an evaluation initialises
    (as TF 1.15's)."""
    if metrics is None:
        return {}
    if not isinstance(metrics, dict):
        raise EstimatorTypeError('EstimatorSpec eval_metric_ops must be a dict name -> '
                                 '(value, update_op), given: %r' % (metrics,))
    checked = {}
    for name, metric in metrics.items():
        what = 'eval_metric_ops[%r]' % name
        if hasattr(metric, 'result') and hasattr(metric, 'updates'):
            if not metric.updates:
                raise EstimatorError('EstimatorSpec %s: Please call update_state(...) on the '
                                     '"%s" metric in the model_fn' % (what, metric.name))
            for update in metric.updates:
                _checked_graph(update, what)
            local = set(tf.local_variables())
            for variable in metric.variables:
                if variable not in local:
                    tf.add_to_collection(tf.GraphKeys.LOCAL_VARIABLES, variable)
                    tf.add_to_collection(tf.GraphKeys.METRIC_VARIABLES, variable)
            metric = (_checked_tensor(metric.result(), what), tf.group(*metric.updates))
        elif not (isinstance(metric, (tuple, list)) and len(metric) == 2):
            raise EstimatorTypeError(
                'Values of eval_metric_ops must be (metric_value, update_op) tuples, given: %r '
                'for key: %s (as tf.metrics.accuracy returns)' % (metric, name))
        for part in tf.nest.flatten(metric):
            if not (isinstance(part, tf.Operation) or _is_dense(part)):
                raise EstimatorTypeError('EstimatorSpec %s must hold tensors and ops (the value '
                                         'may be a nest of them), given: %r' % (what, part))
            _checked_graph(part, what)
        checked[name] = tuple(metric)
    return checked


def metrics_with_loss(spec):
    """The metrics `evaluate` computes: `spec`'s `eval_metric_ops` and 'loss', the mean of its
    loss over the batches.

    Raises:
      EstimatorError: a metric is named 'loss' or 'global_step', which `evaluate` reports
        itself.
    """
    for key in (LOSS_METRIC_KEY, tf.GraphKeys.GLOBAL_STEP):
        if key in spec.eval_metric_ops:
            raise EstimatorError('Metric with name `%s` is not allowed, because Estimator '
                                 'already defines a default metric with the same name.' % key)
    metrics = dict(spec.eval_metric_ops)
    metrics[LOSS_METRIC_KEY] = tf.metrics.mean(spec.loss)
    return metrics


def call_logit_fn(logit_fn, features, mode, params, config):
    """`logit_fn(features, ...)`, given whichever of `mode`, `params`, `config` it takes.

    Returns:
      What it returned: logits, a tensor [batch, units], or a dict name -> tensor (one per
      head).

    Raises:
      EstimatorError: it returned something else.
    """
    given = {'mode': mode, 'params': params, 'config': config}
    logits = logit_fn(features=features, **{name: given[name] for name in fn_args(logit_fn)
                                            if name in given})
    if not (isinstance(logits, tf.Tensor) or (isinstance(logits, dict) and all(
            isinstance(key, str) and isinstance(value, tf.Tensor)
            for key, value in logits.items()))):
        raise EstimatorError('logit_fn should return a Tensor or a dictionary mapping strings '
                             'to Tensors.  logit_fn %s returned: %r'
                             % (getattr(logit_fn, '__name__', logit_fn), logits))
    return logits
