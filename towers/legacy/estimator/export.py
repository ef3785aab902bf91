"""`tf.estimator.export`: what an exported model takes (receivers) and gives (export outputs).

A `serving_input_receiver_fn` returns a `ServingInputReceiver`: the tensors a client feeds
(`receiver_tensors`) and the `features` the `model_fn` gets from them. The two builders TF 1.x
had: `build_parsing_serving_input_receiver_fn` (serialized `tf.Example`s parsed by a feature
spec, fed as 'examples' through the placeholder 'input_example_tensor') and
`build_raw_serving_input_receiver_fn` (a placeholder like each feature, fed by its key). For
exporting the TRAIN and EVAL graphs too (`Estimator.experimental_export_all_saved_models`), a
`SupervisedInputReceiver` adds the `labels`; `build_raw_supervised_input_receiver_fn` and
`build_supervised_input_receiver_fn_from_input_fn` build one. The export outputs, the signature
builders and the export folder names are TensorFlow's own (`model_utils`), which it still ships
and TF 1.15's `export_lib` re-exported.
"""
import collections

from towers import export as export_lib
from towers.compat import export_output, export_utils, tf
from towers.legacy.estimator.spec import EstimatorError, ModeKeys

ExportOutput = export_output.ExportOutput
PredictOutput = export_output.PredictOutput
ClassificationOutput = export_output.ClassificationOutput
RegressionOutput = export_output.RegressionOutput
EvalOutput = export_output.EvalOutput
TrainOutput = export_output.TrainOutput

SINGLE_FEATURE_DEFAULT_NAME = export_utils.SINGLE_FEATURE_DEFAULT_NAME
SINGLE_LABEL_DEFAULT_NAME = export_utils.SINGLE_LABEL_DEFAULT_NAME
SINGLE_RECEIVER_DEFAULT_NAME = export_utils.SINGLE_RECEIVER_DEFAULT_NAME
EXPORT_TAG_MAP = export_utils.EXPORT_TAG_MAP
SIGNATURE_KEY_MAP = export_utils.SIGNATURE_KEY_MAP
build_all_signature_defs = export_utils.build_all_signature_defs
export_outputs_for_mode = export_utils.export_outputs_for_mode
get_export_outputs = export_utils.get_export_outputs
get_temp_export_dir = export_utils.get_temp_export_dir
get_timestamped_export_dir = export_utils.get_timestamped_export_dir

# The key a lone tensor gets, by the field it was given as.
_DEFAULT_KEYS = {'feature': SINGLE_FEATURE_DEFAULT_NAME, 'label': SINGLE_LABEL_DEFAULT_NAME,
                 'receiver_tensor': SINGLE_RECEIVER_DEFAULT_NAME,
                 'receiver_tensors_alternative': SINGLE_RECEIVER_DEFAULT_NAME}


def _check_tensor(value, what):
    """Raises `EstimatorError` unless `value` is a `Tensor` or `SparseTensor`, or (as TF 1.15
    let through for contrib's LabeledTensor) has a `.tensor` and converts to a `Tensor`."""
    if isinstance(value, (tf.Tensor, tf.SparseTensor)):
        return
    if hasattr(value, 'tensor'):
        try:
            tf.convert_to_tensor(value)
            return
        except (TypeError, ValueError):
            pass
    raise EstimatorError('%s must be a Tensor or SparseTensor, got %s'
                         % (what, type(value).__name__))


def wrap_and_check_input_tensors(tensors, field_name, allow_int_keys=False):
    """`tensors` as a dict key -> tensor, checked.

    Args:
      tensors: a `Tensor` or `SparseTensor` (keyed by `field_name`'s default key: 'feature',
        'label' or 'input'), or a dict str -> such tensor.
      field_name: 'feature', 'label', 'receiver_tensor' or 'receiver_tensors_alternative':
        the receiver's field `tensors` is, for the key and the errors.
      allow_int_keys: whether int keys are accepted too.

    Returns:
      The dict (`tensors` itself when it is one).

    Raises:
      EstimatorError (a ValueError): `tensors` is None, a key is not a str (or int), a value
        not a tensor.
    """
    if tensors is None:
        raise EstimatorError('%ss must be defined: a Tensor, a SparseTensor or a dict of them'
                             % field_name)
    if not isinstance(tensors, dict):
        tensors = {_DEFAULT_KEYS[field_name]: tensors}
    key_types, kinds = (str, int) if allow_int_keys else str, (
        'strings or ints' if allow_int_keys else 'strings')
    for key, tensor in tensors.items():
        if not isinstance(key, key_types):
            raise EstimatorError('%s keys must be %s: %r is a %s'
                                 % (field_name, kinds, key, type(key).__name__))
        _check_tensor(tensor, '%s %s' % (field_name, key))
    return tensors


