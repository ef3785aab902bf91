"""The `tensorflow` that a TF1-era script imports under the legacy runner.

This package and `towers.compat` are the only code of the project that touches `sys.modules`.
`install` changes, for the rest of the process (with `tf2`, `towers-legacy --tf2`, TensorFlow 2
behaviour stays on, `tensorflow` and `tensorflow.compat.v1` stay TensorFlow's modules and gain
`estimator`, TF 2.15's and TF 1.15's; TF 1.x's mutable `DeviceSpec` is not installed; the rest
as below):

- `sys.modules['tensorflow']` and `sys.modules['tensorflow.compat.v1']` are `towers.compat.tf`,
  the very module object the project uses: `tf.compat.v1` with v2 behaviour disabled (graph
  mode, reference variables, queue runners). So `import tensorflow.compat.v1 as tf` gives the
  same module as `import tensorflow as tf`. Modules already loaded keep their own references;
  TensorFlow's private modules (`tensorflow.python.ops...`, `tensorflow.core...`) import as
  before, also as `import tensorflow.python.client.device_lib as device_lib`.
- that module gains `tf.estimator` (`towers.legacy.estimator`, also at the paths
  `tensorflow_estimator` and `tensorflow.python.estimator.*` old code imported) and `tf.contrib`
  (`towers.legacy.contrib`), and its `tf.app`, `tf.flags`,
  `tf.logging` and `tf.gfile` (TF 1.x's, which TensorFlow 2 still ships in `tf.compat.v1`)
  become proxies of themselves that record their use, also when imported by path
  (`from tensorflow.gfile import Exists`); `tf.compat.v1` is `tf`. A flag the script defines
  with `tf.app.flags` under a name absl.logging already took (`--log_dir`, `--v`, ...: TF <= 1.4
  had its own flags) replaces absl.logging's.
- `tensorflow.examples.tutorials.mnist` is `towers.legacy.examples`'s;
- `horovod.tensorflow` (and `horovod.tensorflow.keras`) are `towers.legacy.horovod`'s, and the
  sessions a rank makes after `hvd.init()` run on its server;
- `tf.data.Dataset.prefetch` takes a NumPy integer, as TF 1.x's did;
- `tf.keras.datasets.*.load_data` read the file where Keras keeps it and never download
  (`towers.legacy.keras_datasets`);
- `tf.keras.estimator.model_to_estimator` (tf-keras's raises) is
  `towers.legacy.estimator.keras`'s;
- `tensorflow.python.framework.device.DeviceSpec` is TF 1.x's mutable one (`merge_from`), as
  `tf.DeviceSpec` is (`towers.legacy.devices`);
- TF 1.15's names at TensorFlow's private paths that TF 2.x moved (`ops.Tensor`,
  `control_flow_ops.cond`, `variables.VariableV1`, ...) are there again
  (`towers.legacy.tf_private`);
- NumPy's removed names come back (`towers.legacy.numpy_aliases`);
- scikit-learn's metrics, matplotlib's lines and `float()` of a 1x1 matrix take `np.matrix` as
  their 2019 versions did (`towers.legacy.libraries`);
- `tf.keras` is Keras 2 (tf-keras), also imported by path (`from tensorflow.keras import
  backend`), as `TF_USE_LEGACY_KERAS=1` makes TensorFlow choose on first
  use, unless the environment says otherwise;
- `import scipy.misc` gives `imread`, `imresize` and `imsave` through Pillow
  (`towers.legacy.scipy_misc`), with or without SciPy installed.

`import_originals` imports a user's original modules this way, for a regression against them.
"""
import functools
import importlib
import inspect
import os
import sys
import types

import numpy as np
from absl import flags as absl_flags

from towers.compat import tf
from towers.errors import TowersError
from towers.legacy import (devices, examples, keras_datasets, libraries, numpy_aliases,
                           scipy_misc, tf_private)
from towers.legacy.contrib import Contrib, framework
from towers.legacy.estimator.namespace import Namespace as EstimatorNamespace
from towers.legacy.horovod import Namespace as HorovodNamespace, ranks, watchdog
from towers.legacy.modules import LegacyError, LegacyFinder, ProxyModule, Usage, located

