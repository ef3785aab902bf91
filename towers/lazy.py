"""Package names imported when first used, so that importing a package imports no TensorFlow.

A script reads its flags before anything imports TensorFlow (`towers.cli`): `--help` and a bad
flag answer at once. The packages whose light modules the flags need (`towers`,
`towers.replication`, `towers.evaluation`) offer their TensorFlow names through this:

    __getattr__, __dir__ = lazy.exports(__name__, {
        'fit': 'towers.training.assembly',           # towers.fit
        'regression': 'towers.evaluation.regression',  # a module: towers.regression
    })
"""
import importlib


def exports(package, names):
    """The module-level `__getattr__` and `__dir__` of `package` (PEP 562).

    Args:
      package: the package's `__name__`.
      names: each name the package offers -> the module that defines it; a name that is that
        module's own last component names the module itself.

    Returns:
      (`__getattr__`, `__dir__`): the first imports the name's module when the name is first
      read, and raises AttributeError for a name not in `names`.
    """
    def __getattr__(name):
        module_name = names.get(name)
        if module_name is None:
            raise AttributeError('module %r has no attribute %r' % (package, name))
        module = importlib.import_module(module_name)
        return module if module_name.rsplit('.', 1)[-1] == name else getattr(module, name)

    def __dir__():
        return sorted(set(names) | set(vars(importlib.import_module(package))))

    return __getattr__, __dir__
