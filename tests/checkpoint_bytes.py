"""Comparing checkpoints byte for byte, for the tests of bit-reproducible training."""
from towers.compat import tf


def tensors(prefix):
    """Every tensor of checkpoint `prefix` but the training input's position: name -> numpy.

    The position (a variant, `towers.datasets.training_batches`) is left out: it holds the
    prefetch buffers as far as they had filled when the checkpoint was written, which timing
    decides, so two runs at one position may write it differently. That it resumes the same
    batches is what the tests of resumed runs check.
    """
    reader = tf.train.load_checkpoint(prefix)
    return {name: reader.get_tensor(name)
            for name, dtype in reader.get_variable_to_dtype_map().items()
            if dtype != tf.variant}


def differing(prefix, other):
    """The names of the tensors that two checkpoints do not hold alike: in one only, or of
    another dtype, shape or bytes (so NaNs in the same places, as a diverging tiny run may
    leave, compare equal)."""
    first, second = tensors(prefix), tensors(other)
    return sorted(name for name in set(first) | set(second)
                  if name not in first or name not in second
                  or first[name].dtype != second[name].dtype
                  or first[name].shape != second[name].shape
                  or first[name].tobytes() != second[name].tobytes())
