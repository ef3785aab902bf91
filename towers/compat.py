"""The one place that knows which TensorFlow is installed.

Every other module of the project takes TensorFlow and tf-slim from here:

    from towers.compat import tf, slim, keras

`tf` is `tensorflow.compat.v1` with v2 behaviour disabled (graph mode, reference
variables, v1 control flow), as the 2016-2019 code this project runs expects.
`slim` is tf-slim 1.1.0, made to work on TensorFlow >= 2.13, where it looks for the
legacy layers under `tf_keras.legacy_tf_layers` while the `tf-keras` package ships
them as `tf_keras.src.legacy_tf_layers`, and reads names (`ops.Tensor`,
`control_flow_ops.cond`, ...) that newer releases moved to other modules; `slim.nets` holds
its networks (`slim.nets.resnet_v1`, ...), which `import tf_slim` alone does not load.
`set_op_determinism(enabled)` turns TensorFlow's op determinism on or off for the process.
`mode_keys`, `export_output` and `export_utils` are what TensorFlow still ships of the
Estimator's support (`towers.legacy.estimator`).
`keras` is the `tf_keras` package (Keras 2, the `tf.keras` of TensorFlow <= 2.15), whose layers
and models build in the same graph mode (see `towers.replication.keras_models` for calling one in towers).
"""
import importlib
import logging
import os
import sys
import warnings

from towers.console import LEVEL_VARIABLE
from towers.errors import UnsupportedEnvironmentError

MIN_TF_VERSION = (2, 16)
NEWEST_TESTED_TF_VERSION = (2, 21)

log = logging.getLogger(__name__)


def _major_minor(version):
    parts = version.split('.')
    return int(parts[0]), int(parts[1])


def check_tensorflow_version(version):
    """Raises `UnsupportedEnvironmentError` for TensorFlow older than 2.16; warns past 2.21."""
    if _major_minor(version) < MIN_TF_VERSION:
        raise UnsupportedEnvironmentError(
            'TensorFlow %s is installed; towers needs TensorFlow %d.%d or newer '
            '(tested up to %d.%d).' % ((version,) + MIN_TF_VERSION + NEWEST_TESTED_TF_VERSION))
    if _major_minor(version) > NEWEST_TESTED_TF_VERSION:
        log.warning('TensorFlow %s is newer than the newest tested release %d.%d.',
                    version, *NEWEST_TESTED_TF_VERSION)


def check_tf_keras_version(tf_keras_version, tf_version):
    """Raises `UnsupportedEnvironmentError` unless tf-keras has TensorFlow's major.minor."""
    if _major_minor(tf_keras_version) != _major_minor(tf_version):
        raise UnsupportedEnvironmentError(
            'tf-keras %s does not match TensorFlow %s; install `tf-keras==%d.%d.*`.'
            % ((tf_keras_version, tf_version) + _major_minor(tf_version)))


def _import_tensorflow():
    # TensorFlow's C++ INFO logs drown the tutorial's log lines; warnings and errors still come
    # through. TensorFlow reads the level once, on import; it is not left in the environment,
    # where the processes a run starts would take it for the user's (`towers.console`, which
    # also hides the start-up lines absl prints before it reads the level).
    user_set = LEVEL_VARIABLE in os.environ
    os.environ.setdefault(LEVEL_VARIABLE, '1')
    try:
        import tensorflow as tf_root
    except ImportError as err:
        raise UnsupportedEnvironmentError(
            'TensorFlow is not installed (%s). Install the project with '
            '`pip install -r requirements.txt`.' % err) from err
    finally:
        if not user_set:
            del os.environ[LEVEL_VARIABLE]
    check_tensorflow_version(tf_root.__version__)
    return tf_root


def _alias_legacy_keras_layers(tf_version):
    """Lets tf-slim and `tf.compat.v1.layers` find the legacy layers of tf-keras."""
    try:
        import tf_keras
    except ImportError as err:
        raise UnsupportedEnvironmentError(
            'tf-keras is not installed; tf-slim needs it on TensorFlow %s. '
            'Install `tf-keras==%d.%d.*`.' % ((tf_version,) + _major_minor(tf_version))) from err
    check_tf_keras_version(tf_keras.__version__, tf_version)
    for name in ('legacy_tf_layers', 'legacy_tf_layers.normalization'):
        public = 'tf_keras.' + name
        if public in sys.modules:
            continue
        try:
            importlib.import_module(public)
        except ImportError:
            sys.modules[public] = importlib.import_module('tf_keras.src.' + name)


# Names tf-slim 1.1.0 takes from TensorFlow's internal modules that newer releases moved:
# (module tf-slim reads, name, module that holds it now).
_MOVED_NAMES = [
    ('tensorflow.python.framework.ops', 'Tensor', 'tensorflow.python.framework.tensor'),
    ('tensorflow.python.framework.ops', 'IndexedSlices',
     'tensorflow.python.framework.indexed_slices'),
    ('tensorflow.python.ops.array_ops', 'stack', 'tensorflow.python.ops.array_ops_stack'),
    ('tensorflow.python.ops.array_ops', 'unstack', 'tensorflow.python.ops.array_ops_stack'),
    ('tensorflow.python.ops.control_flow_ops', 'cond', 'tensorflow.python.ops.cond'),
    ('tensorflow.python.ops.control_flow_ops', 'case', 'tensorflow.python.ops.control_flow_case'),
    ('tensorflow.python.ops.control_flow_ops', 'while_loop', 'tensorflow.python.ops.while_loop'),
    ('tensorflow.python.ops.control_flow_ops', 'Assert',
     'tensorflow.python.ops.control_flow_assert'),
]


