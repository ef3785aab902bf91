"""`towers-legacy --check script.py`: which TF1-era names a script uses and whether the runner
provides them, without running the script.

    towers-legacy --check train_image_classifier.py

The script and the local modules it imports (found as Python finds them: in the script's
folder, then in those of `PYTHONPATH`) are parsed with `ast`. The names they reach through
TensorFlow (`tf.x.y` after `import tensorflow as tf` or `import tensorflow.compat.v1 as tf`,
`from tensorflow... import`, aliases such as `slim = tf.contrib.slim`), NumPy's removed names
(`np.int`), `scipy.misc`, and Python 2's modules and builtins are looked up in what the runner
gives a script (the shim is installed; nothing of the script runs), so the report and the
runner cannot disagree. One table: each name, its uses, where it is first used, and what
provides it, or why it is not provided and what replaces it. Exit status 0 when everything is
provided, `EXIT_ERROR` otherwise.
"""
import ast
import collections
import importlib
import os
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

Use = collections.namedtuple('Use', ['module', 'attributes', 'where'])
Use.__doc__ = """A name a file uses: `attributes` (a tuple) read in turn from the module
`module` (an import name; None for a name no runner can provide: a Python 2 name, a call of
`TOSTRING`; then `attributes` is its one name), at `where` ('file:line')."""

Row = collections.namedtuple('Row', ['name', 'uses', 'first', 'provider', 'missing'])
Row.__doc__ = """One line of the report: a name, how often and first where it is used, and
what provides it (`provider`) or why it is not provided (`missing`)."""


def _canonical(module):
    """'tensorflow.compat.v1[.x]' -> 'tensorflow[.x]', as the runner makes them one module."""
    if module == 'tensorflow.compat.v1' or module.startswith('tensorflow.compat.v1.'):
        return 'tensorflow' + module[len('tensorflow.compat.v1'):]
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
            files = [os.path.join(base, *parts[:i], '__init__.py')
                     for i in range(1, len(parts) + 1)]
            files.append(target + '.py')
            for name in names:
                files += [os.path.join(target, name + '.py'),
                          os.path.join(target, name, '__init__.py')]
            return [f for f in files if os.path.isfile(f)]
    return []


def read_program(script, roots):
    """The uses of checked names in `script` and the local modules it imports, transitively.

    Args:
      script: the script's path.
      roots: folders absolute imports are looked up in, first first (the script's own first).

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
        shown = os.path.relpath(path)
        try:
            with open(path, encoding='utf-8') as f:
                tree = ast.parse(f.read(), path)
        except (SyntaxError, UnicodeDecodeError) as err:
            uses.append(Use(None, ('not Python 3 (%s)' % err.__class__.__name__,),
                            '%s:%s' % (shown, getattr(err, 'lineno', 1))))
            continue
        reader = _FileReader(shown)
        reader.visit(tree)
        uses += reader.uses
        for module, level, names in reader.imports:
            queue += _local_files(module, level, names, path, roots)
    return uses, done


def _shown(module, attributes):
    """How the report writes a name: 'tf.contrib.slim.arg_scope', 'np.int'."""
    dotted = '.'.join((module,) + attributes)
    for prefix, shown in _SHOWN:
        if dotted == prefix or dotted.startswith(prefix + '.'):
            return shown + dotted[len(prefix):]
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
      attribute that is not a module ('tf.train.Saver') or at the first one missing; who
      provides it, or None; why it is not provided, or None. None for a name not checked: a
      NumPy name NumPy has, a SciPy name outside `scipy.misc`.
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
        return (_shown(module, reached), None,
                str(err).split(' is not available: ')[-1].split('\n')[0])
    return _shown(module, reached), _provider(found, holder), None


def _look_up_numpy(name):
    """`look_up` of `np.<name>`: None when NumPy has it."""
    if name in numpy_aliases.ALIASES and name not in vars(np):
        return 'np.' + name, 'towers-legacy (NumPy alias)', None
    try:
        getattr(np, name)
    except AttributeError as err:
        return 'np.' + name, None, str(err).split('\n')[0]
    return None


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
