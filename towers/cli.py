"""How every command-line script runs: logging, and clean failure (one `error:` line, no
traceback). Flags are in `towers.flags`."""
import logging
import sys

from towers.compat import UnsupportedEnvironmentError, tf
from towers.errors import EXIT_ERROR, TowersError


def run(main, argv=None):
    """Runs `main(argv)` and exits with its status; user errors print one line, no traceback."""
    logging.basicConfig(level=logging.INFO, format='%(levelname)s %(name)s: %(message)s')
    tf.logging.set_verbosity(tf.logging.ERROR)
    try:
        status = main(sys.argv[1:] if argv is None else argv)
    except (TowersError, UnsupportedEnvironmentError) as err:
        print('error: %s' % err, file=sys.stderr)
        status = EXIT_ERROR
    except tf.errors.OpError as err:
        print('error: TensorFlow failed in %s: %s' % (err.op.name if err.op else 'a session run',
                                                     err.message.split('\n')[0]),
              file=sys.stderr)
        status = EXIT_ERROR
    sys.exit(status or 0)
