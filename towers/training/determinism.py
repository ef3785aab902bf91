"""Bit-reproducible training: op determinism, one seed, the input's position in checkpoints.

`towers.fit(..., seed=N, deterministic=True)` (a training script's `--deterministic --seed N`)
trains so that the same command twice writes the same checkpoints, byte for byte, and a run
stopped (SIGTERM, or `max_steps` reached) and resumed ends with the variables of one run never
interrupted:

- `op_determinism`: TensorFlow's op determinism while the training runs (deterministic
  kernels; tf.data keeps its order);
- `graph_seed`: the seed of the training's graph (`tf.set_random_seed`), from which the initial
  weights and every random op take theirs, and the data sets their shuffles and augmentations
  (`towers.datasets.input_seed`);
- `Saver`: every checkpoint holds the training input's position besides the variables (the
  iterator of `towers.datasets.training_batches`), so a resumed run reads on from there.
"""
import contextlib
import logging

from towers import compat
from towers.compat import tf

log = logging.getLogger(__name__)

# The seed of a deterministic training given none.
DEFAULT_SEED = 0

_announced = []


def enable_op_determinism():
    """Turns TensorFlow's op determinism on for the process; the first time, one log line says
    so. Build the graphs after: some ops choose their kernel as they are built."""
    if not _announced:
        log.info('op determinism on: every op runs its deterministic kernel and every input '
                 'pipeline keeps its order, in this process')
        _announced.append(True)
    compat.set_op_determinism(True)


@contextlib.contextmanager
def op_determinism(enabled=True):
    """TensorFlow's op determinism, when `enabled`, while the block runs; then as before.

    It is process-wide: set before the block builds its graph, it governs every op the block
    builds and runs.
    """
    if not enabled or compat.op_determinism_enabled():
        yield
        return
    enable_op_determinism()
    try:
        yield
    finally:
        compat.set_op_determinism(False)


def graph_seed(seed, deterministic, task_index=0):
    """The seed of a training's graph.

    Args:
      seed: the seed asked for, or None.
      deterministic: whether the training is deterministic: it then needs a seed, by default
        `DEFAULT_SEED`.
      task_index: the worker's index in a cluster, added to the seed so that the workers,
        whose inputs derive their seeds from it, read different batches (0: the chief, or a
        process training alone).

    Returns:
      An int, or None: no seed, each run draws its own.
    """
    if seed is None and deterministic:
        seed = DEFAULT_SEED
    return None if seed is None else seed + task_index


class Saver(tf.train.Saver):
    """A saver of the global variables and of the training input's position: the iterators
    that `towers.datasets.training_batches` registered in the default graph's
    `SAVEABLE_OBJECTS`.

    It restores a checkpoint that holds no position (one written without determinism) as the
    variables alone, saying in one line that the input starts from its beginning; the
    checkpoints it writes restore into any saver of the variables, which reads no more than
    it needs.
    """

    def __init__(self, max_to_keep=5):
        """Args:
          max_to_keep: the newest checkpoints kept, as `tf.train.Saver` keeps them.
        """
        variables = tf.global_variables()
        self._positions = tf.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS)
        if not self._positions:
            log.warning('the training input registers no position (towers.datasets.'
                        'training_batches): a resumed run reads its input from the beginning')
        super().__init__(variables + self._positions, max_to_keep=max_to_keep)
        self._variables_alone = tf.train.Saver(variables)

    def restore(self, sess, save_path):
        stored = tf.train.NewCheckpointReader(save_path).get_variable_to_shape_map()
        if all(spec.name in stored for position in self._positions
               for spec in position.specs):
            return super().restore(sess, save_path)
        log.warning('%s holds no input position (written without determinism): the input '
                    'starts from its beginning', save_path)
        return self._variables_alone.restore(sess, save_path)
