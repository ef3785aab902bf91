"""The ranks of a Horovod job under the runner: who this process is, and its server.

A rank is one process (`towers.legacy.horovod.launch` starts them). Its place in the job
comes in the environment, in Horovod's own variables, which its launchers set too:
`HOROVOD_RANK`, `HOROVOD_SIZE`, `HOROVOD_LOCAL_RANK`, `HOROVOD_LOCAL_SIZE`,
`HOROVOD_CROSS_RANK`, `HOROVOD_CROSS_SIZE`, and the runner's `TOWERS_HOROVOD_ADDRESSES` (every
rank's host:port, in rank order) and `TOWERS_HOROVOD_TIMEOUT` (seconds a collective may wait for
its peers). A process without them is a job of one rank, as a Horovod program started with
plain `python` was.

`init()` starts this rank's `tf.distribute.Server` (job 'worker', task = rank) and waits until
every rank's server listens. From then on every session the program makes without a target
(`tf.Session()`, and through it `MonitoredTrainingSession` and the Estimator) runs on that
server: the collective ops of `towers.legacy.horovod.collectives` reach the other ranks through
it, with rank 0's task as the group leader. Each session's config gains what that needs (the
leader, a device filter to this rank's own task, session state kept apart as in a local
session) and, where the program sets none, thread pools of this rank's share of the machine's
cores and, on a machine with GPUs, the GPU of its local rank.
"""
import os
import socket
import time

from towers.errors import TowersError

ADDRESSES = 'TOWERS_HOROVOD_ADDRESSES'
TIMEOUT = 'TOWERS_HOROVOD_TIMEOUT'
SHARE_GPUS = 'TOWERS_HOROVOD_SHARE_GPUS'
JOB = 'worker'
# Horovod's variables for a rank's place, in the order of `World`'s fields after `rank`.
PLACES = ('RANK', 'SIZE', 'LOCAL_RANK', 'LOCAL_SIZE', 'CROSS_RANK', 'CROSS_SIZE')
DEFAULT_TIMEOUT = 300.0
# How long `init` waits for every rank's server to listen.
START_TIMEOUT = 120.0
NOT_INITIALIZED = 'Horovod has not been initialized; use hvd.init().'


class World:
    """This process's place in the job.

    Attributes:
      rank, size, local_rank, local_size, cross_rank, cross_size: as Horovod's functions
        of those names give them.
      addresses: host:port of every rank's server, in rank order (empty for one rank).
      timeout: seconds a collective waits for its peers before it fails (0: forever).
    """

    def __init__(self, rank=0, size=1, local_rank=0, local_size=1, cross_rank=0,
                 cross_size=1, addresses=(), timeout=DEFAULT_TIMEOUT):
        self.rank, self.size = rank, size
        self.local_rank, self.local_size = local_rank, local_size
        self.cross_rank, self.cross_size = cross_rank, cross_size
        self.addresses = list(addresses)
        self.timeout = timeout

    def environment(self):
        """The variables that make a process this rank (`from_environment` reads them)."""
        values = [self.rank, self.size, self.local_rank, self.local_size, self.cross_rank,
                  self.cross_size]
        env = {'HOROVOD_' + name: str(value) for name, value in zip(PLACES, values)}
        # Open MPI's names, which some programs read before hvd.init() to pick their GPU.
        env.update({'OMPI_COMM_WORLD_RANK': str(self.rank),
                    'OMPI_COMM_WORLD_SIZE': str(self.size),
                    'OMPI_COMM_WORLD_LOCAL_RANK': str(self.local_rank),
                    'OMPI_COMM_WORLD_LOCAL_SIZE': str(self.local_size),
                    ADDRESSES: ','.join(self.addresses), TIMEOUT: repr(self.timeout)})
        return env

    @property
    def task(self):
        """This rank's task in the cluster, e.g. '/job:worker/replica:0/task:1'."""
        return '/job:%s/replica:0/task:%d' % (JOB, self.rank)


def from_environment(environ=None):
    """The `World` the environment describes; one rank when it describes none.

    Raises:
      TowersError: the variables are there but inconsistent.
    """
    environ = os.environ if environ is None else environ
    if ADDRESSES not in environ:
        return World()
    try:
        values = [int(environ['HOROVOD_' + name]) for name in PLACES]
        timeout = float(environ.get(TIMEOUT, DEFAULT_TIMEOUT))
    except (KeyError, ValueError) as err:
        raise TowersError('%s is set, but HOROVOD_%s is not a number: every rank needs '
                          'HOROVOD_RANK, _SIZE, _LOCAL_RANK, _LOCAL_SIZE, _CROSS_RANK, '
                          '_CROSS_SIZE' % (ADDRESSES, str(err).strip("'"))) from None
    world = World(*values, addresses=environ[ADDRESSES].split(','), timeout=timeout)
    if len(world.addresses) != world.size or not 0 <= world.rank < world.size:
        raise TowersError('%s names %d ranks, but HOROVOD_SIZE is %d and HOROVOD_RANK %d'
                          % (ADDRESSES, len(world.addresses), world.size, world.rank))
    return world


