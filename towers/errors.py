"""Errors that a user can act on: scripts print their message and exit non-zero, no traceback."""

# Exit statuses of the scripts: a user error, and an interrupt (128 + SIGINT, as shells report).
EXIT_ERROR = 1
EXIT_INTERRUPTED = 130


class TowersError(Exception):
    """Bad input, impossible flags or a failed run, with a message naming what is wrong."""


class LossDivergedError(TowersError):
    """The training loss became NaN or infinite."""

    def __init__(self, step, loss_value):
        super().__init__(
            'training diverged: the loss is %r at step %d; no checkpoint of that step was '
            'written (lower the learning rate or check the input data)' % (loss_value, step))
        self.step = step
        self.loss_value = loss_value
