"""`tf.contrib.learn.ExportStrategy` and `saved_model_export_utils.make_export_strategy`: how an
`Experiment` exports its Estimator after evaluating it.

    strategy = saved_model_export_utils.make_export_strategy(serving_input_fn, exports_to_keep=2)
    Experiment(estimator, ..., export_strategies=[strategy])

The `Experiment` calls `strategy.export(estimator, <model_dir>/export/<name>, checkpoint_path,
eval_result)`; `make_export_strategy`'s export writes a SavedModel into a new timestamped
folder there (`Estimator.export_saved_model`) and removes all but the newest `exports_to_keep`.
"""
import collections
import os
import shutil

from towers.compat import tf
from towers.legacy.estimator import calls
from towers.legacy.estimator.spec import EstimatorError


class ExportStrategy(collections.namedtuple('ExportStrategy',
                                            ['name', 'export_fn', 'strip_default_attrs'])):
    """A named export function.

    Fields:
      name: the folder below `<model_dir>/export` its exports go to.
      export_fn: (estimator, export_dir_base, [checkpoint_path, [eval_result]],
        [strip_default_attrs]) -> what it wrote (a path).
      strip_default_attrs: handed to `export_fn` when it takes it.
    """

    def __new__(cls, name, export_fn, strip_default_attrs=None):
        return super().__new__(cls, name, export_fn, strip_default_attrs)

    def export(self, estimator, export_path, checkpoint_path=None, eval_result=None):
        """Calls `export_fn` with the arguments it takes; returns what it returns.

        Raises:
          EstimatorError: `export_fn` takes `eval_result` but not `checkpoint_path`.
        """
        names, _ = calls.arg_names(self.export_fn)
        kwargs = {}
        if 'checkpoint_path' in names:
            kwargs['checkpoint_path'] = checkpoint_path
        if 'eval_result' in names:
            if 'checkpoint_path' not in names:
                raise EstimatorError('ExportStrategy %r: an export_fn taking eval_result must '
                                     'take checkpoint_path too' % self.name)
            kwargs['eval_result'] = eval_result
        if 'strip_default_attrs' in names:
            kwargs['strip_default_attrs'] = self.strip_default_attrs
        return self.export_fn(estimator, export_path, **kwargs)


def make_export_strategy(serving_input_fn, default_output_alternative_key=None,
                         assets_extra=None, as_text=False, exports_to_keep=5,
                         strip_default_attrs=None):
    """An `ExportStrategy` named 'Servo' that writes a SavedModel of the Estimator.

    Args:
      serving_input_fn: () -> a `tf.estimator.export.ServingInputReceiver`.
      default_output_alternative_key: None (the head's key of contrib.learn's own Estimator,
        which towers-legacy does not provide).
      assets_extra, as_text: as `Estimator.export_saved_model`'s.
      exports_to_keep: how many of the newest exports to keep (None: all).
      strip_default_attrs: accepted, as TF 1.x's.

    Raises:
      EstimatorError: a `default_output_alternative_key`.
    """
    if default_output_alternative_key is not None:
        raise EstimatorError('make_export_strategy: default_output_alternative_key is for '
                             "tf.contrib.learn's own Estimator; a tf.estimator.Estimator names "
                             'its outputs in the EstimatorSpec (export_outputs)')

    def export_fn(estimator, export_dir_base, checkpoint_path=None, strip_default_attrs=False):
        path = estimator.export_saved_model(export_dir_base, serving_input_fn,
                                            assets_extra=assets_extra, as_text=as_text,
                                            checkpoint_path=checkpoint_path)
        if exports_to_keep is not None:
            remove_old_exports(export_dir_base, exports_to_keep)
        return path

    return ExportStrategy('Servo', export_fn, strip_default_attrs)


def remove_old_exports(export_dir_base, exports_to_keep):
    """Removes the timestamped export folders of `export_dir_base` but the newest
    `exports_to_keep`."""
    export_dir_base = os.fsdecode(export_dir_base)
    if not os.path.isdir(export_dir_base):
        return
    exports = sorted(int(name) for name in os.listdir(export_dir_base) if name.isdigit())
    for timestamp in exports[:max(len(exports) - exports_to_keep, 0)]:
        tf.logging.info('Removing the old export %d of %s', timestamp, export_dir_base)
        shutil.rmtree(os.path.join(export_dir_base, str(timestamp)), ignore_errors=True)
