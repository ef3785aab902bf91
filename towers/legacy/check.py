"""`towers-legacy --check script.py`: which TF1-era names a script uses and whether the runner
provides them, without running the script.

    towers-legacy --check train_image_classifier.py

The script and the local modules it imports, never an installed package, are parsed with `ast`
(`towers.legacy.program`). The names they reach through TensorFlow (`tf.x.y` after `import
tensorflow as tf` or `import tensorflow.compat.v1 as tf`, `from tensorflow... import`, aliases
such as `slim = tf.contrib.slim`), NumPy's removed names (`np.int`), `scipy.misc`, and Python
2's modules and builtins are looked up in what the runner gives a script (the shim is
installed; nothing of the script runs), so the report and the runner cannot disagree. One
table: each name, its uses, where it is first used, and what provides it, or why it is not
provided and what replaces it. Exit status 0 when everything is provided, `EXIT_ERROR`
otherwise.

A name is provided when the runner has an object for it that works when used. One that
exists but fails when called is not: the runner marks a stub of its own with the attribute
`MISSING` ('__towers_legacy_missing__', its value why). (tf-keras' own
`model_to_estimator`, which raises NotImplementedError, is replaced by the runner's.)
"""
import collections
import importlib
import importlib.util
import inspect
import os
import sys
import types

import numpy as np

from towers import bars
from towers.errors import EXIT_ERROR
from towers.legacy import numpy_aliases
from towers.legacy.modules import LegacyError
from towers.legacy.program import TOSTRING, canonical, read_program

_SHOWN = (('tensorflow.python', 'tensorflow.python'), ('tensorflow.core', 'tensorflow.core'),
          ('tensorflow.examples', 'tensorflow.examples'), ('tensorflow', 'tf'),
          ('numpy', 'np'))
PY2 = 'Python 2; towers-legacy runs Python 3 programs only'
# Why the names that no runner can give back are not provided.
_NEVER = {TOSTRING: 'NumPy 2 removed ndarray.tostring, a method of a C type that cannot be '
                    'added back; use tobytes()'}
_PROVIDERS = (('towers', 'towers-legacy'), ('tensorflow', 'TensorFlow'), ('tf_slim', 'tf-slim'),
              ('tf_keras', 'tf-keras'), ('absl', 'absl'), ('scipy', 'SciPy'),
              ('numpy', 'NumPy'), ('PIL', 'Pillow'))

MISSING = '__towers_legacy_missing__'
# What other packages give the runner that exists but raises when called, by where it is
# defined ('module.qualified_name') -> why. An entry goes when the runner provides the name
# with an object of its own (then it is another object) or makes this one work.
Row = collections.namedtuple('Row', ['name', 'uses', 'first', 'provider', 'missing'])
Row.__doc__ = """One line of the report: a name, how often and first where it is used, and
what provides it (`provider`) or why it is not provided (`missing`)."""


def shown(module, attributes):
    """How the report writes a name: 'tf.contrib.slim.arg_scope', 'np.int'; `module` may be
    the name of a module behind one the script names ('tensorflow._api.v2.compat.v1.train')."""
    dotted = '.'.join((canonical(module),) + tuple(attributes))
    for prefix, short in _SHOWN:
        if dotted == prefix or dotted.startswith(prefix + '.'):
            return short + dotted[len(prefix):]
    return dotted


def _provider(found, holder):
    """Who provides `found`, what the runner gives a script for a name, in words; a plain
    value (a number, a string) is provided by whoever provides `holder`, the module holding
    it."""
    if isinstance(found, types.ModuleType):
        origin = found.__name__ if hasattr(found, '__file__') else 'towers'
    else:
        origin = getattr(found, '__module__', None) or type(found).__module__
    if origin == 'builtins' and holder is not None:
        return _provider(holder, None)
    return next((label for prefix, label in _PROVIDERS if origin.startswith(prefix)),
                'Python')


def _attribute(module, dotted, attribute):
    """`module.attribute` as Python's import system gets it: a submodule `dotted` not yet
    imported is imported; the runner's answer for a name it lacks stands."""
    try:
        return getattr(module, attribute)
    except LegacyError:
        raise
    except AttributeError:
        if not hasattr(module, '__path__'):
            raise
        if sys.modules.get(dotted.rpartition('.')[0]) is not module:
            # `module` is reached through another name (tf.contrib.framework.nest is
            # TensorFlow's nest): its submodules are below its own name, and importing the
            # script's path would make the runner's stub of it.
            dotted = module.__name__ + '.' + attribute
        return importlib.import_module(dotted)