TENSORFLOW = 'tensorflow as tf.compat.v1 (v2 behaviour off)'
TENSORFLOW_2 = "tensorflow 2 with TF 2.15's tf.estimator"

_installed = []


def install(tf2=False):
    """Installs the shim for the rest of the process (once; later calls return the same).

    Args:
      tf2: TensorFlow 2's face (`towers-legacy --tf2`): TensorFlow 2 behaviour stays on and
        `tensorflow` stays TensorFlow 2's module; it gains `tf.estimator` of TF 2.15 (TF 1.15's
        stays at `tf.compat.v1.estimator`).

    Returns:
      The `Usage` that records what the script uses, starting with `TENSORFLOW` (or
      `TENSORFLOW_2`).
    """
    if _installed:
        return _installed[0]
    usage = Usage()
    usage.add(TENSORFLOW_2 if tf2 else TENSORFLOW)
    if tf2:
        tf.enable_v2_behavior()
    os.environ.setdefault('TF_USE_LEGACY_KERAS', '1')
    numpy_aliases.install(usage)
    libraries.install(usage)
    _accept_numpy_prefetch_sizes(usage)
    _give_keras_model_to_estimator(usage, tf2)
    keras_datasets.install(usage)
    if not tf2:
        devices.use_tf1_device_spec()
    tf_private.install()
    framework.install()
    for name in ('python', 'core'):
        setattr(tf, name, importlib.import_module('tensorflow.' + name))
    contrib = Contrib(usage)
    tf.contrib = contrib.root
    sys.modules.update(contrib.modules)
    for name, module in _recorded_modules(usage).items():
        setattr(tf, name, module)
        sys.modules['tensorflow.compat.v1.' + name] = module
        if not tf2:
            sys.modules['tensorflow.' + name] = module
    if not tf2:
        tf.compat = sys.modules['tensorflow.compat'] = _compat()
        sys.modules['tensorflow'] = sys.modules['tensorflow.compat.v1'] = tf
    # A scipy.misc imported before (SciPy's own, without imread) must not hide the finder's.
    sys.modules.pop('scipy.misc', None)
    estimator = EstimatorNamespace(usage, tf2)
    tf.estimator = sys.modules['tensorflow.compat.v1.estimator'] = estimator.v1
    sys.modules['tensorflow.estimator'] = estimator.root
    if tf2:  # TensorFlow 2's own module objects, beside the project's `tf`
        sys.modules['tensorflow'].estimator = estimator.root
        sys.modules['tensorflow'].compat.v1.estimator = estimator.v1
        sys.modules['tensorflow'].compat.v2.estimator = estimator.root
    find_examples, find_scipy = examples.resolve(usage), scipy_misc.resolve(usage)
    horovod = HorovodNamespace(usage)
    ranks.install_sessions()
    watchdog.install()
    sys.meta_path.insert(0, LegacyFinder(lambda name: contrib.resolve(name)
                                         or estimator.resolve(name) or horovod.resolve(name)
                                         or _keras_module(name, tf2)
                                         or find_examples(name) or find_scipy(name)))
    _installed.append(usage)
    return usage


def _keras_module(fullname, tf2):
    """`tf.keras`'s module (tf-keras's v1 API; its v2 API at `tensorflow.keras` with `tf2`) at
    `tensorflow.keras[.x]`, the path `from tensorflow.keras import backend` imports; None for
    another name or a submodule tf-keras lacks."""
    for prefix in ('tensorflow.keras', 'tensorflow.compat.v1.keras'):
        if fullname == prefix or fullname.startswith(prefix + '.'):
            keras = sys.modules['tensorflow'].keras if tf2 and prefix == 'tensorflow.keras' \
                else tf.keras
            try:
                return importlib.import_module(keras.__name__ + fullname[len(prefix):])
            except ImportError:
                return None
    return None


def _compat():
    """`tensorflow.compat` as TensorFlow has it, but whose `v1` is `tf`."""
    real = sys.modules['tensorflow.compat']
    compat = types.ModuleType(real.__name__, real.__doc__)
    compat.__dict__.update({name: getattr(real, name) for name in dir(real)
                            if not name.startswith('_')})
    compat.__path__ = list(real.__path__)
    compat.v1 = tf
    return compat


