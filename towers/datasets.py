"""Naming the input an input pipeline failed on, when TensorFlow's message names none.

    with naming_failed_input(paths, lambda path: tf.io.decode_jpeg(tf.io.read_file(path)),
                             lambda err: 'jpeg' in err.message.lower(),
                             lambda path, cause: 'cannot decode image %s: %s' % (path, cause)):
        session.run(batch)      # a pipeline that decodes `paths` in parallel

A failure inside a `tf.data` map (a damaged JPEG, say) reaches the session as an
`InvalidArgumentError` saying what failed but not on which element. Only on that failure, the
same op is built alone and run on each input in turn until it fails again: a pass over the
inputs, paid only by a run that was stopping anyway.
"""
import contextlib
import logging

from towers.compat import tf
from towers.errors import TowersError, tf_error_cause

log = logging.getLogger(__name__)


def first_failing(values, build_fn):
    """The first of `values` on which `build_fn`'s op fails, and why.

    Args:
      values: the inputs, e.g. file paths (strings).
      build_fn: a function of a scalar string placeholder returning the tensor or op to run on
        each value; built once, in a graph of its own.

    Returns:
      (value, the cause's line of TensorFlow's message), or None when every value passes.
    """
    with tf.Graph().as_default():
        value = tf.placeholder(tf.string, [])
        fetch = build_fn(value)
        fetch = getattr(fetch, 'op', fetch)   # the op: no copy of the result to numpy
        with tf.Session() as session:
            for candidate in values:
                try:
                    session.run(fetch, {value: candidate})
                except tf.errors.InvalidArgumentError as err:
                    return candidate, tf_error_cause(err.message)
    return None


@contextlib.contextmanager
def naming_failed_input(values, build_fn, recognise, message):
    """Turns a pipeline's failure on one of `values` into a `TowersError` naming it.

    Args:
      values, build_fn: as for `first_failing`: the pipeline's inputs and the op that may fail
        on one of them.
      recognise: a function of the `InvalidArgumentError` raised in the block: whether it is
        that op's failure (other errors pass through).
      message: a function (value, cause) -> the error's text.

    Raises:
      TowersError: with `message` of the first value that fails; the original error when none
        does.
    """
    try:
        yield
    except tf.errors.InvalidArgumentError as err:
        if not recognise(err):
            raise
        log.info('an input failed inside the pipeline: running it alone on each of the %d '
                 'inputs to find which', len(values))
        found = first_failing(values, build_fn)
        if found is None:
            raise
        raise TowersError(message(*found)) from None