def _restore_moved_names():
    """Puts back, where missing, the TensorFlow names tf-slim still looks for in old places."""
    for old_module, name, new_module in _MOVED_NAMES:
        module = importlib.import_module(old_module)
        if not hasattr(module, name):
            setattr(module, name, getattr(importlib.import_module(new_module), name))


_CONTROL_INPUT_MARK = '_has_manual_control_dependencies'


def _mark_control_inputs_once():
    """Makes TensorFlow mark an op as a manual control input only the first time it is one.

    TensorFlow 2 sets the attribute `_has_manual_control_dependencies` (a count for its MLIR
    bridge, unknown to TF 1.x) on every op named in `tf.control_dependencies`, each time. A TF1
    program that makes `tf.global_variables_initializer()` or `tf.tables_initializer()` again
    on a graph a session has run (tensorflow/nmt does, at each evaluation) re-marks ops that ran,
    and the C API warns for each that a node was changed after it ran ("will trigger an error in
    the future"). The mark is already there; setting it again changes nothing."""
    operation = importlib.import_module('tensorflow.python.framework.ops').Operation
    set_attr = operation._set_attr  # pylint: disable=protected-access

    def set_attr_once(op, attr_name, attr_value):
        if attr_name == _CONTROL_INPUT_MARK:
            try:
                if op.get_attr(attr_name) == attr_value.b:
                    return
            except ValueError:  # not marked yet
                pass
        set_attr(op, attr_name, attr_value)
    operation._set_attr = set_attr_once  # pylint: disable=protected-access


def _import_slim(tf_version):
    _alias_legacy_keras_layers(tf_version)
    _restore_moved_names()
    try:
        import tf_slim
        import tf_slim.nets  # noqa: F401 (`slim.nets`: resnet_v1, inception, vgg, ...)
    except ImportError as err:
        raise UnsupportedEnvironmentError(
            'tf-slim is not installed; install `tf-slim==1.1.0`.') from err
    return tf_slim


# The legacy layers tf-slim builds on warn on every call that they are deprecated; this project
# uses them on purpose.
warnings.filterwarnings('ignore', message=r'`(layer\.apply|tf\.layers\.\w+)` is deprecated')

_tf_root = _import_tensorflow()
tf = _tf_root.compat.v1
_tf_logger = _tf_root.get_logger()
_level = _tf_logger.level
_tf_logger.setLevel(logging.ERROR)  # disable_v2_behavior logs its own deprecation
tf.disable_v2_behavior()
_tf_logger.setLevel(_level)
_mark_control_inputs_once()
slim = _import_slim(_tf_root.__version__)
keras = importlib.import_module('tf_keras')  # checked against TensorFlow by _import_slim
# The `tf.layers` of TensorFlow 1 (`tf.compat.v1.layers` refuses them under Keras 3): the layers
# users' programs and tf-slim's batch norm build on, from tf-keras.
tf_layers = importlib.import_module('tf_keras.legacy_tf_layers')

# TF 1.x's RNN cells as tf-keras keeps them (`tf.nn.rnn_cell` under the runner): `RNNCell`, and
# `LayerRNNCell`, the base of cells whose layer holds their variables, which its API leaves out.
rnn_cells = importlib.import_module('tf_keras.src.layers.rnn.legacy_cells')


def internal(name):
    """TensorFlow's private module `tensorflow.python.<name>` ('ops.summary_ops_v2'), for the
    pieces of TF 1.x written on TensorFlow's own kernels and classes."""
    return importlib.import_module('tensorflow.python.' + name)


TF_VERSION = _tf_root.__version__
# What TensorFlow still ships of the Estimator it removed in 2.16, for the legacy runner's
# `tf.estimator`: its mode keys, the export outputs, and the SavedModel signatures built of them.
mode_keys = importlib.import_module('tensorflow.python.saved_model.model_utils.mode_keys')
export_output = importlib.import_module(
    'tensorflow.python.saved_model.model_utils.export_output')
export_utils = importlib.import_module('tensorflow.python.saved_model.model_utils.export_utils')
# Where TensorFlow keeps op determinism's switch, both ways.
_determinism = importlib.import_module('tensorflow.python.framework.config')


def op_determinism_enabled():
    """Whether TensorFlow's op determinism is on in this process."""
    return _determinism.is_op_determinism_enabled()


def set_op_determinism(enabled):
    """Turns TensorFlow's op determinism on (`tf.config.experimental.enable_op_determinism`) or
    off for the whole process; TensorFlow offers turning it off only internally."""
    if enabled:
        _tf_root.config.experimental.enable_op_determinism()
    else:
        _determinism.disable_op_determinism()
