"""`towers-legacy --check script.py`: which TF1-era names a script uses and whether the runner
provides them, without running the script.

    towers-legacy --check train_image_classifier.py

The script and the local modules it imports (found as Python finds them: in the script's
folder, then in those of `PYTHONPATH`) are parsed with `ast`. An installed package is never
read, also where `PYTHONPATH` names its folder: one in a site-packages folder, in a folder of
the interpreter's `sys.path`, or beside its distribution's '*.dist-info' (as `pip install
--target` leaves it). The names they reach through TensorFlow (`tf.x.y` after `import
tensorflow as tf` or `import tensorflow.compat.v1 as tf`, `from tensorflow... import`, aliases
such as `slim = tf.contrib.slim`), NumPy's removed names (`np.int`), `scipy.misc`, and Python
2's modules and builtins are looked up in what the runner gives a script (the shim is
installed; nothing of the script runs), so the report and the runner cannot disagree. One
table: each name, its uses, where it is first used, and what provides it, or why it is not
provided and what replaces it. Exit status 0 when everything is provided, `EXIT_ERROR`
otherwise.

A name is provided when the runner has an object for it that works when used. One that
exists but fails when called is not: the runner marks a stub of its own with the attribute
`MISSING` ('__towers_legacy_missing__', its value why), and `FAILS_WHEN_CALLED` names the
objects of other packages known to raise (`tf.keras.estimator.model_to_estimator`: tf-keras
raises NotImplementedError).
"""
import ast
import collections
import functools
import glob
import importlib
import importlib.util
import inspect
import os
import site
import sys
import sysconfig
import types

import numpy as np

from towers.errors import EXIT_ERROR
from towers.legacy import numpy_aliases
from towers.legacy.modules import LegacyError

_ROOTS = ('tensorflow', 'numpy', 'scipy')
_SHOWN = (('tensorflow.python', 'tensorflow.python'), ('tensorflow.core', 'tensorflow.core'),
          ('tensorflow.examples', 'tensorflow.examples'), ('tensorflow', 'tf'),
          ('numpy', 'np'))
_PY2_MODULES = {'cPickle', 'cStringIO', 'StringIO', 'urllib2', 'urlparse', 'Queue',
                'ConfigParser', 'httplib', '__builtin__', 'commands', 'Tkinter', 'thread',
                'copy_reg', 'cookielib', 'HTMLParser'}
_PY2_BUILTINS = {'xrange', 'unicode', 'raw_input', 'basestring', 'unichr', 'long', 'execfile',
                 'reduce', 'file', 'cmp'}
PY2 = 'Python 2; towers-legacy runs Python 3 programs only'
TOSTRING = '.tostring()'
# Why the names that no runner can give back are not provided.
_NEVER = {TOSTRING: 'NumPy 2 removed ndarray.tostring, a method of a C type that cannot be '
                    'added back; use tobytes()'}
_PROVIDERS = (('towers', 'towers-legacy'), ('tensorflow', 'TensorFlow'), ('tf_slim', 'tf-slim'),
              ('tf_keras', 'tf-keras'), ('absl', 'absl'), ('scipy', 'SciPy'),
              ('numpy', 'NumPy'), ('PIL', 'Pillow'))

# TensorFlow's modules as a script names them: the runner's `tf` is `tf.compat.v1`, whose
# modules are 'tensorflow._api.v2.compat.v1...', and its `tf.keras` is tf-keras's.
_SCRIPT_NAMES = (('tensorflow.compat.v1', 'tensorflow'),
                 ('tensorflow._api.v2.compat.v1', 'tensorflow'),
                 ('tf_keras.api._v1.keras', 'tensorflow.keras'),
                 ('tf_keras.api._v2.keras', 'tensorflow.keras'),
                 ('keras._tf_keras.keras', 'tensorflow.keras'))
MISSING = '__towers_legacy_missing__'
# What other packages give the runner that exists but raises when called, by where it is
# defined ('module.qualified_name') -> why. An entry goes when the runner provides the name
# with an object of its own (then it is another object) or makes this one work.
FAILS_WHEN_CALLED = {
    'tf_keras.src.estimator.model_to_estimator':
        'tf-keras raises NotImplementedError when it is called: it builds on the package '
        'tensorflow-estimator, which TensorFlow 2.16 stopped shipping',
}
_INSTALLED_FOLDERS = ('site-packages', 'dist-packages')

Use = collections.namedtuple('Use', ['module', 'attributes', 'where'])
Use.__doc__ = """A name a file uses: `attributes` (a tuple) read in turn from the module
`module` (an import name; None for a name no runner can provide: a Python 2 name, a call of
`TOSTRING`; then `attributes` is its one name), at `where` ('file:line')."""

Row = collections.namedtuple('Row', ['name', 'uses', 'first', 'provider', 'missing'])
Row.__doc__ = """One line of the report: a name, how often and first where it is used, and
what provides it (`provider`) or why it is not provided (`missing`)."""