class ServingInputReceiver(collections.namedtuple('ServingInputReceiver', [
        'features', 'receiver_tensors', 'receiver_tensors_alternatives'])):
    """What a `serving_input_receiver_fn` returns.

    Attributes:
      features: dict str or int -> `Tensor`/`SparseTensor`, given to the `model_fn` (one tensor
        is given as {'feature': it}).
      receiver_tensors: dict str -> tensor a client feeds (one tensor: {'input': it}).
      receiver_tensors_alternatives: None, or dict name -> such receiver tensors, each a
        further signature.
    """

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        features = wrap_and_check_input_tensors(features, 'feature', allow_int_keys=True)
        receiver_tensors = wrap_and_check_input_tensors(receiver_tensors, 'receiver_tensor')
        if receiver_tensors_alternatives is not None:
            if not isinstance(receiver_tensors_alternatives, dict):
                raise EstimatorError('receiver_tensors_alternatives must be a dict: name -> '
                                     'receiver tensors, got %r' % receiver_tensors_alternatives)
            receiver_tensors_alternatives = {
                name: wrap_and_check_input_tensors(tensors, 'receiver_tensors_alternative')
                for name, tensors in receiver_tensors_alternatives.items()}
        return super().__new__(cls, features, receiver_tensors, receiver_tensors_alternatives)


class TensorServingInputReceiver(collections.namedtuple('TensorServingInputReceiver', [
        'features', 'receiver_tensors', 'receiver_tensors_alternatives'])):
    """A receiver whose `features` is one `Tensor` or `SparseTensor`, handed to the `model_fn`
    as is; `receiver_tensors` and its alternatives as `ServingInputReceiver`'s."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if features is None:
            raise EstimatorError('TensorServingInputReceiver: features must be defined: one '
                                 'Tensor or SparseTensor')
        _check_tensor(features, 'TensorServingInputReceiver: its feature')
        receiver = ServingInputReceiver(features, receiver_tensors,
                                        receiver_tensors_alternatives)
        return super().__new__(cls, features, receiver.receiver_tensors,
                               receiver.receiver_tensors_alternatives)


class UnsupervisedInputReceiver(ServingInputReceiver):
    """A training or evaluation receiver without labels: a `ServingInputReceiver` of
    `features` and `receiver_tensors`, with no alternatives."""

    def __new__(cls, features, receiver_tensors):
        return super().__new__(cls, features, receiver_tensors, None)


class SupervisedInputReceiver(collections.namedtuple('SupervisedInputReceiver', [
        'features', 'labels', 'receiver_tensors'])):
    """What a receiver fn of the TRAIN or EVAL graph returns.

    Attributes:
      features, labels: each a `Tensor`/`SparseTensor` or dict str or int -> one, given to the
        `model_fn` as they are.
      receiver_tensors: dict str -> tensor a client feeds (one tensor: {'input': it}).
    """

    def __new__(cls, features, labels, receiver_tensors):
        wrap_and_check_input_tensors(features, 'feature', allow_int_keys=True)
        wrap_and_check_input_tensors(labels, 'label', allow_int_keys=True)
        receiver_tensors = wrap_and_check_input_tensors(receiver_tensors, 'receiver_tensor')
        return super().__new__(cls, features, labels, receiver_tensors)


def build_parsing_serving_input_receiver_fn(feature_spec, default_batch_size=None):
    """A receiver fn that parses serialized `tf.Example`s with `feature_spec` (as
    `tf.feature_column.make_parse_example_spec` gives it)."""
    def serving_input_receiver_fn():
        serialized = tf.placeholder(tf.string, [default_batch_size],
                                    name='input_example_tensor')
        features = tf.parse_example(serialized, feature_spec)
        return ServingInputReceiver(features, {'examples': serialized})
    return serving_input_receiver_fn


def _placeholder_like(tensor, default_batch_size):
    """A placeholder of `tensor`'s dtype, name and shape (of unknown rank when its is), its
    first dimension `default_batch_size`."""
    shape = tf.TensorShape([default_batch_size]).concatenate(tensor.shape[1:])
    return tf.placeholder(tensor.dtype, shape, name=tensor.op.name)


def _placeholders_like(tensors, default_key, default_batch_size):
    """(placeholders, receiver tensors): for a dict of tensors, a dict of placeholders like
    them, twice; for one tensor, a placeholder like it and {`default_key`: it}."""
    if isinstance(tensors, dict):
        placeholders = {key: _placeholder_like(tensor, default_batch_size)
                        for key, tensor in tensors.items()}
        return placeholders, placeholders
    placeholder = _placeholder_like(tensors, default_batch_size)
    return placeholder, {default_key: placeholder}


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A receiver fn with a placeholder like each of `features` (a dict key -> tensor, fed
    by its key), its batch dimension `default_batch_size`; for one tensor (as TF 2.x took
    it), a `TensorServingInputReceiver` of one placeholder fed as 'input'."""
    def serving_input_receiver_fn():
        placeholders, receiver_tensors = _placeholders_like(
            features, SINGLE_RECEIVER_DEFAULT_NAME, default_batch_size)
        if isinstance(features, dict):
            return ServingInputReceiver(placeholders, receiver_tensors)
        return TensorServingInputReceiver(placeholders, receiver_tensors)
    return serving_input_receiver_fn


