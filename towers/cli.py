"""What every command-line script shares: common flags, logging, and clean failure."""
import argparse
import json
import logging
import sys

from towers.compat import UnsupportedEnvironmentError, tf
from towers.errors import TowersError

EXIT_ERROR = 1
EXIT_INTERRUPTED = 130


def _int_at_least(text, minimum):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError('expected a whole number, got %r' % text)
    if value < minimum:
        raise argparse.ArgumentTypeError('expected a number >= %d, got %d' % (minimum, value))
    return value


def positive_int(text):
    """argparse type: an integer >= 1."""
    return _int_at_least(text, 1)


def non_negative_int(text):
    """argparse type: an integer >= 0."""
    return _int_at_least(text, 0)


def positive_float(text):
    """argparse type: a number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError('expected a number, got %r' % text)
    if not value > 0:
        raise argparse.ArgumentTypeError('expected a number > 0, got %s' % text)
    return value


def read_json(path, flag):
    """Returns the JSON value in the file `path`, given with `flag`.

    Raises:
      TowersError: naming the flag and the file, when it cannot be read or is not JSON.
    """
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as err:
        raise TowersError('cannot read %s %s: %s' % (flag, path, err.strerror))
    except ValueError as err:
        raise TowersError('%s %s is not JSON: %s' % (flag, path, err))


def add_device_flags(parser):
    """Adds the tutorial's `--num_gpus` and `--log_device_placement`, and thread-pool sizes."""
    parser.add_argument('--num_gpus', type=positive_int, default=1,
                        help='How many towers (GPUs) to use. With fewer GPUs, GPUs are split '
                             'into logical GPUs; with none, virtual CPU devices are used.')
    parser.add_argument('--log_device_placement', action='store_true',
                        help='Whether to log device placement.')
    parser.add_argument('--intra_op_threads', type=int, default=0,
                        help='Threads inside one op; 0 lets TensorFlow choose.')
    parser.add_argument('--inter_op_threads', type=int, default=0,
                        help='Ops run at once; 0 lets TensorFlow choose.')


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
