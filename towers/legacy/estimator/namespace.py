"""The module objects of `tf.estimator` under the legacy runner, at every import path old code
used: `tf.estimator` (= `tf.compat.v1.estimator`), `tensorflow.estimator`, `tensorflow_estimator`
(`tensorflow_estimator.estimator`, `tensorflow_estimator.python.estimator.<module>`) and
`tensorflow.python.estimator.<module>` (TF <= 1.12's private paths). Each is a `ProxyModule`,
so a name the runner lacks stops the script with one line naming it, and each use is recorded.
"""
import importlib

from towers.compat import tf
from towers.legacy.estimator import tf115_names
from towers.legacy.modules import ProxyModule, StubModule

HOOKS = ('SessionRunHook', 'SessionRunArgs', 'SessionRunContext', 'SessionRunValues',
         'CheckpointSaverHook', 'CheckpointSaverListener', 'FeedFnHook', 'FinalOpsHook',
         'GlobalStepWaiterHook', 'LoggingTensorHook', 'NanLossDuringTrainingError',
         'NanTensorHook', 'ProfilerHook', 'SecondOrStepTimer', 'StepCounterHook',
         'StopAtStepHook', 'SummarySaverHook')
_PACKAGE = 'towers.legacy.estimator.'
# The public API: name -> module of this package holding it (a module name without the
# package; '' for the hooks, which are TensorFlow's).
_NAMES = {
    'Estimator': 'estimator', 'EstimatorSpec': 'spec', 'ModeKeys': 'spec',
    'RunConfig': 'run_config', 'TrainSpec': 'training', 'EvalSpec': 'training',
    'train_and_evaluate': 'training', 'Exporter': 'exporter', 'FinalExporter': 'exporter',
    'LatestExporter': 'exporter', 'BestExporter': 'exporter',
    'WarmStartSettings': 'warm_start', 'VocabInfo': 'warm_start',
}
_CANNED = ('BoostedTreesClassifier', 'BoostedTreesRegressor', 'DNNClassifier', 'DNNRegressor',
           'LinearClassifier', 'LinearRegressor', 'DNNLinearCombinedClassifier',
           'DNNLinearCombinedRegressor', 'BaselineClassifier', 'BaselineRegressor',
           'classifier_parse_example_spec', 'regressor_parse_example_spec')
_EXPORT = ('ServingInputReceiver', 'TensorServingInputReceiver', 'ExportOutput',
           'PredictOutput', 'ClassificationOutput', 'RegressionOutput',
           'build_parsing_serving_input_receiver_fn', 'build_raw_serving_input_receiver_fn')
_INPUTS = ('numpy_input_fn', 'pandas_input_fn')
# `tf.estimator.add_metrics` and `tf.estimator.experimental`'s early stopping: `tf.contrib.
# estimator`'s (TF 1.15 had them at both places).
_EXTENDERS = 'towers.legacy.contrib.extenders'
# `tf.estimator.tpu` of TF 1.15: `tf.contrib.tpu`'s TPUEstimator with use_tpu=False.
_TPU = 'towers.legacy.contrib.tpu'
_TPU_NAMES = ('TPUEstimator', 'TPUEstimatorSpec', 'RunConfig', 'TPUConfig',
              'InputPipelineConfig')
_EXPERIMENTAL = ('make_early_stopping_hook', 'stop_if_higher_hook', 'stop_if_lower_hook',
                 'stop_if_no_increase_hook', 'stop_if_no_decrease_hook')
# The rest of `tf.estimator.experimental` of TF 1.15: module -> its names there.
_EXPERIMENTAL_ELSEWHERE = {
    'spec': ('call_logit_fn',), 'canned.dnn': ('dnn_logit_fn_builder',),
    'canned.linear': ('linear_logit_fn_builder', 'LinearSDCA'),
    'export': ('build_raw_supervised_input_receiver_fn',),
    'hooks': ('InMemoryEvaluatorHook', 'make_stop_at_checkpoint_step_hook')}
# Private module paths of TF 1.x (below tensorflow.python.estimator and
# tensorflow_estimator.python.estimator) -> this package's module holding their names; a path
# of `tf115_names.NAMES` exposes TF 1.15's names of that module and no other.
_PRIVATE = {'estimator': 'estimator', 'model_fn': 'spec', 'mode_keys': 'spec',
            'run_config': 'run_config', 'training': 'training', 'exporter': 'exporter',
            'warm_starting_util': 'warm_start', 'export.export': 'export',
            'export.export_output': 'export', 'export.export_lib': 'export',
            'inputs.inputs': 'inputs', 'inputs.numpy_io': 'inputs', 'inputs.pandas_io': 'inputs',
            'keras': 'keras', 'util': 'calls', 'hooks.hooks': 'hooks', 'extenders': _EXTENDERS,
            'early_stopping': _EXTENDERS, 'estimator_lib': 'estimator',
            'tpu': _TPU, 'tpu.tpu_estimator': _TPU, 'tpu.tpu_config': _TPU}
