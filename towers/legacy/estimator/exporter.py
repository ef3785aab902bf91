"""`tf.estimator.Exporter`s: what `train_and_evaluate` exports after an evaluation.

`FinalExporter` exports once, after the evaluation at `max_steps`; `LatestExporter` after every
evaluation, keeping the newest `exports_to_keep`; `BestExporter` when an evaluation beats the
best so far (by `compare_fn`, the smaller loss by default; the best is first read from the
evaluation's event files of the estimator's `model_dir`, so a restarted run remembers it).
Each writes `export_path/<timestamp>` through `Estimator.export_saved_model`.
"""
import glob
import os
import shutil

from towers.compat import tf
from towers.legacy.estimator import calls
from towers.legacy.estimator.spec import EstimatorError

# The arguments a `BestExporter`'s `compare_fn` takes, by name, as TF 1.15 required them.
_COMPARE_ARGUMENTS = {'best_eval_result', 'current_eval_result'}


class Exporter:
    """A way of exporting after an evaluation: `name` and
    `export(estimator, export_path, checkpoint_path, eval_result, is_the_final_export)`,
    which returns the export's folder (bytes) or None."""

    @property
    def name(self):
        raise NotImplementedError

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        raise NotImplementedError


class _SavedModelExporter(Exporter):
    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False):
        if not name:
            raise EstimatorError('an Exporter needs a name')
        if not callable(serving_input_receiver_fn):
            raise EstimatorError('Exporter %s: serving_input_receiver_fn must be callable'
                                 % name)
        self._name = name
        self._receiver_fn = serving_input_receiver_fn
        self._assets_extra = assets_extra
        self._as_text = as_text

    @property
    def name(self):
        return self._name

    def _export(self, estimator, export_path, checkpoint_path):
        return estimator.export_saved_model(export_path, self._receiver_fn,
                                            assets_extra=self._assets_extra,
                                            as_text=self._as_text,
                                            checkpoint_path=checkpoint_path)


def _check_exports_to_keep(exporter, exports_to_keep):
    if exports_to_keep is not None and exports_to_keep <= 0:
        raise EstimatorError('%s exports_to_keep, if provided, must be a positive number (or '
                             'None, to keep all), got %s' % (exporter, exports_to_keep))


def _keep_newest(export_path, exports_to_keep):
    """Removes all but the newest `exports_to_keep` exports of `export_path` (its folders
    named by a 10-digit timestamp, as TF 1.x counted them)."""
    if not exports_to_keep:
        return
    exports = sorted((name for name in os.listdir(export_path)
                      if len(name) == 10 and name.isdigit()), key=int)
    for name in exports[:-exports_to_keep]:
        shutil.rmtree(os.path.join(export_path, name), ignore_errors=True)


class FinalExporter(_SavedModelExporter):
    """Exports after the last evaluation (at `max_steps`) only."""

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        if not is_the_final_export:
            return None
        tf.logging.info('Performing the final export in the end of training.')
        return self._export(estimator, export_path, checkpoint_path)


class LatestExporter(_SavedModelExporter):
    """Exports after every evaluation, keeping the `exports_to_keep` newest (None: all)."""

    def __init__(self, name, serving_input_receiver_fn, assets_extra=None, as_text=False,
                 exports_to_keep=5):
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        _check_exports_to_keep('LatestExporter', exports_to_keep)
        self._keep = exports_to_keep

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        written = self._export(estimator, export_path, checkpoint_path)
        _keep_newest(export_path, self._keep)
        return written


def _loss_smaller(best_eval_result, current_eval_result):
    """BestExporter's default: whether the current loss is smaller than the best."""
    for result in (best_eval_result, current_eval_result):
        if not result or 'loss' not in result:
            raise EstimatorError('BestExporter compares the evaluations\' "loss", which this '
                                 'evaluation result lacks: %s' % result)
    return best_eval_result['loss'] > current_eval_result['loss']


class BestExporter(_SavedModelExporter):
    """Exports when an evaluation is better than the best before it (`compare_fn(best,
    current)` True), keeping the `exports_to_keep` newest."""

    # TF 1.15's skipped the first export when the event files already held an evaluation as
    # good: the current one, which the evaluation writes before exporting.
    FIRST_EXPORT_ALWAYS = False

    def __init__(self, name='best_exporter', serving_input_receiver_fn=None,
                 event_file_pattern='eval/*.tfevents.*', compare_fn=_loss_smaller,
                 assets_extra=None, as_text=False, exports_to_keep=5):
        super().__init__(name, serving_input_receiver_fn, assets_extra, as_text)
        if compare_fn is None:
            raise EstimatorError('BestExporter: `compare_fn` must not be None: a function '
                                 '(best_eval_result, current_eval_result) -> bool')
        if not callable(compare_fn):
            raise EstimatorError('BestExporter compare_fn must be callable')
        arguments = set(calls.fn_args(compare_fn))
        if arguments != _COMPARE_ARGUMENTS:
            raise EstimatorError(
                'BestExporter compare_fn %s must include best_eval_result argument and '
                'current_eval_result argument, and no other; it takes %s'
                % (getattr(compare_fn, '__name__', compare_fn), sorted(arguments)))
        _check_exports_to_keep('BestExporter', exports_to_keep)
        self._compare = compare_fn
        self._pattern = event_file_pattern
        self._keep = exports_to_keep
        self._best = None
        self._model_dir = None
        self._exported = False

    def export(self, estimator, export_path, checkpoint_path, eval_result,
               is_the_final_export):
        if self._pattern and self._model_dir != estimator.model_dir:
            self._model_dir = estimator.model_dir
            self._best = self._best_in_events(os.path.join(estimator.model_dir, self._pattern))
        first = self.FIRST_EXPORT_ALWAYS and not self._exported
        if self._best is not None and not first and not self._compare(self._best, eval_result):
            return None
        self._best = eval_result
        self._exported = True
        written = self._export(estimator, export_path, checkpoint_path)
        _keep_newest(export_path, self._keep)
        return written

    def _best_in_events(self, pattern):
        """The best evaluation in the event files matching `pattern`, or None."""
        best = None
        for path in glob.glob(pattern):
            results = {}
            for event in tf.train.summary_iterator(path):
                values = {value.tag: value.simple_value for value in event.summary.value
                          if value.HasField('simple_value')}
                if values:
                    results.setdefault(event.step, {}).update(values)
            for step, values in results.items():
                if 'loss' in values and (best is None or self._compare(best, values)):
                    best = dict(values, global_step=step)
        return best


class BestExporterV2(BestExporter):
    """TF 2.2-2.15's `BestExporter` (`tf.estimator` under `--tf2`): as TF 1.15's, but the first
    export of each exporter is always written."""

    FIRST_EXPORT_ALWAYS = True
