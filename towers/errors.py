"""Errors that a user can act on: scripts print their message and exit non-zero, no traceback."""

# Exit statuses of the scripts: a user error, and an interrupt (128 + SIGINT, as shells report).
EXIT_ERROR = 1
EXIT_INTERRUPTED = 130


class TowersError(Exception):
    """Bad input, impossible flags or a failed run, with a message naming what is wrong."""


class UnsupportedEnvironmentError(ImportError):
    """The installed TensorFlow, tf-keras or tf-slim cannot run this project (raised by
    `towers.compat` on import)."""


def tf_error_cause(message):
    """The line of a TensorFlow error message that says what went wrong.

    A graph-mode message starts 'Graph execution error:', then where the failing op was
    defined, then "Node: '<op>'", and only then the cause (e.g. 'Received a label value of 200
    which is outside the valid range of [0, 10).'), then the node again and a stack trace.

    Args:
      message: the message of a `tf.errors.OpError`.

    Returns:
      The cause's line; without a "Node:" line, the first line that is not that preamble.
    """
    lines = [line.strip() for line in message.split('\n')]
    for index, line in enumerate(lines[:-1]):
        if line.startswith("Node: '"):
            # The distributed runtime names the task the error came from first.
            rest = [later for later in lines[index + 1:] if not later.startswith('From /job:')]
            return rest[0] if rest else lines[index + 1]
    return next((line for line in lines if line and line != 'Graph execution error:'), message)


class LossDivergedError(TowersError):
    """The training loss (of the model `name`, among models trained side by side) became NaN
    or infinite."""

    def __init__(self, step, loss_value, name=None):
        super().__init__(
            'training diverged: the loss%s is %r at step %d; no checkpoint of that step was '
            'written (lower the learning rate or check the input data)'
            % ('' if name is None else ' of ' + name, loss_value, step))
        self.step = step
        self.loss_value = loss_value
        self.name = name
