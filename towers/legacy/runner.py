"""The command `towers-legacy` (`python -m towers.legacy`): runs a TF1 script unchanged.

    towers-legacy [--legacy_devices N] path/to/script.py [the script's own flags]
    towers-legacy [--legacy_devices N] -m package.module [flags]   # as `python -m` runs it
    towers-legacy --tf2 path/to/tf2_program.py [flags]   # TF 2 behaviour, TF 2.15's tf.estimator
    towers-legacy --check path/to/script.py      # what it uses, and whether it is provided
    towers-legacy --provided                     # the table of tf.contrib pieces provided
    towers-legacy --compare_tf1 path/to/script.py [flags]   # against real TF 1.15 (`compare`)

The script runs as `__main__`, with its own directory first on `sys.path` and its flags as its
`sys.argv`, as `python script.py` would run it, under the shim of `towers.legacy.shim`; a module
given with `-m` runs as `python -m` runs it (the working directory first on `sys.path`, so its
package's relative imports work).
Its outcome is its own: its exit status, its output, and, when it fails for its own reasons,
its own traceback (from its first frame; the runner's frames are left out). Only the runner's
errors are one line: a bad runner option, a missing script, or a part of TensorFlow 1 the
runner does not provide (`error: script.py:12: tf.contrib.learn is not available: ...`), also a
name a TensorFlow module lacks where the script's code reads it (`tf.train.SomethingRemoved`;
`hasattr` and `except AttributeError` see it missing as before). At
exit one line lists the compatibility pieces the script used. `--check` reads the script and
its local modules without running them (`towers.legacy.check`).
"""
import importlib.util
import os
import re
import runpy
import sys
import traceback
import types

from towers import cli
from towers.compat import tf
from towers.errors import EXIT_ERROR, TowersError
from towers.flags import MODULE_OPTION, FlagError, FlagParser, leading_options, positive_int
from towers.legacy import check, determinism, devices, program, shim
from towers.legacy.compare import probe
from towers.legacy.contrib import provided_markdown
from towers.legacy.modules import located
from towers.legacy import export
from towers.legacy.estimator import running
from towers.legacy.horovod import collectives

PROGRAM = 'towers-legacy'
_OPTIONS_WITH_VALUE = ('--legacy_devices', '-legacy_devices', '--seed', '-seed',
                       '--precise_bn_batches', '-precise_bn_batches')
_TENSORFLOW_MODULES = ('tensorflow', 'tf_keras', 'keras._tf_keras')
# TensorFlow's code that reads a name of a module for it: its frames may stand between the
# script's line and the AttributeError of a name the module lacks.
_LOOKUP_MODULES = ('tensorflow.python.util.module_wrapper', 'tensorflow.python.util.lazy_loader')
_CANNOT_IMPORT = re.compile(r"cannot import name '(\w+)'")
_TOWERS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def parse_command(argv):
    """Splits the command line into the runner's options, the script and the script's flags.

    The runner's options come before the script; everything after it is the script's.

    Returns:
      (options, script, script_argv); options.legacy_devices is None or N, options.check and
      options.provided booleans, options.module the module of `-m` or None; script is None
      with --provided or -m (`module_file` finds it once the shim is installed).

    Raises:
      FlagError: a bad option, or no script.
    """
    options_argv = leading_options(argv, _OPTIONS_WITH_VALUE)
    index = len(options_argv)
    if index < len(argv) and argv[index] == '--':
        index += 1
    parser = FlagParser(prog=PROGRAM, description=__doc__.split('\n\n')[0],
                        usage='%(prog)s [--legacy_devices N | --check] [--tf2] '
                              '[--precise_bn_batches N] (SCRIPT | -m MODULE) [FLAGS...]')
    parser.add_argument('--legacy_devices', type=positive_int,
                        help='Make N tower devices: the script\'s /gpu:0../gpu:N-1 run on '
                             'GPUs, logical GPUs or virtual CPU devices, as '
                             'towers.configure_devices chooses for this machine.')
    parser.add_argument('--tf2', action='store_true',
                        help="Run a TensorFlow 2 program (2.0-2.15) that used tf.estimator: "
                             "TensorFlow 2 behaviour stays on (eager outside the Estimator) "
                             "and tf.estimator is TF 2.15's (TF 1.15's at "
                             "tf.compat.v1.estimator).")
    parser.add_argument('--check', action='store_true',
                        help='Do not run the script: report each TF1, tf.contrib, removed NumPy '
                             'and Python 2 name it and its local modules use, and whether the '
                             'runner provides it; exit status 1 if any is not.')
    parser.add_argument('--provided', action='store_true',
                        help='Print the table of the tf.contrib pieces the runner provides.')
    parser.add_argument('--precise_bn_batches', type=positive_int,
                        help='Every tf.estimator evaluation re-estimates the batch-norm '
                             'statistics from N batches of the training input, as towers\' '
                             'evaluations do (default: the moving averages, as TF 1.x).')
    determinism.add_flags(parser)
    options = parser.parse_args(options_argv)
    options.module = None
    if options.provided:
        return options, None, []
    if index >= len(argv):
        raise FlagError('give the script to run: %s [--legacy_devices N] SCRIPT [FLAGS...]'
                        % PROGRAM)
    if argv[index] == MODULE_OPTION:
        if index + 1 >= len(argv):
            raise FlagError('-m needs the module to run: %s -m package.module [FLAGS...]'
                            % PROGRAM)
        options.module = argv[index + 1]
        return options, None, argv[index + 2:]
    script = argv[index]
    if not os.path.isfile(script):
        raise FlagError('cannot run %s: no such file' % script)
    return options, script, argv[index + 1:]


