"""`tf.estimator.export`: what an exported model takes (receivers) and gives (export outputs).

A `serving_input_receiver_fn` returns a `ServingInputReceiver`: the tensors a client feeds
(`receiver_tensors`) and the `features` the `model_fn` gets from them. The two builders TF 1.x
had: `build_parsing_serving_input_receiver_fn` (serialized `tf.Example`s parsed by a feature
spec, fed as 'examples' through the placeholder 'input_example_tensor') and
`build_raw_serving_input_receiver_fn` (a placeholder per feature, fed by its own name). The
export outputs (`PredictOutput`, `ClassificationOutput`, `RegressionOutput`) are TensorFlow's
own classes, which it still ships.
"""
import collections

from towers import export as export_lib
from towers.compat import export_output, export_utils, tf
from towers.legacy.estimator.spec import EstimatorError, ModeKeys

ExportOutput = export_output.ExportOutput
PredictOutput = export_output.PredictOutput
ClassificationOutput = export_output.ClassificationOutput
RegressionOutput = export_output.RegressionOutput

SINGLE_FEATURE_DEFAULT_NAME = 'feature'
SINGLE_RECEIVER_DEFAULT_NAME = 'input'


def _as_dict(tensors, default_name, what):
    if tensors is None:
        raise EstimatorError('%s must be given' % what)
    if not isinstance(tensors, dict):
        tensors = {default_name: tensors}
    for name, tensor in tensors.items():
        if not isinstance(name, str):
            raise EstimatorError('%s keys must be strings, got %r' % (what, name))
        if not (tf.is_tensor(tensor) or isinstance(tensor, tf.SparseTensor)):
            raise EstimatorError('%s[%r] must be a tensor, got %s'
                                 % (what, name, type(tensor).__name__))
    return tensors


class ServingInputReceiver(collections.namedtuple('ServingInputReceiver', [
        'features', 'receiver_tensors', 'receiver_tensors_alternatives'])):
    """features: a tensor or dict name -> tensor given to the `model_fn`; receiver_tensors: a
    tensor or dict name -> placeholder fed by a client; receiver_tensors_alternatives: dict
    name -> such a dict, for further signatures."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        features = _as_dict(features, SINGLE_FEATURE_DEFAULT_NAME, 'features')
        receiver_tensors = _as_dict(receiver_tensors, SINGLE_RECEIVER_DEFAULT_NAME,
                                    'receiver_tensors')
        if receiver_tensors_alternatives is not None:
            receiver_tensors_alternatives = {
                name: _as_dict(tensors, SINGLE_RECEIVER_DEFAULT_NAME,
                               'receiver_tensors_alternatives[%r]' % name)
                for name, tensors in receiver_tensors_alternatives.items()}
        return super().__new__(cls, features, receiver_tensors, receiver_tensors_alternatives)


class TensorServingInputReceiver(collections.namedtuple('TensorServingInputReceiver', [
        'features', 'receiver_tensors', 'receiver_tensors_alternatives'])):
    """A receiver whose `features` is one tensor, handed to the `model_fn` as is."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if not tf.is_tensor(features):
            raise EstimatorError('TensorServingInputReceiver features must be one tensor, got '
                                 '%s' % type(features).__name__)
        receiver = ServingInputReceiver({SINGLE_FEATURE_DEFAULT_NAME: features},
                                        receiver_tensors, receiver_tensors_alternatives)
        return super().__new__(cls, features, receiver.receiver_tensors,
                               receiver.receiver_tensors_alternatives)


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A receiver fn that parses serialized `tf.Example`s with `feature_spec` (as
    `tf.feature_column.make_parse_example_spec` gives it)."""
    def serving_input_receiver_fn():
        serialized = tf.placeholder(tf.string, [default_batch_size],
                                    name='input_example_tensor')
        features = tf.parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, {'examples': serialized})
    return serving_input_receiver_fn


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A receiver fn with a placeholder per feature of `features` (a dict name -> tensor, or
    one tensor), of its dtype and shape, the batch dimension `default_batch_size`."""
    def serving_input_receiver_fn():
        given = features if isinstance(features, dict) else {
            SINGLE_FEATURE_DEFAULT_NAME: features}
        placeholders = {}
        for name, tensor in given.items():
            shape = [default_batch_size] + tensor.shape.as_list()[1:]
            placeholders[name] = tf.placeholder(tensor.dtype, shape, name=name)
        if isinstance(features, dict):
            return ServingInputReceiver(placeholders, placeholders)
        return TensorServingInputReceiver(placeholders[SINGLE_FEATURE_DEFAULT_NAME],
                                          placeholders)
    return serving_input_receiver_fn


def serving(call_model_fn, serving_input_receiver_fn, mode, what):
    """What an Estimator's SavedModel serves: the `towers.export.Serving` of its `model_fn`'s
    network in `mode` on the features of `serving_input_receiver_fn`'s receiver, with a
    signature per export output (TF 1.x's keys: 'serving_default', 'classification', ...).

    Args:
      call_model_fn: a function (features, labels, mode) -> `EstimatorSpec`.
      serving_input_receiver_fn: returns a `ServingInputReceiver`.
      mode: a `ModeKeys` value (PREDICT for serving).
      what: the model, for errors.
    """
    signature_defs = {}

    def build():
        tf.train.get_or_create_global_step()
        receiver = serving_input_receiver_fn()
        if not hasattr(receiver, 'receiver_tensors'):
            raise EstimatorError('serving_input_receiver_fn returned %s: expected a '
                                 'tf.estimator.export.ServingInputReceiver'
                                 % type(receiver).__name__)
        spec = call_model_fn(receiver.features, None, mode)
        outputs = export_utils.export_outputs_for_mode(
            mode, serving_export_outputs=spec.export_outputs, predictions=spec.predictions,
            loss=spec.loss, metrics=spec.eval_metric_ops or None)
        signature_defs.update(export_utils.build_all_signature_defs(
            receiver.receiver_tensors, outputs, receiver.receiver_tensors_alternatives,
            serving_only=mode == ModeKeys.PREDICT))
        predictions = spec.predictions
        return (receiver.receiver_tensors,
                predictions if isinstance(predictions, dict) else {'output': predictions})

    return export_lib.Serving(build, what, signature_defs=lambda: signature_defs)