def _canonical(module):
    """'tensorflow.compat.v1[.x]' -> 'tensorflow[.x]', as the runner makes them one module;
    also the names of the modules behind them ('tensorflow._api.v2.compat.v1.train' ->
    'tensorflow.train', 'tf_keras.api._v1.keras.layers' -> 'tensorflow.keras.layers')."""
    for prefix, name in _SCRIPT_NAMES:
        if module == prefix or module.startswith(prefix + '.'):
            return name + module[len(prefix):]
    return module


def _chain(node):
    """['a', 'b', 'c'] for the expression a.b.c, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id] + parts[::-1] if isinstance(node, ast.Name) else None


class _FileReader(ast.NodeVisitor):
    """Collects the uses of checked names in one parsed file (`uses`) and the imports it makes
    (`imports`: (module or None, level, names imported from it))."""

    def __init__(self, shown):
        self.uses = []
        self.imports = []
        self._shown = shown
        self._aliases = {}          # local name -> (module, attributes)
        self._inner = set()

    def _use(self, module, attributes, node):
        if module is None or module.split('.')[0] in _ROOTS:
            self.uses.append(Use(module, tuple(attributes),
                                 '%s:%d' % (self._shown, node.lineno)))

    def visit_Module(self, node):
        self.generic_visit(node)
        for name in _python2_builtins(node):
            self._use(None, (name.id,), name)

    def visit_Import(self, node):
        for alias in node.names:
            self.imports.append((alias.name, 0, ()))
            module = _canonical(alias.name)
            self._use(module, (), node)
            if alias.asname:
                self._aliases[alias.asname] = (module, ())
            else:
                self._aliases[alias.name.split('.')[0]] = (alias.name.split('.')[0], ())
            if alias.name in _PY2_MODULES and node.col_offset == 0:
                self._use(None, ('import ' + alias.name,), node)

    def visit_ImportFrom(self, node):
        self.imports.append((node.module, node.level, tuple(a.name for a in node.names)))
        if node.level or not node.module:
            return
        module = _canonical(node.module)
        for alias in node.names:
            if alias.name == '*':
                self._use(module, (), node)
                continue
            self._aliases[alias.asname or alias.name] = (module, (alias.name,))
            self._use(module, (alias.name,), node)

    def visit_Assign(self, node):
        chain = _chain(node.value)
        if chain and chain[0] in self._aliases:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    module, attributes = self._aliases[chain[0]]
                    self._aliases[target.id] = (module, attributes + tuple(chain[1:]))
        self.generic_visit(node)

    def visit_Attribute(self, node):
        if node.attr == TOSTRING[1:-2]:
            self._use(None, (TOSTRING,), node)
        chain = _chain(node)
        if node not in self._inner and chain and chain[0] in self._aliases:
            module, attributes = self._aliases[chain[0]]
            self._use(module, attributes + tuple(chain[1:]), node)
            inner = node.value
            while isinstance(inner, ast.Attribute):
                self._inner.add(inner)
                inner = inner.value
        self.generic_visit(node)


def _python2_builtins(tree):
    """The name nodes of Python 2's builtins (`xrange`, ...) in `tree` that the file does not
    define itself."""
    nodes = list(ast.walk(tree))
    bound = {node.id for node in nodes if isinstance(node, ast.Name)
             and isinstance(node.ctx, ast.Store)}
    bound |= {node.name for node in nodes if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    bound |= {node.arg for node in nodes if isinstance(node, ast.arg)}
    bound |= {(alias.asname or alias.name).split('.')[0] for node in nodes
              if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    return [node for node in nodes if isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load) and node.id in _PY2_BUILTINS
            and node.id not in bound]


def _local_files(module, level, names, path, roots):
    """The local files that an import made in file `path` runs: each package's `__init__.py`
    on the way, the module, and for a from-import its submodules among `names`.

    Args:
      module, level, names: the import (`from ..a.b import c, d`: 'a.b', 2, ('c', 'd')).
      path: the importing file.
      roots: folders for absolute imports, first first.
    """
    if level:
        base = os.path.dirname(path)
        for _ in range(level - 1):
            base = os.path.dirname(base)
        bases = [base]
    elif module:
        bases = roots
    else:
        return []
    parts = module.split('.') if module else []
    for base in bases:
        target = os.path.join(base, *parts)
        if os.path.isdir(target) or os.path.isfile(target + '.py'):
            if not level and _installed_module(base, parts[0], own_folder=roots[0]):
                return []
            files = [os.path.join(base, *parts[:i], '__init__.py')
                     for i in range(1, len(parts) + 1)]
            files.append(target + '.py')
            for name in names:
                files += [os.path.join(target, name + '.py'),
                          os.path.join(target, name, '__init__.py')]
            return [f for f in files if os.path.isfile(f)]
    return []


def installed(path):
    """Whether the file or folder `path` belongs to Python or to a package installed into it:
    it lies in a 'site-packages' or 'dist-packages' folder, or in the interpreter's standard
    library or site folders."""
    real = os.path.realpath(path)
    return (any(part in _INSTALLED_FOLDERS for part in real.split(os.sep))
            or any(real.startswith(folder + os.sep) for folder in _python_folders()))


@functools.lru_cache(maxsize=None)
def _python_folders():
    """The real paths of the interpreter's standard library and site folders."""
    paths = sysconfig.get_paths()
    folders = [paths.get(key) for key in ('stdlib', 'platstdlib', 'purelib', 'platlib')]
    folders += site.getsitepackages() + [site.getusersitepackages()]
    return tuple({os.path.realpath(folder) for folder in folders if folder})


