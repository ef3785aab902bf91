"""`tensorflow.examples` for the legacy runner: TF 1.x's pip package shipped the MNIST tutorial's
`tensorflow.examples.tutorials.mnist` (`input_data`, and `mnist`, the model of its
`fully_connected_feed.py`); TensorFlow 2 ships no `tensorflow.examples`."""
import types

from towers.legacy import input_data, mnist
from towers.legacy.modules import ProxyModule, RemovedModuleError

PACKAGE = 'tensorflow.examples'
MNIST = PACKAGE + '.tutorials.mnist'


def resolve(usage):
    """The finder's answers for `tensorflow.examples`: a function (module name) -> module, or
    None outside it.

    The uses of `input_data` and `mnist` are recorded in `usage` (a `Usage`) under their full
    names ('tensorflow.examples.tutorials.mnist.input_data').

    Raises (from the function):
      RemovedModuleError: a module below `tensorflow.examples` other than these.
    """
    def package(name, **children):
        module = types.ModuleType(name)
        module.__path__ = []
        module.__dict__.update(children)
        return module

    modules = {MNIST + '.' + name: ProxyModule(
        MNIST + '.' + name, MNIST + '.' + name, [source], usage, False,
        lambda attr, name=name: 'towers-legacy\'s %s does not have it' % name)
        for name, source in (('input_data', input_data), ('mnist', mnist))}
    modules[MNIST] = package(MNIST, input_data=modules[MNIST + '.input_data'],
                             mnist=modules[MNIST + '.mnist'])
    modules[PACKAGE + '.tutorials'] = package(PACKAGE + '.tutorials', mnist=modules[MNIST])
    modules[PACKAGE] = package(PACKAGE, tutorials=modules[PACKAGE + '.tutorials'])

    def find(fullname):
        if fullname in modules:
            return modules[fullname]
        if fullname.startswith(PACKAGE + '.'):
            raise RemovedModuleError(
                '%s is not available: TensorFlow 2 has no tensorflow.examples, and '
                'towers-legacy provides %s.input_data and %s.mnist only'
                % (fullname, MNIST, MNIST))
        return None
    return find