# Packages of those paths: they hold their modules, imported by path.
_PACKAGES = ('canned', 'export', 'inputs', 'hooks')
ROOTS = ('tensorflow.estimator', 'tensorflow_estimator.estimator',
         'tensorflow.compat.v1.estimator', 'tensorflow_estimator.compat.v1.estimator',
         'tensorflow_estimator.python.estimator', 'tensorflow.python.estimator')
# TF 2.15's `tf.estimator` (`--tf2`), where it differs from TF 1.15's: name -> (module, its
# name there). The V2 canned estimators (`canned.v2`), TF 2's heads, `EstimatorV2`; no
# `inputs` or `tpu` (TF 2 kept them at `tf.compat.v1.estimator`).
_V2_CANNED = 'canned.v2'
_V2 = dict({name: (_V2_CANNED, name + 'V2') for name in (
    'DNNClassifier', 'DNNRegressor', 'DNNEstimator', 'LinearClassifier', 'LinearRegressor',
    'LinearEstimator', 'DNNLinearCombinedClassifier', 'DNNLinearCombinedRegressor',
    'DNNLinearCombinedEstimator', 'BaselineClassifier', 'BaselineRegressor',
    'BaselineEstimator')}, **{name: (_V2_CANNED, name) for name in (
        'Head', 'BinaryClassHead', 'MultiClassHead', 'RegressionHead',
        'PoissonRegressionHead', 'LogisticRegressionHead')},
    Estimator=('estimator', 'EstimatorV2'), BestExporter=('exporter', 'BestExporterV2'),
    MultiLabelHead=('canned.head_v2_multi', 'MultiLabelHead'),
    MultiHead=('canned.head_v2_multi', 'MultiHead'))
_V2_EXPORT = _EXPORT + ('EvalOutput',)
# TF 2.15's `tf.estimator.experimental` only (not `tf.compat.v1.estimator.experimental`).
_V2_EXPERIMENTAL = {'canned.rnn': ('RNNClassifier', 'RNNEstimator')}
# TF 2.15's other names of `tf.estimator`, TF 1.15's objects (and boosted trees, which TF
# 2.0-2.8 had; the classifier and the regressor are provided).
_V2_KEPT = HOOKS + ('EstimatorSpec', 'EvalSpec', 'Exporter', 'FinalExporter',
                    'LatestExporter', 'ModeKeys', 'RunConfig', 'TrainSpec', 'VocabInfo',
                    'WarmStartSettings', 'add_metrics', 'classifier_parse_example_spec',
                    'regressor_parse_example_spec', 'train_and_evaluate',
                    'BoostedTreesClassifier', 'BoostedTreesRegressor')


def _missing(attribute):
    return "towers-legacy's tf.estimator does not have it"


def _names(module, names):
    """dict name -> the attribute `name` of this package's `module` (imported on first use);
    `names` a dict {name: the attribute's name in `module`} where they differ."""
    return _LazyNames(module, names if isinstance(names, dict) else {n: n for n in names})


class _LazyNames(dict):
    """A dict of names of one module of this package, imported when a name is first read."""

    def __init__(self, module, names):
        super().__init__()
        self._module, self._wanted = module, dict(names)

    def _load(self):
        if not dict.__len__(self):
            module = (tf.train if not self._module else importlib.import_module(
                self._module if self._module.startswith('towers.') else _PACKAGE + self._module))
            self.update({name: getattr(module, attribute)
                         for name, attribute in self._wanted.items()
                         if hasattr(module, attribute)})

    def get(self, key, default=None):
        if key not in self._wanted:
            return default
        self._load()
        return dict.get(self, key, default)

    def __iter__(self):
        return iter(self._wanted)


class _Exposed(dict):
    """TF 1.15's names of one module (`names`), each found in the first of `sources` (modules)
    that has it; no other name."""

    def __init__(self, names, sources):
        super().__init__()
        self._wanted, self._sources = frozenset(names), sources

    def get(self, key, default=None):
        if key not in self._wanted:
            return default
        for source in self._sources:
            found = getattr(source, key, None)
            if found is not None:
                return found
        return default

    def __iter__(self):
        return iter(sorted(self._wanted))


