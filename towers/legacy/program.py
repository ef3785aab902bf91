"""Reading a TF1 program without running it: the names it reaches through TensorFlow, NumPy,
`scipy.misc` and Python 2 (`Use`s), in the script and the local modules it imports, never in an
installed package (`towers-legacy --check`, `towers.legacy.check`, looks them up).

The script and the local modules it imports are found as Python finds them: in the script's
folder, then in those of `PYTHONPATH`. An installed package is never read, also where
`PYTHONPATH` names its folder: one in a site-packages folder, in a folder of the interpreter's
`sys.path`, or beside its distribution's '*.dist-info' (as `pip install --target` leaves it).
"""
import ast
import collections
import functools
import glob
import os
import site
import sys
import sysconfig

from towers import bars

_ROOTS = ('tensorflow', 'numpy', 'scipy', 'horovod')

_PY2_MODULES = {'cPickle', 'cStringIO', 'StringIO', 'urllib2', 'urlparse', 'Queue',
                'ConfigParser', 'httplib', '__builtin__', 'commands', 'Tkinter', 'thread',
                'copy_reg', 'cookielib', 'HTMLParser'}

_PY2_BUILTINS = {'xrange', 'unicode', 'raw_input', 'basestring', 'unichr', 'long', 'execfile',
                 'reduce', 'file', 'cmp'}

TOSTRING = '.tostring()'

# TensorFlow's modules as a script names them: the runner's `tf` is `tf.compat.v1`, whose
# modules are 'tensorflow._api.v2.compat.v1...', and its `tf.keras` is tf-keras's.
_SCRIPT_NAMES = (('tensorflow.compat.v1', 'tensorflow'),
                 ('tensorflow._api.v2.compat.v1', 'tensorflow'),
                 ('tf_keras.api._v1.keras', 'tensorflow.keras'),
                 ('tf_keras.api._v2.keras', 'tensorflow.keras'),
                 ('keras._tf_keras.keras', 'tensorflow.keras'))

_INSTALLED_FOLDERS = ('site-packages', 'dist-packages')

Use = collections.namedtuple('Use', ['module', 'attributes', 'where'])
Use.__doc__ = """A name a file uses: `attributes` (a tuple) read in turn from the module
`module` (an import name; None for a name no runner can provide: a Python 2 name, a call of
`TOSTRING`; then `attributes` is its one name), at `where` ('file:line')."""


def canonical(module):
    """'tensorflow.compat.v1[.x]' -> 'tensorflow[.x]', as the runner makes them one module;
    also the names of the modules behind them ('tensorflow._api.v2.compat.v1.train' ->
    'tensorflow.train', 'tf_keras.api._v1.keras.layers' -> 'tensorflow.keras.layers')."""
    for prefix, name in _SCRIPT_NAMES:
        if module == prefix or module.startswith(prefix + '.'):
            return name + module[len(prefix):]
    return module


def _python_of_test(test):
    """2 when `test` (an `if`'s condition) holds only on Python 2 (`six.PY2`, `PY2`,
    `sys.version_info[0] == 2`, `sys.version_info < (3,)`, `not six.PY3`), 3 when only on
    Python 3 (the converse forms), else None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _python_of_test(test.operand)
        return {2: 3, 3: 2}.get(inner)
    chain = _chain(test)
    if chain and chain[-1] in ('PY2', 'PY3'):
        return int(chain[-1][-1])
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(left, ast.Subscript):
        left = left.value if _constant(left.slice) == 0 else None
    elif isinstance(left, ast.Attribute) and left.attr == 'major':
        left = left.value
    if _chain(left) not in (['sys', 'version_info'], ['version_info']):
        return None
    major = _constant(right)
    major = major[0] if isinstance(major, tuple) and major else major
    if not isinstance(major, int):
        return None
    holds_on = {2: _compares(op, 2, major), 3: _compares(op, 3, major)}
    if holds_on[2] != holds_on[3]:
        return 2 if holds_on[2] else 3
    return None


def _constant(node):
    """The value of a literal number or tuple of numbers, else None."""
    try:
        return ast.literal_eval(node)
    except ValueError:
        return None


def _compares(op, version, major):
    """Whether `version_info OP (major,)` holds for a Python whose major version is `version`
    (`(version, minor, ...)` against a one-number tuple or a number compares by the first)."""
    below = {ast.Lt: version < major, ast.LtE: version <= major, ast.Gt: version > major,
             ast.GtE: version >= major, ast.Eq: version == major, ast.NotEq: version != major}
    return below.get(type(op), False)


def _python2_only(tree):
    """The nodes of `tree` that run only on Python 2: the body of `if six.PY2:` (`if PY2:`,
    `if sys.version_info[0] == 2:`, ...) and the `else` of the converse tests; and the body of
    a `try` whose handler catches `NameError` (`try: raw_input() except NameError: input()`),
    which fails over to Python 3's way."""
    skipped = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_catches_name_error(h) for h in node.handlers):
            for part in node.body:
                skipped.update(ast.walk(part))
        if isinstance(node, (ast.If, ast.IfExp)):
            python = _python_of_test(node.test)
            branch = node.body if python == 2 else node.orelse if python == 3 else []
            for part in branch if isinstance(branch, list) else [branch]:
                skipped.update(ast.walk(part))
    return skipped


def _catches_name_error(handler):
    """Whether an `except` clause names `NameError` (alone or in a tuple): a broader clause
    is not read as Python 2's fallback, so the names of its `try` stay uses."""
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(kind is not None and _chain(kind) == ['NameError'] for kind in kinds)


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
        self._python2_only = set()

    def visit(self, node):
        if node not in self._python2_only:
            super().visit(node)

    def _use(self, module, attributes, node):
        if module is None or module.split('.')[0] in _ROOTS:
            self.uses.append(Use(module, tuple(attributes),
                                 '%s:%d' % (self._shown, node.lineno)))

    def visit_Module(self, node):
        self._python2_only = _python2_only(node)
        self.generic_visit(node)
        for name in _python2_builtins(node, self._python2_only):
            self._use(None, (name.id,), name)

    def visit_Import(self, node):
        for alias in node.names:
            self.imports.append((alias.name, 0, ()))
            module = canonical(alias.name)
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
        module = canonical(node.module)
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


def _python2_builtins(tree, python2_only):
    """The name nodes of Python 2's builtins (`xrange`, ...) in `tree`, outside the nodes
    `python2_only`, that the file does not define itself."""
    nodes = list(ast.walk(tree))
    bound = {node.id for node in nodes if isinstance(node, ast.Name)
             and isinstance(node.ctx, ast.Store)}
    bound |= {node.name for node in nodes if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    bound |= {node.arg for node in nodes if isinstance(node, ast.arg)}
    bound |= {(alias.asname or alias.name).split('.')[0] for node in nodes
              if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names}
    return [node for node in nodes if isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load) and node.id in _PY2_BUILTINS
            and node.id not in bound and node not in python2_only]


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
      Python 2 use, 'not Python 3 (SyntaxError)', at the line it fails on. The files read so
      far show on stderr (`towers.bars`).
    """
    uses, done, queue = [], [], [os.path.abspath(script)]
    with bars.bar(None, 'reading the program', 'files') as progress:
        while queue:
            path = queue.pop(0)
            if path in done:
                continue
            done.append(path)
            progress.update()
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
