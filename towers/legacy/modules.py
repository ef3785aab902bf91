"""The module objects the legacy runner hands to a script, and the record of what it used.

A `ProxyModule` looks its attributes up on use in other modules (or dicts), so that it can
note which compatibility pieces the script touched and stop on a name it does not provide with
one line naming it and what replaces it, instead of an `AttributeError` traceback from deep
inside the script. `LegacyFinder` serves such modules to `import` statements.
"""
import importlib.abc
import importlib.util
import os
import types

from towers.errors import TowersError
from towers.legacy.program import installed

_ABSENT = object()
# Why a proxy has no private name of the module it stands for.
PRIVATE = "a private name of TensorFlow 1's implementation, which the runner does not give"
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class LegacyError(TowersError):
    """The script asked the legacy runner for something it cannot provide."""


class RemovedAttributeError(LegacyError, AttributeError):
    """A script read a name that left TensorFlow (or SciPy) and has no replacement here.

    It is an `AttributeError` too, so that a script that probes for a name (`hasattr`, a
    `try`/`except AttributeError` fallback, as version-tolerant TF1 code did) still works.
    """


class RemovedModuleError(LegacyError, ImportError):
    """A script imported a module that left TensorFlow and has no replacement here.

    It is an `ImportError` too, so that `try: import ... except ImportError:` still works.
    """


class Usage:
    """The compatibility pieces a script used, in the order it first used them."""

    def __init__(self):
        self._pieces = {}

    def add(self, piece):
        """Notes that `piece` (e.g. 'tf.contrib.slim') was used."""
        self._pieces.setdefault(piece, None)

    @property
    def pieces(self):
        """List of the pieces used, first use first."""
        return list(self._pieces)

    def line(self):
        """The one line the runner prints at exit."""
        return 'towers-legacy: compatibility pieces used: %s' % (', '.join(self.pieces)
                                                                 or 'none')


class ProxyModule(types.ModuleType):
    """A module whose public names are looked up, on each use, in `sources`.

    Args:
      name: the module's import name, e.g. 'tensorflow.contrib.layers'.
      display: the name a script writes, e.g. 'tf.contrib.layers', for usage and errors.
      sources: modules or dicts, searched in order for a name.
      usage: the `Usage` that records each use.
      record_names: record '<display>.<name>' for each name used, instead of `display`.
      missing: a function (name) -> why a name no source has is not available, for the
        `RemovedAttributeError` raised.
    """

    def __init__(self, name, display, sources, usage, record_names, missing):
        super().__init__(name)
        self.__dict__['_proxy'] = (display, list(sources), usage, record_names, missing)

    def __getattr__(self, attr):
        # Private and special names (`__path__`, `__wrapped__`, ...) are the import system's
        # and inspect's probes: they must fail as plain AttributeErrors (a private one saying
        # it is one, which `towers.legacy.compare.suite` reads).
        display, sources, usage, record_names, missing = self.__dict__['_proxy']
        if attr.startswith('__'):
            raise AttributeError(attr)
        if attr.startswith('_'):
            raise AttributeError('%s.%s: %s' % (self.__name__, attr, PRIVATE))
        for source in sources:
            found = source.get(attr, _ABSENT) if isinstance(source, dict) else getattr(
                source, attr, _ABSENT)
            if found is not _ABSENT:
                usage.add('%s.%s' % (display, attr) if record_names else display)
                return found
        raise RemovedAttributeError('%s.%s is not available: %s' % (display, attr,
                                                                    missing(attr)))

    def __dir__(self):
        sources = self.__dict__['_proxy'][1]
        return sorted({name for source in sources
                       for name in (source if isinstance(source, dict) else dir(source))
                       if not name.startswith('_')})


class StubModule(ProxyModule):
    """A module at an import path the runner has no real module for, so that importing it
    never fails: `tensorflow.contrib.quantize`, `tensorflow.contrib.framework.python.ops`.

    Its names are those of `sources` (its piece's, or none); reading any other name raises
    `RemovedAttributeError`, as for a `ProxyModule`. It is a package, so that deeper paths
    import too, and calling it raises `LegacyError`: a from-import of a name the runner lacks
    (`from tensorflow.contrib.quantize import create_training_graph`) binds a stub, which
    fails with one line where the script first calls or subclasses it. Arguments as for
    `ProxyModule`.
    """

    def __init__(self, name, display, sources, usage, record_names, missing):
        super().__init__(name, display, sources, usage, record_names, missing)
        self.__path__ = []

    def __call__(self, *args, **kwargs):
        raise LegacyError(self._why())

    def __mro_entries__(self, bases):
        """A class statement that subclasses the stub (`class MyHelper(Helper):` after a
        from-import of a name the runner lacks) stops with the same one line."""
        raise LegacyError(self._why())

    def _why(self):
        display, _, _, _, missing = self.__dict__['_proxy']
        return '%s is not available: %s' % (display, missing(display.rsplit('.', 1)[-1]))


class LegacyFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves module objects made by `resolve` to `import` statements.

    Args:
      resolve: a function (full module name) -> the module object to import under that name,
        or None for a name it does not serve; it may raise `RemovedModuleError`.
    """

    def __init__(self, resolve):
        self._resolve = resolve
        self._modules = {}

    def find_spec(self, fullname, path=None, target=None):
        module = self._resolve(fullname)
        if module is None:
            return None
        self._modules[fullname] = module
        return importlib.util.spec_from_loader(
            fullname, self, is_package=hasattr(module, '__path__'))

    def create_module(self, spec):
        return self._modules.pop(spec.name)

    def exec_module(self, module):
        """The module is complete when it is created."""


def located(error):
    """`error`'s message after 'file:line: ' of the deepest frame of its traceback in the
    user's code (outside this package, the import system and installed packages, such as
    tf-keras's loaders that call the runner's), where it has one."""
    location = ''
    traceback = error.__traceback__
    while traceback is not None:
        filename = traceback.tb_frame.f_code.co_filename
        if not (filename.startswith('<') or filename.startswith(_PACKAGE_DIR)
                or installed(filename)):
            location = '%s:%d: ' % (filename, traceback.tb_lineno)
        traceback = traceback.tb_next
    return location + str(error)