def build_raw_supervised_input_receiver_fn(features, labels, default_batch_size=None):
    """A receiver fn giving the `model_fn` placeholders like `features` and `labels` (each a
    tensor or dict key -> tensor), a client feeding them by their keys (one tensor: as
    'input' for the features, 'label' for the labels).

    Raises:
      EstimatorError (a ValueError): features and labels share a key.
    """
    feature_keys = features.keys() if isinstance(features, dict) else [
        SINGLE_RECEIVER_DEFAULT_NAME]
    label_keys = labels.keys() if isinstance(labels, dict) else [SINGLE_LABEL_DEFAULT_NAME]
    shared = set(feature_keys) & set(label_keys)
    if shared:
        raise EstimatorError('Features and labels must have distinct keys, as a client feeds '
                             'both by key. Found overlapping keys: %s' % sorted(shared))

    def supervised_input_receiver_fn():
        feature_placeholders, receiver_tensors = _placeholders_like(
            features, SINGLE_RECEIVER_DEFAULT_NAME, default_batch_size)
        label_placeholders, label_receivers = _placeholders_like(
            labels, SINGLE_LABEL_DEFAULT_NAME, default_batch_size)
        return SupervisedInputReceiver(feature_placeholders, label_placeholders,
                                       dict(receiver_tensors, **label_receivers))
    return supervised_input_receiver_fn


def build_supervised_input_receiver_fn_from_input_fn(input_fn, **input_fn_args):
    """`build_raw_supervised_input_receiver_fn` of the features and labels `input_fn(
    **input_fn_args)` returns (a (features, labels) pair or a `Dataset` of them), built in a
    graph of their own so the default graph gets only the placeholders."""
    with tf.Graph().as_default():
        result = input_fn(**input_fn_args)
        if isinstance(result, tf.compat.v2.data.Dataset):
            result = tf.data.make_one_shot_iterator(result).get_next()
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise EstimatorError('the input_fn %s() returned a %s: a supervised receiver '
                                 'needs (features, labels) or a Dataset of them'
                                 % (getattr(input_fn, '__name__', input_fn),
                                    type(result).__name__))
        features, labels = result
    return build_raw_supervised_input_receiver_fn(features, labels)


def serving(call_model_fn, serving_input_receiver_fn, mode, what):
    """What an Estimator's SavedModel serves: the `towers.export.Serving` of its `model_fn`'s
    network in `mode` on the features (and labels, of a `SupervisedInputReceiver`) of
    `serving_input_receiver_fn`'s receiver, with a signature per export output (TF 1.x's
    keys: 'serving_default', 'classification', ...).

    Args:
      call_model_fn: a function (features, labels, mode) -> `EstimatorSpec`.
      serving_input_receiver_fn: returns a `ServingInputReceiver` (or, for TRAIN and EVAL,
        a `SupervisedInputReceiver`).
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
        spec = call_model_fn(receiver.features, getattr(receiver, 'labels', None), mode)
        outputs = export_outputs_for_mode(
            mode, serving_export_outputs=spec.export_outputs, predictions=spec.predictions,
            loss=spec.loss, metrics=spec.eval_metric_ops or None)
        signature_defs.update(build_all_signature_defs(
            receiver.receiver_tensors, outputs,
            getattr(receiver, 'receiver_tensors_alternatives', None),
            serving_only=mode == ModeKeys.PREDICT))
        predictions = spec.predictions
        return (receiver.receiver_tensors,
                predictions if isinstance(predictions, dict) else {'output': predictions})

    return export_lib.Serving(build, what, signature_defs=lambda: signature_defs)