def module_file(module):
    """The file of `module` as `python -m` finds it from the working directory, without running
    it (its packages' `__init__` do run, as they would: under the shim, once it is installed).

    Raises:
      FlagError: no such module, or one without a file to run.
    """
    sys.path.insert(0, os.getcwd())
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError) as err:
        raise FlagError('cannot run -m %s: %s' % (module, err)) from None
    finally:
        sys.path.pop(0)
    if spec is not None and spec.submodule_search_locations is not None:
        return module_file(module + '.__main__')
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        raise FlagError('cannot run -m %s: no module named %s under %s or the installed '
                        'packages' % (module, module, os.getcwd()))
    return spec.origin


def run_script(script, script_argv, usage, module=None):
    """Runs `script` as `__main__` with `script_argv` (or `module`, whose file `script` is, as
    `python -m` runs it), then prints `usage`'s line.

    Returns:
      0, or `EXIT_ERROR` after the script failed (its traceback printed), hit a part of
      TensorFlow 1 the runner lacks (one line printed; `_missing_tensorflow_name`), or a
      failure the runner's machinery explains (a `TowersError`: one line). A
      `SystemExit` of the script (e.g. from `tf.app.run`) passes through with its status.
    """
    path = os.path.abspath(script)
    sys.argv = [path if module else script] + list(script_argv)
    sys.path[0] = os.getcwd() if module else os.path.dirname(path)
    try:
        if module:
            runpy.run_module(module, run_name='__main__', alter_sys=True)
        else:
            runpy.run_path(path, run_name='__main__')
    except (SystemExit, KeyboardInterrupt):
        raise
    except TowersError as err:
        # The runner's own machinery (tf.estimator's loop, checkpoints, evaluation) or a part
        # of TensorFlow 1 it lacks: one line, where the script called it.
        print('error: %s' % located(err), file=sys.stderr)
        return EXIT_ERROR
    except Exception as err:  # the script's own failure: its traceback, from its first frame
        missing = _missing_tensorflow_name(err) or collectives.failure_line(err)
        if missing:
            print('error: %s' % missing, file=sys.stderr)
        else:
            traceback.print_exception(type(err), err, _from_frame_of(err.__traceback__, path))
        return EXIT_ERROR
    finally:
        print(usage.line(), file=sys.stderr, flush=True)
    return 0


def _missing_tensorflow_name(err):
    """'file:line: tf.x.y is not available: ...' when `err` is the failure of the user's own
    code (the script or its modules, not an installed package or towers) to read a name a
    TensorFlow module lacks: `tf.foo`, `tf.train.Foo` (an AttributeError of the module) or
    `from tensorflow.train import Foo`; else None."""
    if isinstance(err, AttributeError) and isinstance(getattr(err, 'obj', None),
                                                      types.ModuleType):
        module, name = err.obj.__name__, err.name
    elif type(err) is ImportError and err.name and _CANNOT_IMPORT.match(str(err)):
        module, name = err.name, _CANNOT_IMPORT.match(str(err)).group(1)
    else:
        return None
    if not name or not any(module == prefix or module.startswith(prefix + '.')
                           for prefix in _TENSORFLOW_MODULES):
        return None
    lookup = {sys.modules[lookup_module].__file__ for lookup_module in _LOOKUP_MODULES
              if lookup_module in sys.modules}
    frames = [(frame.f_code.co_filename, line)
              for frame, line in traceback.walk_tb(err.__traceback__)]
    while frames and (frames[-1][0] in lookup or frames[-1][0].startswith('<')):
        frames.pop()
    if not frames or program.installed(frames[-1][0]) or frames[-1][0].startswith(_TOWERS_DIR):
        return None
    owner = check.shown(module, ())
    if owner == 'tf' or (owner.startswith('tf.') and not owner.startswith('tf.keras')):
        owner = 'tf.compat.v1' + owner[2:]
    return '%s:%d: %s is not available: %s of TensorFlow %s does not have it' % (
        frames[-1] + (check.shown(module, (name,)), owner, tf.__version__))


def _from_frame_of(trace, path):
    """The part of traceback `trace` from the first frame in file `path` (None if none)."""
    while trace is not None and trace.tb_frame.f_code.co_filename != path:
        trace = trace.tb_next
    return trace


def main(argv=None):
    """The command: parses the runner's options, installs the shim, runs the script, exits."""
    command = sys.argv[1:] if argv is None else argv
    if export.is_command(command):
        cli.run(export.main, command[1:])
    try:
        options, script, script_argv = parse_command(command)
    except TowersError as err:
        print('error: %s' % err, file=sys.stderr)
        sys.exit(EXIT_ERROR)
    if options.provided:
        print(provided_markdown())
        sys.exit(0)
    usage = shim.install(tf2=options.tf2)
    if options.module:
        try:
            script = module_file(options.module)
        except TowersError as err:
            print('error: %s' % err, file=sys.stderr)
            sys.exit(EXIT_ERROR)
    if options.check:
        sys.exit(check.main(script, options.module))
    if options.legacy_devices:
        device_map = devices.DeviceMap(options.legacy_devices, usage)
        device_map.install()
        print('%s: %s' % (PROGRAM, device_map.description), file=sys.stderr, flush=True)
    determinism.install(options, usage)
    probe.install_from_environment()
    if options.precise_bn_batches:
        running.use_precise_bn(options.precise_bn_batches)
        usage.add('precise batch-norm statistics (%d batches)' % options.precise_bn_batches)
    sys.exit(run_script(script, script_argv, usage, options.module))