class Namespace:
    """`tf.estimator` and its import paths, recording use in `usage`.

    Attributes:
      v1: the `tf.compat.v1.estimator` module, TF 1.15's.
      root: the `tf.estimator` module: `v1`, or TF 2.15's with `tf2` (`--tf2`).
    """

    def __init__(self, usage, tf2=False):
        self._usage = usage
        sources = [_names('', HOOKS), _names('canned', _CANNED)] + [
            _names(module, [name for name, owner in _NAMES.items() if owner == module])
            for module in sorted(set(_NAMES.values()))]
        export = self._proxy('tensorflow.estimator.export', 'tf.estimator.export',
                             [_names('export', _EXPORT)])
        self._inputs = self._proxy('tensorflow.estimator.inputs', 'tf.estimator.inputs',
                                   [_names('inputs', _INPUTS)])
        experimental = [_names(_EXTENDERS, _EXPERIMENTAL)] + [
            _names(module, names) for module, names in _EXPERIMENTAL_ELSEWHERE.items()]
        self._experimental = self._proxy('tensorflow.estimator.experimental',
                                         'tf.estimator.experimental', experimental)
        self._tpu = self._proxy('tensorflow.estimator.tpu', 'tf.estimator.tpu',
                                [_names(_TPU, _TPU_NAMES)])
        self._subpackages = {'export': export, 'inputs': self._inputs,
                             'experimental': self._experimental, 'tpu': self._tpu}
        self.v1 = self.root = self._proxy('tensorflow.estimator', 'tf.estimator', sources + [
            _names(_EXTENDERS, ['add_metrics']), self._subpackages])
        self.v1.__path__ = []
        if tf2:
            self._subpackages = {
                'export': self._proxy('tensorflow.estimator.export', 'tf.estimator.export',
                                      [_names('export', _V2_EXPORT)]),
                'experimental': self._proxy(
                    'tensorflow.estimator.experimental', 'tf.estimator.experimental',
                    experimental + [_names(module, names)
                                    for module, names in _V2_EXPERIMENTAL.items()])}
            v2 = [_names(module, {name: attribute for name, (owner, attribute) in _V2.items()
                                  if owner == module})
                  for module in sorted({owner for owner, _ in _V2.values()})]
            self.root = self._proxy('tensorflow.estimator', 'tf.estimator', v2 + [
                _Exposed(_V2_KEPT, [self.v1]), self._subpackages])
            self.root.__path__ = []
        compat_v1 = self._package('tensorflow_estimator.compat.v1', {'estimator': self.v1})
        compat = self._package('tensorflow_estimator.compat', {'v1': compat_v1})
        self._packages = {
            'tensorflow_estimator': self._package(
                'tensorflow_estimator', {'estimator': self.root, 'compat': compat}),
            'tensorflow_estimator.python': self._package('tensorflow_estimator.python',
                                                         {'estimator': self.root}),
            'tensorflow_estimator.compat': compat, 'tensorflow_estimator.compat.v1': compat_v1}

    def _proxy(self, name, display, sources):
        return ProxyModule(name, display, sources, self._usage, False, _missing)

    def _package(self, name, modules):
        """The package `name` of `tensorflow_estimator` holding `modules` (name -> module)."""
        package = self._proxy(name, name, [modules])
        package.__path__ = []
        return package

    def resolve(self, fullname):
        """The module to import as `fullname`, or None for a name outside `ROOTS` and
        `tensorflow_estimator`."""
        if fullname in self._packages:
            return self._packages[fullname]
        root = next((root for root in ROOTS if fullname == root
                     or fullname.startswith(root + '.')), None)
        if root is None:
            return None
        path = fullname[len(root) + 1:]
        if not path:
            if root.endswith('compat.v1.estimator'):
                return self.v1
            if root == 'tensorflow.python.estimator':
                # TF <= 1.12's package: `tf.estimator`'s names, but a module of its own, so
                # that importing its modules (`.export`) never replaces `tf.estimator`'s.
                return self._stub(fullname, [self.root])
            return self.root if root != 'tensorflow_estimator.python.estimator' else self._stub(
                fullname, [])
        if root in ('tensorflow.estimator', 'tensorflow_estimator.estimator'):
            return self._subpackages.get(path) or self._stub(fullname, [])
        if root.endswith('compat.v1.estimator'):
            return getattr(self.v1, path) if path in ('export', 'inputs', 'experimental',
                                                      'tpu') else self._stub(fullname, [])
        if path in _PACKAGES:
            return self._stub(fullname, [])
        owner = _PRIVATE.get(path, 'canned' if path.startswith('canned.') else None)
        if owner is None:
            return self._stub(fullname, [])
        module = importlib.import_module(owner if owner.startswith('towers.') else
                                         _PACKAGE + owner)
        if path in tf115_names.NAMES:
            owners = [module, self.v1] + [getattr(self.v1, name)
                                          for name in ('export', 'inputs', 'experimental')]
            if self.root is not self.v1:   # TF 2's face: its experimental RNN estimators too
                owners.append(self.root.experimental)
            sources = [_Exposed(tf115_names.NAMES[path], owners)]
        else:
            sources = [module, self.v1]
        proxy = self._proxy(fullname, 'tf.estimator (%s)' % fullname, sources)
        proxy.__path__ = []
        return proxy

    def _stub(self, fullname, sources):
        return StubModule(fullname, fullname, sources, self._usage, False, _missing)
