"""`horovod.tensorflow`'s functions that are not collectives: the job's shape and how this
Horovod was built (here: on TensorFlow's collectives over its gRPC runtime, without MPI, Gloo,
NCCL or CUDA of its own)."""
from towers.compat import tf
from towers.legacy.horovod import ranks


def init(comm=None, process_sets=None):
    """Horovod's `hvd.init()` (`comm` and `process_sets` accepted, for one global set)."""
    ranks.init()


def shutdown():
    ranks.shutdown()


def is_initialized():
    return ranks.is_initialized()


def size():
    return ranks.world().size


def rank():
    return ranks.world().rank


def local_size():
    return ranks.world().local_size


def local_rank():
    return ranks.world().local_rank


def cross_size():
    return ranks.world().cross_size


def cross_rank():
    return ranks.world().cross_rank


def is_homogeneous():
    """Whether every host runs as many ranks (the launcher starts them so)."""
    world = ranks.world()
    return world.size == world.local_size * world.cross_size


def size_op(process_set_id=0, name=None):
    return tf.constant(size(), name=name)


def local_size_op(name=None):
    return tf.constant(local_size(), name=name)


def rank_op(name=None):
    return tf.constant(rank(), name=name)


def local_rank_op(name=None):
    return tf.constant(local_rank(), name=name)


def _enabled(answer):
    def enabled():
        ranks.world()
        return answer
    return enabled


def _built(answer):
    def built(verbose=False):
        return answer
    return built


mpi_threads_supported = _enabled(False)
mpi_enabled = _enabled(False)
gloo_enabled = _enabled(False)
mpi_built = _built(False)
gloo_built = _built(False)
nccl_built = _built(0)
ddl_built = _built(False)
ccl_built = _built(False)
cuda_built = _built(False)
rocm_built = _built(False)
