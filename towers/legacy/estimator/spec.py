"""What a `model_fn` returns (`EstimatorSpec`), the modes it is called in (`ModeKeys`), and the
one error of the Estimator a user acts on (`EstimatorError`).

`EstimatorSpec` checks its fields as TF 1.15's did (a TRAIN spec needs a loss and a train op, an
EVAL spec a loss, a PREDICT spec predictions), so a `model_fn` that returns a wrong one stops
with one line saying which field and what was expected.
"""
import collections

from towers.compat import export_output as export_output_lib
from towers.compat import mode_keys, tf
from towers.legacy.modules import LegacyError

# 'train', 'eval', 'infer', as TF 1.x's `tf.estimator.ModeKeys` (TensorFlow still ships the
# class, for Keras' SavedModels).
ModeKeys = mode_keys.EstimatorModeKeys


class EstimatorError(LegacyError, ValueError):
    """A program handed the Estimator something it cannot use: a `model_fn`'s spec, an
    `input_fn`'s output, a `model_dir`, an argument. The runner prints it as one `error:` line
    naming the program's line; it is a `ValueError` too, as TF 1.x raised one."""


class EstimatorSpec(collections.namedtuple('EstimatorSpec', [
        'mode', 'predictions', 'loss', 'train_op', 'eval_metric_ops', 'export_outputs',
        'training_chief_hooks', 'training_hooks', 'scaffold', 'evaluation_hooks',
        'prediction_hooks'])):
    """What a `model_fn` built for one mode.

    Fields (TF 1.15's):
      mode: a `ModeKeys` value.
      predictions: a tensor or a dict name -> tensor [b, ...] (PREDICT needs it).
      loss: a scalar tensor (TRAIN and EVAL need it).
      train_op: the op of one step (TRAIN needs it); it should increment the global step.
      eval_metric_ops: dict name -> (value tensor, update op), or a `tf.keras.metrics.Metric`.
      export_outputs: dict signature name -> `ExportOutput`, for `export_saved_model`.
      training_chief_hooks, training_hooks, evaluation_hooks, prediction_hooks: lists of
        `tf.train.SessionRunHook`.
      scaffold: a `tf.train.Scaffold` (saver, init_fn, init_op, ...), or None.
    """

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                export_outputs=None, training_chief_hooks=None, training_hooks=None,
                scaffold=None, evaluation_hooks=None, prediction_hooks=None):
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise EstimatorError('EstimatorSpec(mode=%r): expected one of tf.estimator.ModeKeys '
                                 "'train', 'eval', 'infer'" % (mode,))
        if mode == ModeKeys.TRAIN and train_op is None:
            raise EstimatorError('EstimatorSpec for mode TRAIN has no train_op: the model_fn '
                                 'must give train_op=optimizer.minimize(loss, global_step)')
        if mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            if loss is None:
                raise EstimatorError('EstimatorSpec for mode %s has no loss: the model_fn must '
                                     'give loss=<a scalar tensor>' % _MODE_NAMES[mode])
            loss = _scalar_loss(loss, mode)
        if mode == ModeKeys.PREDICT and predictions is None:
            raise EstimatorError('EstimatorSpec for mode PREDICT has no predictions: the '
                                 'model_fn must give predictions=<a tensor or a dict of them>')
        if predictions is not None and not (tf.is_tensor(predictions)
                                            or isinstance(predictions, dict)):
            raise EstimatorError('EstimatorSpec predictions must be a tensor or a dict of '
                                 'tensors, got %s' % type(predictions).__name__)
        eval_metric_ops = _checked_metrics(eval_metric_ops or {})
        if export_outputs is not None:
            for name, output in export_outputs.items():
                if not isinstance(output, export_output_lib.ExportOutput):
                    raise EstimatorError('EstimatorSpec export_outputs[%r] must be a '
                                         'tf.estimator.export.ExportOutput (PredictOutput, '
                                         'ClassificationOutput, RegressionOutput), got %s'
                                         % (name, type(output).__name__))
        hooks = {}
        for field, value in (('training_chief_hooks', training_chief_hooks),
                             ('training_hooks', training_hooks),
                             ('evaluation_hooks', evaluation_hooks),
                             ('prediction_hooks', prediction_hooks)):
            value = tuple(value or ())
            for hook in value:
                if not isinstance(hook, tf.train.SessionRunHook):
                    raise EstimatorError('EstimatorSpec %s must hold tf.train.SessionRunHooks, '
                                         'got %s' % (field, type(hook).__name__))
            hooks[field] = value
        if scaffold is not None and not isinstance(scaffold, tf.train.Scaffold):
            raise EstimatorError('EstimatorSpec scaffold must be a tf.train.Scaffold, got %s'
                                 % type(scaffold).__name__)
        return super().__new__(cls, mode, predictions, loss, train_op, eval_metric_ops,
                               export_outputs, scaffold=scaffold or tf.train.Scaffold(),
                               **hooks)


_MODE_NAMES = {ModeKeys.TRAIN: 'TRAIN', ModeKeys.EVAL: 'EVAL', ModeKeys.PREDICT: 'PREDICT'}


def _scalar_loss(loss, mode):
    """`loss` as a scalar tensor: a tensor of shape [] or [1] (TF 1.x reshaped the latter)."""
    if not tf.is_tensor(loss):
        loss = tf.convert_to_tensor(loss)
    shape = loss.shape
    if shape.ndims is not None and shape.num_elements() not in (None, 1):
        raise EstimatorError('EstimatorSpec for mode %s: loss must be a scalar, got shape %s'
                             % (_MODE_NAMES[mode], shape))
    return tf.reshape(loss, []) if shape.ndims else loss


def _checked_metrics(metrics):
    """`eval_metric_ops` as dict name -> (value, update op); a Keras metric object becomes its
    result and its update (TF 1.15 accepted both)."""
    checked = {}
    for name, metric in metrics.items():
        if hasattr(metric, 'result') and hasattr(metric, 'updates'):
            # Its accumulators are in no collection: as TF 1.15's, make them local variables,
            # which an evaluation initialises.
            local = set(tf.local_variables())
            for variable in metric.variables:
                if variable not in local:
                    tf.add_to_collection(tf.GraphKeys.LOCAL_VARIABLES, variable)
                    tf.add_to_collection(tf.GraphKeys.METRIC_VARIABLES, variable)
            metric = (metric.result(), tf.group(*metric.updates))
        if not (isinstance(metric, (tuple, list)) and len(metric) == 2):
            raise EstimatorError('EstimatorSpec eval_metric_ops[%r] must be a (value, update_op) '
                                 'pair such as tf.metrics.accuracy returns, got %r'
                                 % (name, metric))
        checked[name] = tuple(metric)
    return checked