class _State:
    """What `init` made: the world, and this rank's server (None for a job of one rank)."""
    world = None
    server = None
    initialized = False


def init():
    """Horovod's `init()`: reads this rank's place and, in a job of several ranks, starts its
    server (once) and waits until every rank's server listens.

    Raises:
      TowersError: a rank's server did not listen within `START_TIMEOUT` seconds.
    """
    if _State.world is None:
        _State.world = from_environment()
    world = _State.world
    if world.size > 1 and _State.server is None:
        from towers.compat import tf
        check_devices(world, len(tf.config.list_physical_devices('GPU')))
        _State.server = tf.distribute.Server(
            tf.train.ClusterSpec({JOB: world.addresses}), job_name=JOB,
            task_index=world.rank, config=server_config(world), start=True)
        _wait_for_ranks(world)
    _State.initialized = True


def server_config(world):
    """The config of this rank's server: `session_config`'s, with the transport tuned for
    collectives as TensorFlow's own DTensor tunes its servers: a collective's buffer travels
    in one piece rather than in 4 KiB pieces, over 4 channels to each peer. Measured here
    (docs/horovod.md, Speed): a 4 MiB allreduce of 2 ranks 16 ms instead of 19."""
    config = session_config(None, world)
    config.experimental.recv_buf_max_chunk = -1
    config.rpc_options.num_channels_per_target = 4
    return config


def check_devices(world, num_gpus, environ=None):
    """Refuses more ranks on this host than it has GPUs (two ranks would share one), unless
    the launch asked for it (`--share_gpus`); a host without GPUs runs each rank on the CPU.

    Raises:
      TowersError: naming the ranks, the GPUs and what to do.
    """
    environ = os.environ if environ is None else environ
    if num_gpus and world.local_size > num_gpus and environ.get(SHARE_GPUS) != '1':
        raise TowersError('rank %d: %d ranks on this host but %d GPUs: two ranks would share '
                          'a GPU; start at most %d ranks per host, or give the launch '
                          '--share_gpus' % (world.rank, world.local_size, num_gpus, num_gpus))


def shutdown():
    """Horovod's `shutdown()`: later collectives and queries need `init()` again."""
    _State.initialized = False


def is_initialized():
    return _State.initialized


def world():
    """The `World` of an initialised process.

    Raises:
      ValueError: `init()` was not called, with Horovod's message.
    """
    if not _State.initialized:
        raise ValueError(NOT_INITIALIZED)
    return _State.world


def server_target():
    """The target of this rank's server, or None without one."""
    return _State.server.target if _State.server is not None else None


def _wait_for_ranks(world):
    deadline = time.monotonic() + START_TIMEOUT
    for rank, address in enumerate(world.addresses):
        host, port = address.rsplit(':', 1)
        while True:
            try:
                socket.create_connection((host, int(port)), timeout=1.0).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise TowersError('rank %d: hvd.init(): rank %d (%s) did not start within '
                                      '%.0f s' % (world.rank, rank, address, START_TIMEOUT))
                time.sleep(0.1)


def session_config(config, world):
    """A copy of a session's config (a `tf.ConfigProto` or None) for this rank: rank 0's task
    leads the collectives, the session sees its own task's devices only and keeps its state
    apart from other sessions (as a local session does); thread pools of this rank's share of
    the cores and, with GPUs, the GPU of its local rank, unless `config` sets them."""
    from towers.compat import tf
    merged = tf.ConfigProto()
    if config is not None:
        merged.CopyFrom(config)
    merged.experimental.collective_group_leader = '/job:%s/replica:0/task:0' % JOB
    del merged.device_filters[:]
    merged.device_filters.append('/job:%s/task:%d' % (JOB, world.rank))
    merged.isolate_session_state = True
    share = max(1, len(os.sched_getaffinity(0)) // world.local_size)
    if not merged.intra_op_parallelism_threads:
        merged.intra_op_parallelism_threads = share
    if not merged.inter_op_parallelism_threads:
        merged.inter_op_parallelism_threads = share
    gpus = len(tf.config.list_physical_devices('GPU'))
    if not merged.gpu_options.visible_device_list and gpus:
        merged.gpu_options.visible_device_list = str(world.local_rank % gpus)
    return merged


def install_sessions():
    """Makes every session made without a target after `init()` a session of this rank's
    server, with `session_config`; sessions made before, or with a target, are left as they
    are. Patches `tf.Session` and `tf.InteractiveSession` for the rest of the process."""
    from towers.compat import tf
    for session_class in (tf.Session, tf.InteractiveSession):
        session_class.__init__ = _on_server(session_class.__init__)


def _on_server(init_session):
    def session_init(session, target='', graph=None, config=None):
        if not target and _State.server is not None:
            target, config = _State.server.target, session_config(config, _State.world)
        init_session(session, target, graph, config)
    return session_init
