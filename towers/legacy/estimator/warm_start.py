"""`tf.estimator.WarmStartSettings`: a new model's variables taken from another's checkpoint.

TF 1.x's Estimator applied them to the training graph after the `model_fn` (through
`tf.compat.v1.train.warm_start`, which TensorFlow still has); a checkpoint of the Estimator's
own `model_dir` restores over them, so they start a new model only.
"""
import collections
import os

from towers.compat import tf
from towers.legacy.estimator.spec import EstimatorError

VocabInfo = tf.train.VocabInfo


class WarmStartSettings(collections.namedtuple('WarmStartSettings', [
        'ckpt_to_initialize_from', 'vars_to_warm_start', 'var_name_to_vocab_info',
        'var_name_to_prev_var_name'])):
    """Which checkpoint, which variables (a regular expression or a list, '.*' by default: all
    trainable ones), vocabularies remapped, variables renamed."""

    def __new__(cls, ckpt_to_initialize_from, vars_to_warm_start='.*',
                var_name_to_vocab_info=None, var_name_to_prev_var_name=None):
        if not ckpt_to_initialize_from:
            raise EstimatorError('WarmStartSettings needs ckpt_to_initialize_from: a '
                                 'checkpoint, its folder or a SavedModel folder')
        return super().__new__(cls, ckpt_to_initialize_from, vars_to_warm_start,
                               var_name_to_vocab_info or {}, var_name_to_prev_var_name or {})


def warm_start_settings(warm_start_from):
    """The `WarmStartSettings` of an Estimator's `warm_start_from` (None, a path, or
    settings); a SavedModel's folder means its variables.

    Returns:
      The settings as a tuple of `tf.train.warm_start`'s arguments, or None.
    """
    if warm_start_from is None:
        return None
    if isinstance(warm_start_from, (str, bytes, os.PathLike)):
        warm_start_from = WarmStartSettings(os.fsdecode(warm_start_from))
    if not isinstance(warm_start_from, WarmStartSettings):
        raise EstimatorError('warm_start_from must be a path or tf.estimator.WarmStartSettings, '
                             'got %s' % type(warm_start_from).__name__)
    path = os.fsdecode(warm_start_from.ckpt_to_initialize_from)
    if os.path.isfile(os.path.join(path, 'saved_model.pb')):
        warm_start_from = warm_start_from._replace(
            ckpt_to_initialize_from=os.path.join(path, 'variables', 'variables'))
    return tuple(warm_start_from)
