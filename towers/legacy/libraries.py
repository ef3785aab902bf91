"""The libraries around TensorFlow as TF1-era evaluation code used them: `np.matrix` arguments.

Evaluation code of 2017-2019 often held its scores in `np.matrix` objects (`np.matrix(list).T`,
matrix products) and handed them on. Today's versions refuse what their 2019 versions took:

- scikit-learn 1.x refuses any `np.matrix` ('TypeError: np.matrix is not supported. Please
  convert to a numpy array with np.asarray. ...', from `check_array`). scikit-learn 0.20-0.21
  read a matrix as `np.asarray(matrix)`: an Nx1 column became a 1-D array (`column_or_1d`), a
  1xN row stayed 2-D, one sample of N outputs, which the curves and `auc` refused then as now
  ('multilabel-indicator format is not supported', 'bad input shape (1, N)'; today 'y should be
  a 1d array, got an array of shape (1, N) instead'). Each public function of `sklearn.metrics`
  (`precision_recall_curve`, `roc_curve`, `auc`, `roc_auc_score`, `average_precision_score`,
  `f1_score`, `confusion_matrix`, `pairwise_distances`, ...) takes its `np.matrix` arguments as
  `np.asarray` of them again, recorded as 'sklearn.metrics.<name>(np.matrix)'.
- NumPy (2.4 here; deprecated since 1.25) refuses `float()` of an array of one element that is
  not 0-D ('TypeError: only 0-dimensional arrays can be converted to Python scalars'), also of
  a 1x1 `np.matrix` such as `a * b.T`. `float()`, `int()` and `complex()` of a 1x1 `np.matrix`
  give its element again, as NumPy 1 did ('float(1x1 np.matrix)', ...). A 1-element `ndarray`
  cannot be given this back: `ndarray` is a C type whose conversions cannot be replaced (use
  `.item()`).
- matplotlib 3.x keeps an `np.matrix` a matrix where its `Line2D` flattens the data, so an Nx1
  column to `plot` fails ("ValueError: 'vertices' must be 2D with shape (N, 2), but your input
  has shape (1, 2N)"); matplotlib 2.x-3.1 converted it with `np.asarray` and drew one line.
  `Line2D` takes `np.matrix` data as `np.asarray` of it again
  ('matplotlib.lines.Line2D(np.matrix)'). As in 2019, a 1xN row is 2-D data of N columns:
  `plot` draws N lines of one point each, then as now.

And py-cpuinfo, which benchmark loggers of 2018 (tensorflow/models' `official.utils.logs`,
tf_cnn_benchmarks) read for the machine's description: its 7.0 renamed `info['brand']` to
'brand_raw' and `info['hz_advertised_raw']` to 'hz_advertised', so such a logger stops with
`KeyError: 'brand'`. `cpuinfo.get_cpu_info()` gives the old keys beside the new ones again
('cpuinfo's pre-7 keys' when one is read).

`install` changes `np.matrix` at once (NumPy is loaded) and `sklearn.metrics` and
`matplotlib.lines` when they are first imported, after their own code ran, so a script that
never imports them does not load them.
"""
import functools
import importlib.abc
import inspect
import sys
import warnings

import numpy as np

_installed = []


def install(usage):
    """Gives `np.matrix`, scikit-learn's metrics and matplotlib's lines their 2019 behaviour
    with `np.matrix` for the rest of the process (once); each use is recorded in `usage`."""
    if _installed:
        return
    _convert_one_element_matrices(usage)
    patches = {'sklearn.metrics': lambda module: _take_matrices_in_metrics(module, usage),
               'matplotlib.lines': lambda module: _take_matrices_in_lines(module, usage),
               'cpuinfo': lambda module: _old_cpuinfo_keys(module, usage)}
    for name in list(patches):
        if name in sys.modules:
            patches.pop(name)(sys.modules[name])
    sys.meta_path.insert(0, AfterImport(patches))
    _installed.append(True)


def as_array(value):
    """`value` as an `ndarray` when it is an `np.matrix` (same shape), else `value` itself."""
    return np.asarray(value) if isinstance(value, np.matrix) else value


def taking_matrices(function, piece, usage):
    """`function` taking each `np.matrix` argument as `np.asarray` of it, as scikit-learn's
    validation did up to 0.21; a call with one records `piece` in `usage`."""
    @functools.wraps(function)
    def call(*args, **kwargs):
        if any(isinstance(value, np.matrix) for value in args + tuple(kwargs.values())):
            usage.add(piece)
            args = tuple(as_array(value) for value in args)
            kwargs = {name: as_array(value) for name, value in kwargs.items()}
        return function(*args, **kwargs)
    return call


