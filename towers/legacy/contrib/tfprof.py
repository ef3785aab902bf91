"""`tf.contrib.tfprof`: `ProfileContext`, and `model_analyzer` (this module) over `tf.profiler`.

    with tf.contrib.tfprof.ProfileContext(enabled=False, profile_dir=None):   # does nothing
        ...
    tf.contrib.tfprof.model_analyzer.print_model_analysis(
        tf.get_default_graph(),
        tfprof_options=tf.contrib.tfprof.model_analyzer.TRAINABLE_VARS_PARAMS_STAT_OPTIONS)

TensorFlow 2 has no `ProfileContext`: code that enters one only when profiling is off (DeepLab
enters it always, `enabled=flag`) runs; an enabled one stops the script with one line.
"""
from towers.compat import tf
from towers.legacy.modules import LegacyError

_OPTIONS = tf.profiler.ProfileOptionBuilder
TRAINABLE_VARS_PARAMS_STAT_OPTIONS = _OPTIONS.trainable_variables_parameter()
FLOAT_OPS_OPTIONS = _OPTIONS.float_operation()
PRINT_ALL_TIMING_MEMORY = _OPTIONS.time_and_memory()
Profiler = tf.profiler.Profiler
profile = tf.profiler.profile
advise = tf.profiler.advise


class ProfileContext:
    """TF 1.x's `ProfileContext(profile_dir, trace_steps=None, dump_steps=None, enabled=True,
    debug=False)`, disabled: a context that does nothing.

    Raises:
      LegacyError: `enabled` is true.
    """

    def __init__(self, profile_dir=None, trace_steps=None, dump_steps=None, enabled=True,
                 debug=False):
        if enabled:
            raise LegacyError(
                'tf.contrib.tfprof.ProfileContext(enabled=True) is not available: TensorFlow 2 '
                'has no ProfileContext; use tf.profiler.experimental.start and stop, or '
                'tf.profiler.profile')

    def add_auto_profiling(self, cmd, options, profile_steps):
        """Nothing to add to: the context is disabled."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False


def print_model_analysis(graph, run_meta=None, op_log=None, tfprof_cmd='scope',
                         tfprof_options=TRAINABLE_VARS_PARAMS_STAT_OPTIONS):
    """Prints (or writes, as `tfprof_options` say) the profile of `graph` and returns it:
    `tf.profiler.profile` with TF 1.x's argument names."""
    return tf.profiler.profile(graph, run_meta=run_meta, op_log=op_log, cmd=tfprof_cmd,
                               options=tfprof_options)
