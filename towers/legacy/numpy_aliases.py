"""NumPy's removed names, back while a TF1-era script runs under the legacy runner.

NumPy 1.24 removed its aliases of Python's builtins (`np.int`, `np.float`, `np.object`,
`np.str`, `np.complex`, `np.unicode`; `np.bool` and `np.long` are NumPy 2's own types again),
and NumPy 2.0 more names old code uses (`np.float_`, `np.NaN`, `np.cast`, `np.asscalar`, ...)
and the binary mode of `np.fromstring`; NumPy 2.0 also stopped re-exporting NumPy's array
functions from `numpy.lib` (`np.lib.pad`, which 2017 programs called). `install` makes each name NumPy lacks answer again
through NumPy's module `__getattr__` (which Python asks only for names the module does not
have, so NumPy's own names are untouched), recording each use as 'numpy.<name>', and lets
`np.fromstring(data, dtype)` read bytes as `np.frombuffer` does ('numpy.fromstring (binary)'),
and makes `np.lib.<name>` NumPy's own function of that name where `numpy.lib` lacks it
(`lib_alias`; recorded as 'numpy.lib.<name>').

Not provided: `ndarray.tostring()` (NumPy 2 removed it; `ndarray` is a C type whose methods
cannot be added back; the script must call `tobytes()`).
"""
import numpy as np


def _asfarray(a, dtype=np.float64):
    """`np.asfarray`: `a` as an array of a floating type (`dtype` when it is one)."""
    if not np.issubdtype(np.dtype(dtype), np.inexact):
        dtype = np.float64
    return np.asarray(a, dtype=dtype)


class _Cast:
    """`np.cast`: `np.cast[np.float32](x)` is `x` as an array of float32."""

    def __getitem__(self, scalar_type):
        return lambda x: np.asarray(x).astype(scalar_type)


# name -> what it was, for the names NumPy removed that TF1-era code uses.
ALIASES = {
    'int': int, 'float': float, 'bool': bool, 'object': object, 'str': str, 'long': int,
    'complex': complex, 'unicode': str,
    'float_': np.float64, 'complex_': np.complex128, 'cfloat': np.complex128,
    'longfloat': np.longdouble, 'unicode_': np.str_, 'string_': np.bytes_, 'bool8': np.bool_,
    'int0': np.intp, 'object0': np.object_,
    'NaN': np.nan, 'NAN': np.nan, 'Inf': np.inf, 'Infinity': np.inf, 'infty': np.inf,
    'PINF': np.inf, 'NINF': -np.inf,
    'alltrue': np.all, 'sometrue': np.any, 'product': np.prod, 'cumproduct': np.cumprod,
    'round_': np.round, 'asfarray': _asfarray, 'asscalar': lambda a: a.item(),
    'mat': np.asmatrix, 'cast': _Cast(),
}

_installed = []


def lib_alias(name):
    """What `np.lib.<name>` was in NumPy 1 where NumPy 2's `numpy.lib` lacks it: NumPy's own
    function `np.<name>` (NumPy 1's `numpy.lib` re-exported them), else None."""
    if name.startswith('_') or name in vars(np.lib):
        return None
    found = vars(np).get(name)
    return found if callable(found) and not isinstance(found, type) else None


def install(usage):
    """Gives `numpy` the `ALIASES` it lacks and binary `fromstring`, for the rest of the
    process (once), each use recorded in `usage` (a `Usage`)."""
    if _installed:
        return
    numpy_getattr = np.__getattr__
    numpy_fromstring = np.fromstring

    def getattr_with_aliases(name):
        if name in ALIASES:
            usage.add('numpy.' + name)
            return ALIASES[name]
        return numpy_getattr(name)

    def fromstring(string, dtype=float, count=-1, *, sep='', like=None):
        if sep == '' and not isinstance(string, str):
            usage.add('numpy.fromstring (binary)')
            return np.frombuffer(string, dtype, count).copy()
        return numpy_fromstring(string, dtype, count, sep=sep, like=like)

    lib_getattr = np.lib.__getattr__

    def lib_getattr_with_aliases(name):
        found = lib_alias(name)
        if found is not None:
            usage.add('numpy.lib.' + name)
            return found
        return lib_getattr(name)

    np.__getattr__ = getattr_with_aliases
    np.lib.__getattr__ = lib_getattr_with_aliases
    np.fromstring = fromstring
    _installed.append(True)

