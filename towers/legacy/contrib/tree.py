"""The module objects of the runner's `tf.contrib`: the pieces of `pieces.PIECES` and every
import path below them."""
import importlib

from towers.legacy.contrib.pieces import PACKAGES, PIECES, SUBMODULES, why_missing
from towers.legacy.modules import ProxyModule, StubModule

PACKAGE = 'tensorflow.contrib'


class Contrib:
    """`tf.contrib` and its pieces, as module objects by import name.

    Args:
      usage: the `Usage` that records each piece used.

    Attributes:
      root: the `tensorflow.contrib` module: its names are the pieces, each a module whose
        names are the piece's (none, for a piece not provided).
      modules: dict import name ('tensorflow.contrib', 'tensorflow.contrib.slim', ...) ->
        module, for `sys.modules`.
    """

    def __init__(self, usage):
        self._usage = usage
        self._pieces = {name: self._module(name) for name in PIECES}
        self.modules = {module.__name__: module for module in self._pieces.values()}
        self.root = ProxyModule(PACKAGE, 'tf.contrib', [self._pieces], usage, True, why_missing)
        self.root.__path__ = []
        self.modules[PACKAGE] = self.root

    def resolve(self, fullname):
        """The module to import as `fullname`, for any name below `tensorflow.contrib`: a
        piece, a real module at that path (`tensorflow.contrib.slim.nets` is `tf_slim.nets`,
        `tensorflow.contrib.layers.python.layers.utils` is `tf_slim.layers.utils`), or else a
        stub whose names are its piece's: importing never fails, using a name the runner
        lacks does.

        Returns:
          A module, or None for a name outside `tensorflow.contrib`.
        """
        if not fullname.startswith(PACKAGE + '.'):
            return None
        return self._module(fullname[len(PACKAGE) + 1:])

    def _module(self, path):
        """The module at `path` below tensorflow.contrib ('layers.python.layers')."""
        name, display = '%s.%s' % (PACKAGE, path), 'tf.contrib.' + path
        piece = path.split('.')[0]
        parent, _, last = path.rpartition('.')
        real = self._real_module(path, SUBMODULES.get(parent, {}).get(last))
        if real is not None:
            module = ProxyModule(name, display, [real], self._usage, False,
                                 lambda attr: why_missing(piece))
            if hasattr(real, '__path__'):
                module.__path__ = []
            return module
        children = {child: self._import(module_name)
                    for child, module_name in SUBMODULES.get(path, {}).items()}
        sources = [children] + (PIECES[piece].sources() if piece in PIECES else [])
        return StubModule(name, display, sources, self._usage, False,
                          lambda attr: why_missing(piece))

    def _real_module(self, path, named):
        """The real module at `path`: `named` (an import name from `SUBMODULES`, outside
        tensorflow.contrib), or the same path below the package of the longest prefix in
        `PACKAGES`; None if there is none."""
        if named and not named.startswith(PACKAGE + '.'):
            return importlib.import_module(named)
        prefixes = [prefix for prefix in PACKAGES if path.startswith(prefix + '.')]
        if not prefixes:
            return None
        prefix = max(prefixes, key=len)
        try:
            return importlib.import_module(PACKAGES[prefix] + path[len(prefix):])
        except ImportError:
            return None

    def _import(self, module_name):
        """The module `module_name`; one below tensorflow.contrib is this tree's."""
        if module_name.startswith(PACKAGE + '.'):
            return self._module(module_name[len(PACKAGE) + 1:])
        return importlib.import_module(module_name)