def look_up(use):
    """What the runner gives a script for `use` (a `Use` of a checked module).

    Returns:
      (name, provider, missing): the name as the report writes it, cut after the first
      attribute that is not a module ('tf.train.Saver') or at the first one missing, or at
      one that fails when called (`fails_when_called`; also an attribute of a class,
      'tf.DeviceSpec.merge_from'); who provides it, or None; why it is not provided, or None.
      None for a name not checked: a NumPy name NumPy has, a SciPy name outside `scipy.misc`.
    """
    module, attributes = use.module, use.attributes
    dotted = '.'.join((module,) + attributes)
    if module == 'numpy':
        return _look_up_numpy(attributes) if attributes else None
    if module.split('.')[0] == 'scipy' and not dotted.startswith('scipy.misc'):
        return None
    reached, holder = (), None
    try:
        found = importlib.import_module(module)
        for attribute in attributes:
            if not isinstance(found, types.ModuleType):
                break
            reached += (attribute,)
            holder, found = found, _attribute(found, '.'.join((module,) + reached), attribute)
    except (AttributeError, ImportError, LegacyError) as err:
        return (shown(module, reached), None,
                str(err).split(' is not available: ')[-1].split('\n')[0])
    inner, rest = found, attributes[len(reached):]
    for depth in range(len(rest) + 1):
        why = fails_when_called(inner)
        if why:
            return shown(module, reached + rest[:depth]), None, why
        inner = inspect.getattr_static(inner, rest[depth], None) if depth < len(rest) else None
        if inner is None:
            break
    return shown(module, reached), _provider(found, holder), None


def fails_when_called(found):
    """Why `found`, an object the runner gives a script, fails when it is called, or None: its
    own `MISSING` attribute."""
    if isinstance(found, (staticmethod, classmethod)):
        found = found.__func__
    return inspect.getattr_static(found, MISSING, None)


def _look_up_numpy(attributes):
    """`look_up` of `np.<name>` (`np.lib.<name>`, when `attributes` start with 'lib'): None
    when NumPy has it."""
    name = attributes[0]
    if name == 'lib' and len(attributes) > 1:
        if numpy_aliases.lib_alias(attributes[1]) is not None:
            return 'np.lib.' + attributes[1], 'towers-legacy (NumPy alias)', None
        if not hasattr(np.lib, attributes[1]):
            return 'np.lib.' + attributes[1], None, "module 'numpy.lib' has no attribute %r" % (
                attributes[1])
        return None
    if name in numpy_aliases.ALIASES and name not in vars(np):
        return 'np.' + name, 'towers-legacy (NumPy alias)', None
    try:
        getattr(np, name)
    except AttributeError as err:
        if _submodule_exists('numpy.' + name):
            return None
        return 'np.' + name, None, str(err).split('\n')[0]
    return None


def _submodule_exists(name):
    """Whether the module `name` is there to import (found, not imported)."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def report(script, roots):
    """The rows of the report on `script` (see `read_program` for `roots`), names not
    provided first, and the files read; the progress of the reading and the look-ups on
    stderr (`towers.bars`)."""
    uses, files = read_program(script, roots)
    rows, answers = {}, {}
    for use in bars.bar(uses, 'looking up the names', 'uses'):
        key = use[:2]
        if key not in answers:
            answers[key] = (look_up(use) if use.module else
                            (use.attributes[0], None, _NEVER.get(use.attributes[0], PY2)))
        if answers[key] is None:
            continue
        name, provider, missing = answers[key]
        row = rows.get(name) or Row(name, 0, use.where, provider, missing)
        rows[name] = row._replace(uses=row.uses + 1)
    return sorted(rows.values(), key=lambda row: (row.provider is not None, row.name)), files


def main(script, module=None):
    """Prints the report on `script` (a path; the file of `module`, when the program is run as
    `-m module`, whose absolute imports start from the working directory) to stdout.

    Returns:
      0 when the runner provides every name, else `EXIT_ERROR` (the last line, `error: ...`,
      names those it lacks).
    """
    roots = [os.getcwd() if module else os.path.dirname(os.path.abspath(script))] + [
        os.path.abspath(path) for path in os.environ.get('PYTHONPATH', '').split(os.pathsep)
        if path]
    rows, files = report(script, roots)
    print('towers-legacy --check %s: %d file%s read, %d names' % (
        script, len(files), '' if len(files) == 1 else 's', len(rows)))
    if rows:
        name_width = max(len(row.name) for row in rows)
        where_width = max(len(row.first) for row in rows)
        print('%-*s  %4s  %-*s  %s' % (name_width, 'name', 'uses', where_width, 'first use',
                                       'provided by'))
        for row in rows:
            print('%-*s  %4d  %-*s  %s' % (name_width, row.name, row.uses, where_width,
                                           row.first, row.provider or 'NOT PROVIDED: '
                                           + row.missing))
    missing = [row.name for row in rows if row.provider is None]
    if missing:
        print('error: %d of %d names are not provided: %s' % (len(missing), len(rows),
                                                              ', '.join(missing)))
        return EXIT_ERROR
    print('towers-legacy --check: the runner provides all %d names' % len(rows))
    return 0
