"""`tf.estimator.WarmStartSettings`: a new model's variables taken from another's checkpoint.

TF 1.x's Estimator applied them after the `model_fn` (through `tf.compat.v1.train.warm_start`,
which TensorFlow still has) to the training graph, and to the graphs of `evaluate`, `predict`
and `export_saved_model` while `model_dir` held no checkpoint; a checkpoint of the Estimator's
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
            raise EstimatorError('`ckpt_to_initialize_from` MUST be set in WarmStartSettings: '
                                 'a checkpoint, its folder or a SavedModel folder')
        return super().__new__(cls, ckpt_to_initialize_from, vars_to_warm_start,
                               var_name_to_vocab_info or {}, var_name_to_prev_var_name or {})


def warm_start_settings(warm_start_from):
    """The `WarmStartSettings` of an Estimator's `warm_start_from`: None, a path, or settings;
    a SavedModel's folder (one holding `variables/variables.index`) means its variables.

    Returns:
      The settings (their fields are `tf.train.warm_start`'s arguments), or None.

    Raises:
      EstimatorError: `warm_start_from` is neither.
    """
    if warm_start_from is None:
        return None
    if isinstance(warm_start_from, (str, bytes, os.PathLike)):
        warm_start_from = WarmStartSettings(os.fsdecode(warm_start_from))
    if not isinstance(warm_start_from, WarmStartSettings):
        raise EstimatorError('warm_start_from must be a string or a WarmStartSettings, instead '
                             'got %s' % type(warm_start_from).__name__)
    variables = os.path.join(os.fsdecode(warm_start_from.ckpt_to_initialize_from), 'variables',
                             'variables')
    if tf.gfile.Exists(variables + '.index'):
        tf.logging.info('Warm-starting from a SavedModel')
        return warm_start_from._replace(ckpt_to_initialize_from=variables)
    return warm_start_from


def apply(settings, checkpoint=None):
    """Makes the variables of the default graph that `settings` (None: none) name start from
    its checkpoint, unless the graph restores a `checkpoint` of the model's own: their
    initializers read it, so the session's initialization (or a checkpoint of the model's
    own, restored over it) decides."""
    if settings is not None and checkpoint is None:
        tf.logging.info('Warm-starting with WarmStartSettings: %s', settings)
        tf.train.warm_start(*settings)
