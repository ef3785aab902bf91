"""How every command-line script runs: logging, TensorFlow's start-up lines hidden
(`towers.console`), and clean failure (one `error:` line, no traceback). Flags are in
`towers.flags`. Neither imports TensorFlow: a script that imports it after reading its flags
answers `--help` and a bad flag at once.

An exception that reaches `run` becomes that line: a `TowersError`'s message; a TensorFlow error
by its cause, an input pipeline's said to be the input's (TensorFlow's own message names the
file where it knows it); and last an `OSError` with the path it concerns, a full disk said so.
"""
import errno
import logging
import sys

from towers import console
from towers.errors import EXIT_ERROR, TowersError, UnsupportedEnvironmentError, tf_error_cause

# Ops through which a tf.data pipeline hands out its elements: their errors are the input's.
_INPUT_OPS = ('IteratorGetNext', 'IteratorGetNextSync', 'IteratorGetNextAsOptional')
# How a loss op reports a label that no reader checked (sparse softmax cross entropy).
_BAD_LABEL = 'Received a label value of'


def run(main, argv=None):
    """Runs `main(argv)` and exits with its status; user errors print one line, no traceback."""
    console.filter_native_logs()
    logging.basicConfig(level=logging.INFO, format='%(levelname)s %(name)s: %(message)s')
    # TensorFlow's Python logger (`tf.logging`): errors only, unless --verbose.
    logging.getLogger('tensorflow').setLevel(logging.ERROR)
    try:
        status = main(sys.argv[1:] if argv is None else argv)
    except Exception as err:  # noqa: BLE001 (re-raised unless the user can act on it)
        if not _user_error(err):
            raise
        print('error: %s' % describe(err), file=sys.stderr)
        status = EXIT_ERROR
    sys.exit(status or 0)


def _op_error_class():
    """`tf.errors.OpError` once TensorFlow is imported, else None (no op has run)."""
    tensorflow = sys.modules.get('tensorflow')
    return getattr(getattr(tensorflow, 'errors', None), 'OpError', None)


def _user_error(err):
    op_error = _op_error_class()
    return (isinstance(err, (TowersError, UnsupportedEnvironmentError, OSError))
            or (op_error is not None and isinstance(err, op_error)))


def describe(err):
    """The one line that tells the user what `err` means, without the 'error: ' prefix.

    Args:
      err: a `TowersError` (or `UnsupportedEnvironmentError`), a `tf.errors.OpError` or an
        `OSError`.
    """
    op_error = _op_error_class()
    if op_error is not None and isinstance(err, op_error):
        cause = tf_error_cause(err.message)
        where = err.op.name if err.op is not None else 'a session run'
        if err.op is not None and err.op.type in _INPUT_OPS:
            return 'reading the input data failed (in %s): %s' % (where, cause)
        if cause.startswith(_BAD_LABEL):
            return 'bad input data (in %s): %s; check the labels of the data set' % (where, cause)
        return 'TensorFlow failed in %s: %s' % (where, cause)
    if isinstance(err, OSError):
        path = ' -> '.join(str(name) for name in (err.filename, err.filename2) if name)
        if err.errno == errno.ENOSPC:
            return 'the disk is full: cannot write %s (%s)' % (path or 'a file', err.strerror)
        if path:
            return 'cannot use %s: %s' % (path, err.strerror or err)
        return str(err)
    return str(err)