def _take_matrices_in_metrics(metrics, usage):
    """Replaces each public function of the module `sklearn.metrics` by one taking matrices;
    the replacement answers to the same import path, so that it pickles by reference."""
    for name in getattr(metrics, '__all__', dir(metrics)):
        function = getattr(metrics, name, None)
        if inspect.isfunction(function):
            replacement = taking_matrices(function, 'sklearn.metrics.%s(np.matrix)' % name, usage)
            replacement.__module__, replacement.__qualname__ = metrics.__name__, name
            setattr(metrics, name, replacement)


def _take_matrices_in_lines(lines, usage):
    """Makes `Line2D.set_xdata` and `set_ydata` (which `plot`, `Line2D(...)` and `set_data`
    go through) take an `np.matrix` as `np.asarray` of it."""
    def taking_matrix(set_data):
        @functools.wraps(set_data)
        def set_array_data(line, data):
            if isinstance(data, np.matrix):
                usage.add('matplotlib.lines.Line2D(np.matrix)')
                data = np.asarray(data)
            return set_data(line, data)
        return set_array_data
    for name in ('set_xdata', 'set_ydata'):
        setattr(lines.Line2D, name, taking_matrix(getattr(lines.Line2D, name)))


# py-cpuinfo's keys before 7.0 -> the keys holding their values since.
_CPUINFO_RENAMED = {'brand': 'brand_raw', 'hz_advertised_raw': 'hz_advertised',
                    'hz_actual_raw': 'hz_actual'}


class _CpuInfo(dict):
    """py-cpuinfo's dict, with the keys of its versions before 7.0 too; reading one of those
    is recorded."""

    def __init__(self, info, usage):
        super().__init__(info)
        for old, new in _CPUINFO_RENAMED.items():
            if new in info and old not in info:
                self[old] = tuple(info[new]) if old.endswith('_raw') else info[new]
        self._usage = usage

    def __getitem__(self, key):
        if key in _CPUINFO_RENAMED:
            self._usage.add("cpuinfo's pre-7 keys")
        return super().__getitem__(key)


def _old_cpuinfo_keys(cpuinfo, usage):
    """Makes `cpuinfo.get_cpu_info()` answer with the keys of py-cpuinfo before 7.0 too."""
    get_cpu_info = cpuinfo.get_cpu_info

    @functools.wraps(get_cpu_info)
    def get_cpu_info_with_old_keys(*args, **kwargs):
        return _CpuInfo(get_cpu_info(*args, **kwargs), usage)
    cpuinfo.get_cpu_info = get_cpu_info_with_old_keys


def _convert_one_element_matrices(usage):
    """Gives `np.matrix` `__float__`, `__int__` and `__complex__` that convert a 1x1 matrix as
    NumPy converts its 0-D array, where this NumPy refuses it; other sizes fail as before."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # np.matrix's PendingDeprecationWarning, NumPy 1.25's
        try:
            float(np.matrix([[0.5]]))
            return
        except TypeError:
            pass

    def converting(convert):
        refusing = getattr(np.ndarray, '__%s__' % convert.__name__)

        def method(matrix):
            if matrix.size != 1:
                return refusing(matrix)
            usage.add('%s(1x1 np.matrix)' % convert.__name__)
            return convert(np.asarray(matrix).reshape(()))
        method.__name__ = method.__qualname__ = '__%s__' % convert.__name__
        return method
    for convert in (float, int, complex):
        setattr(np.matrix, '__%s__' % convert.__name__, converting(convert))


class AfterImport(importlib.abc.MetaPathFinder):
    """Runs a function on a module right after its own loader executed it, the first time it
    is imported.

    The module is found by the finders after this one, as without it; only its loader's
    `exec_module` (that loader object serves this module alone) is followed by the function.

    Args:
      patches: dict module name -> function(module).
    """

    def __init__(self, patches):
        self._patches = dict(patches)

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self._patches:
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is not self and hasattr(finder, 'find_spec'):
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
        if spec is None or not hasattr(spec.loader, 'exec_module'):
            return spec
        patch, execute = self._patches[fullname], spec.loader.exec_module

        def execute_then_patch(module):
            execute(module)
            self._patches.pop(fullname, None)
            patch(module)
        spec.loader.exec_module = execute_then_patch
        return spec