def _installed_module(folder, top, own_folder):
    """Whether the module or package `top` that an import finds in `folder` is an installed one,
    not the user's: it is `installed`, or `folder` is on the interpreter's `sys.path` beyond
    `PYTHONPATH` (where installers and .pth files put packages) and is not `own_folder` (the
    script's), or a distribution installed in `folder` (as `pip install --target` makes)
    lists `top`."""
    real = os.path.realpath(folder)
    pythonpath = {os.path.realpath(path)
                  for path in os.environ.get('PYTHONPATH', '').split(os.pathsep) if path}
    on_sys_path = {os.path.realpath(path) for path in sys.path[1:] if path} - pythonpath
    return (installed(os.path.join(folder, top))
            or (real in on_sys_path and real != os.path.realpath(own_folder))
            or top in _distributed_names(real))


@functools.lru_cache(maxsize=None)
def _distributed_names(folder):
    """The top-level modules and packages that the distributions installed in `folder` list:
    a '*.dist-info' its RECORD, an installed '*.egg-info' its installed-files.txt (the
    '*.egg-info' of a source tree, from a build or an editable install, lists the user's own
    modules as its sources, and is not one)."""
    def listed(pattern, relative_to):
        names = set()
        for listing in glob.glob(os.path.join(glob.escape(folder), pattern)):
            with open(listing, encoding='utf-8', errors='replace') as lines:
                for line in lines:
                    entry = line.split(',')[0].strip()
                    if entry:
                        path = os.path.relpath(os.path.join(relative_to(listing), entry), folder)
                        if not path.startswith(os.pardir):
                            names.add(path.split(os.sep)[0].split('.')[0])
        return names
    return frozenset(listed(os.path.join('*.dist-info', 'RECORD'), lambda listing: folder)
                     | listed(os.path.join('*.egg-info', 'installed-files.txt'),
                              os.path.dirname))


def read_program(script, roots):
    """The uses of checked names in `script` and the local modules it imports, transitively.

    Args:
      script: the script's path.
      roots: folders absolute imports are looked up in, first first (the script's own first).
        A module an import finds installed (`_installed_module`) is not read.

    Returns:
      (list of `Use`, list of the files read). A file that does not parse as Python 3 is a
      Python 2 use, 'not Python 3 (SyntaxError)', at the line it fails on.
    """
    uses, done, queue = [], [], [os.path.abspath(script)]
    while queue:
        path = queue.pop(0)
        if path in done:
            continue
        done.append(path)
        relative = os.path.relpath(path)
        try:
            with open(path, encoding='utf-8') as f:
                tree = ast.parse(f.read(), path)
        except (SyntaxError, UnicodeDecodeError) as err:
            uses.append(Use(None, ('not Python 3 (%s)' % err.__class__.__name__,),
                            '%s:%s' % (relative, getattr(err, 'lineno', 1))))
            continue
        reader = _FileReader(relative)
        reader.visit(tree)
        uses += reader.uses
        for module, level, names in reader.imports:
            queue += _local_files(module, level, names, path, roots)
    return uses, done


def shown(module, attributes):
    """How the report writes a name: 'tf.contrib.slim.arg_scope', 'np.int'; `module` may be
    the name of a module behind one the script names ('tensorflow._api.v2.compat.v1.train')."""
    dotted = '.'.join((_canonical(module),) + tuple(attributes))
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
        return _look_up_numpy(attributes[0]) if attributes else None
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
    own `MISSING` attribute, or its entry in `FAILS_WHEN_CALLED`."""
    if isinstance(found, (staticmethod, classmethod)):
        found = found.__func__
    why = inspect.getattr_static(found, MISSING, None)
    # Only a function or class is read further: reading a name of another object may run its
    # code (a module loads, `tf.flags.FLAGS` parses the command line).
    if why or not (inspect.isfunction(found) or inspect.isclass(found)):
        return why
    return FAILS_WHEN_CALLED.get('%s.%s' % (found.__module__, found.__qualname__))


def _look_up_numpy(name):
    """`look_up` of `np.<name>`: None when NumPy has it."""
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
    provided first, and the files read."""
    uses, files = read_program(script, roots)
    rows, answers = {}, {}
    for use in uses:
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


def main(script):
    """Prints the report on `script` (a path) to stdout.

    Returns:
      0 when the runner provides every name, else `EXIT_ERROR` (the last line, `error: ...`,
      names those it lacks).
    """
    roots = [os.path.dirname(os.path.abspath(script))] + [
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