def _recorded_modules(usage):
    """name -> the proxy that becomes `tf.<name>`: 'app', 'flags', 'logging' and 'gfile',
    recording their use in `usage`."""
    def proxy(name, sources, record_names=False):
        return ProxyModule('tensorflow.' + name, 'tf.' + name, sources, usage, record_names,
                           lambda attr: 'tf.compat.v1 of TensorFlow %s does not have it'
                                        % tf.__version__)

    definitions = _flag_definitions(usage)
    return {'app': proxy('app', [{'flags': proxy('app.flags', [definitions, tf.flags])},
                                 tf.app], record_names=True),
            'flags': proxy('flags', [definitions, tf.flags]),
            'logging': proxy('logging', [tf.logging]),
            'gfile': proxy('gfile', [tf.gfile])}


def _flag_definitions(usage):
    """absl's `DEFINE_*(name, ...)` functions, each first removing a flag of that name that
    absl.logging defined (the script's replaces it, recorded in `usage`)."""
    def replacing_absl_logging(define):
        @functools.wraps(define)
        def define_flag(name, *args, **kwargs):
            flags = absl_flags.FLAGS
            if name in flags and flags.find_module_defining_flag(name) == 'absl.logging':
                delattr(flags, name)
                usage.add("the script's --%s (absl.logging's removed)" % name)
            return define(name, *args, **kwargs)
        return define_flag
    return {name: replacing_absl_logging(define) for name, define in vars(absl_flags).items()
            if name.startswith('DEFINE') and callable(define)
            and next(iter(inspect.signature(define).parameters), None) == 'name'}


def _accept_numpy_prefetch_sizes(usage):
    """Lets `Dataset.prefetch` take a NumPy integer buffer size, as TF 1.x did (TF 2.21 fails on
    one: 'Expected bool for argument legacy_autotune'); each such call is recorded."""
    owner = next(cls for cls in tf.data.Dataset.__mro__ if 'prefetch' in vars(cls))
    prefetch = owner.prefetch

    def prefetch_taking_numpy(dataset, buffer_size, name=None):
        if isinstance(buffer_size, np.integer):
            usage.add('tf.data.Dataset.prefetch(NumPy integer)')
            buffer_size = int(buffer_size)
        return prefetch(dataset, buffer_size, name=name)
    owner.prefetch = prefetch_taking_numpy


def _give_keras_model_to_estimator(usage, tf2):
    """Makes tf-keras's `model_to_estimator` (`tf.keras.estimator`, `tf.contrib.keras`'s, and
    where tf-keras defines it), which raises NotImplementedError, `towers.legacy.estimator.
    keras`'s, imported on its first call as `tf.estimator`'s names are: TF 1's (name-based
    checkpoints), but with `tf2` where tf-keras has TF 2's `model_to_estimator_v2` (object-based
    ones, an `EstimatorV2`); each call is recorded."""
    def replacement(name):
        def model_to_estimator(keras_model=None, keras_model_path=None, custom_objects=None,
                               model_dir=None, config=None,
                               checkpoint_format='checkpoint' if name.endswith('_v2')
                               else 'saver', metric_names_map=None, export_outputs=None):
            usage.add('tf.keras.estimator.model_to_estimator (a tf.estimator.Estimator)')
            keras_estimator = importlib.import_module('towers.legacy.estimator.keras')
            return getattr(keras_estimator, name)(
                keras_model, keras_model_path, custom_objects, model_dir, config,
                checkpoint_format, metric_names_map, export_outputs)
        model_to_estimator.__doc__ = ("TF %s's, as towers.legacy.estimator.keras gives it back."
                                      % ('2.15' if name.endswith('_v2') else '1.15'))
        return model_to_estimator
    given = {name: replacement(name) for name in ('model_to_estimator', 'model_to_estimator_v2')}
    for name in ('tf_keras.estimator', 'tf_keras.api._v1.keras.estimator',
                 'tf_keras.api._v2.keras.estimator', 'tf_keras.src.estimator'):
        module = importlib.import_module(name)
        for attribute in ('model_to_estimator', 'model_to_estimator_v2'):
            if hasattr(module, attribute):
                v2 = tf2 and getattr(module, attribute).__name__.endswith('_v2')
                setattr(module, attribute,
                        given['model_to_estimator_v2' if v2 else 'model_to_estimator'])


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
