"""The `tensorflow` that a TF1-era script imports under the legacy runner.

This package and `towers.compat` are the only code of the project that touches `sys.modules`.
`install` changes, for the rest of the process:

- `sys.modules['tensorflow']` is `towers.compat.tf`, the very module object the project uses:
  `tf.compat.v1` with v2 behaviour disabled (graph mode, reference variables, queue runners).
  Modules already loaded keep their own references; `from tensorflow.python... import` still
  reaches TensorFlow's own modules.
- that module gains `tf.contrib` (`towers.legacy.contrib`), and its `tf.app`, `tf.flags`,
  `tf.logging` and `tf.gfile` (TF 1.x's, which TensorFlow 2 still ships in `tf.compat.v1`) are
  replaced by proxies of themselves that record their use;
- `tf.keras` is Keras 2 (tf-keras), as `TF_USE_LEGACY_KERAS=1` makes TensorFlow choose on first
  use, unless the environment says otherwise;
- `tensorflow.examples.tutorials.mnist` is `towers.legacy.examples`'s (TF 1.x's MNIST reader
  and tutorial model; TensorFlow 2 ships no `tensorflow.examples`);
- `import scipy.misc` gives `imread`, `imresize` and `imsave` through Pillow
  (`towers.legacy.scipy_misc`), with or without SciPy installed.

`import_originals` imports a user's original modules this way, for a regression against them.
"""
import importlib
import os
import sys

from absl import flags as absl_flags

from towers.compat import tf
from towers.errors import TowersError
from towers.legacy import examples, scipy_misc
from towers.legacy.contrib import Contrib
from towers.legacy.modules import LegacyError, LegacyFinder, ProxyModule, Usage, located

TENSORFLOW = 'tensorflow as tf.compat.v1 (v2 behaviour off)'

# TF 1.x modules TensorFlow 2 still has in tf.compat.v1: name -> whether usage records each
# name used in it ('tf.app.run') or the module alone ('tf.logging').
_RECORDED_MODULES = {'app': True, 'flags': False, 'logging': False, 'gfile': False}

_installed = []


def install():
    """Installs the shim for the rest of the process (once; later calls return the same).

    Returns:
      The `Usage` that records what the script uses, starting with `TENSORFLOW`.
    """
    if _installed:
        return _installed[0]
    usage = Usage()
    usage.add(TENSORFLOW)
    os.environ.setdefault('TF_USE_LEGACY_KERAS', '1')
    for name, record_names in _RECORDED_MODULES.items():
        setattr(tf, name, ProxyModule(
            'tensorflow.' + name, 'tf.' + name, [getattr(tf, name)], usage, record_names,
            lambda attr: 'tf.compat.v1 of TensorFlow %s does not have it' % tf.__version__))
    contrib = Contrib(usage)
    tf.contrib = contrib.root
    sys.modules.update(contrib.modules)
    sys.modules['tensorflow'] = tf
    # A scipy.misc imported before (SciPy's own, without imread) must not hide the finder's.
    sys.modules.pop('scipy.misc', None)
    find_examples, find_scipy = examples.resolve(usage), scipy_misc.resolve(usage)
    sys.meta_path.insert(0, LegacyFinder(lambda name: contrib.resolve(name)
                                         or find_examples(name) or find_scipy(name)))
    _installed.append(usage)
    return usage


def import_originals(directory, names, flag):
    """Imports the modules of a user's original TF1 program, as they run under the runner.

    The directory goes first on `sys.path` (the originals import each other by name). They
    read their flags' defaults: they are imported with no command-line arguments (some
    versions parse `sys.argv` with argparse on import), and their `tf.app.flags` are parsed
    without arguments.

    Args:
      directory: the folder holding '<name>.py' for each of `names`.
      names: module names, imported in this order.
      flag: the flag that named `directory`, for errors.

    Returns:
      A dict name -> module.

    Raises:
      TowersError: a module is missing, or another module of that name is already imported;
        a `LegacyError` from the originals' use of TensorFlow names the file and line.
    """
    directory = os.path.abspath(directory)
    missing = [name + '.py' for name in names
               if not os.path.isfile(os.path.join(directory, name + '.py'))]
    if missing:
        raise TowersError('%s %s has no %s (expected %s)' % (
            flag, directory, ', '.join(missing), ', '.join(name + '.py' for name in names)))
    clashing = [name for name in names if name in sys.modules]
    if clashing:
        raise TowersError('%s: a module named %s is already imported from elsewhere'
                          % (flag, ', '.join(clashing)))
    install()
    sys.path.insert(0, directory)
    argv, sys.argv = sys.argv, sys.argv[:1]
    try:
        modules = {name: importlib.import_module(name) for name in names}
    except LegacyError as err:
        raise LegacyError(located(err)) from None
    finally:
        sys.argv = argv
    if not absl_flags.FLAGS.is_parsed():
        absl_flags.FLAGS([sys.argv[0]])
    return modules
