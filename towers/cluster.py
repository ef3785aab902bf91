"""Training across machines on TensorFlow's distributed runtime: parameter servers and workers.

Between-graph replication as the TF1 distributed tutorials did it: every process runs a
`tf.distribute.Server` of one `ClusterSpec`; the parameter servers (job 'ps') hold the
variables; each worker builds the whole graph itself, its towers on its own devices, averages
their gradients locally and sends them to the parameter servers. With `--sync_replicas` (the
default) a `SyncReplicasOptimizer` aggregates one update per step from all workers; without it,
each worker applies its own updates (asynchronous training).

A training script hands its work to `run_task`, which plays this process's role:

    def work(role, setup):                 # setup: this process's devices (a DeviceSetup)
        return towers.fit(recipe, input_fn, setup, role, ...)   # a TrainResult
    return cluster.run_task(args, work)    # args parsed with towers.flags.add_cluster_flags

Without cluster flags the role is a `SingleProcess`, whose members reproduce the single-process
behaviour, so the same lines serve both.

Shutdown: a parameter server serves until every worker has called `finish`, then returns, so
no process has to be killed at the end. Each worker's `finish` enqueues its task index on a
queue that lives on each parameter server (TensorFlow's own queues, no other channel).
"""
import logging
import threading

from towers import flags
from towers.compat import tf
from towers.devices import DeviceSetup, VariablePlacement, configure_devices
from towers.errors import EXIT_INTERRUPTED, TowersError
from towers.hooks import CloseSessionOnStopHook

log = logging.getLogger(__name__)

PS_JOB = flags.PS_JOB
WORKER_JOB = flags.WORKER_JOB


def from_flags(args):
    """The role of this process from the flags of `add_cluster_flags`.

    Args:
      args: the parsed flags.

    Returns:
      `SingleProcess` without --job_name, else a `ParameterServer` or a `Worker`.

    Raises:
      TowersError: the flags do not describe a cluster this process can be part of.
    """
    if args.job_name is None:
        if args.ps_hosts or args.worker_hosts:
            raise TowersError('--ps_hosts/--worker_hosts given without --job_name; give '
                              '--job_name ps or --job_name worker (and --task_index)')
        return SingleProcess()
    if not args.ps_hosts:
        raise TowersError('--job_name %s needs --ps_hosts: the variables live on the parameter '
                          'servers, so give at least one host:port' % args.job_name)
    if not args.worker_hosts:
        raise TowersError('--job_name %s needs --worker_hosts: give the host:port of every '
                          'worker' % args.job_name)
    hosts = args.ps_hosts + args.worker_hosts
    repeated = sorted({h for h in hosts if hosts.count(h) > 1})
    if repeated:
        raise TowersError('%s appear(s) more than once in --ps_hosts/--worker_hosts; every '
                          'task needs its own host:port' % ', '.join(repeated))
    tasks = args.ps_hosts if args.job_name == PS_JOB else args.worker_hosts
    if args.task_index >= len(tasks):
        raise TowersError('--task_index %d, but --%s_hosts lists %d %s task(s) (indices 0..%d)'
                          % (args.task_index, args.job_name, len(tasks), args.job_name,
                             len(tasks) - 1))
    spec = tf.train.ClusterSpec({PS_JOB: args.ps_hosts, WORKER_JOB: args.worker_hosts})
    if args.job_name == PS_JOB:
        return ParameterServer(spec, args.task_index)
    return Worker(spec, args.task_index, args.sync_replicas)


def _start_server(spec, job_name, task_index, config):
    address = spec.task_address(job_name, task_index)
    try:
        return tf.distribute.Server(spec, job_name=job_name, task_index=task_index,
                                    config=config, start=True)
    except (tf.errors.OpError, ValueError) as err:
        raise TowersError('could not start the server of %s task %d on %s: %s'
                          % (job_name, task_index, address, err)) from err


def _done_queue(ps_task):
    """The queue on parameter server `ps_task` where each worker puts its index when done."""
    with tf.device('/job:%s/task:%d' % (PS_JOB, ps_task)):
        return tf.FIFOQueue(-1, tf.int32, shapes=[], name='workers_done',
                            shared_name='towers_workers_done')


class SingleProcess:
    """The role of a process that trains alone: every member keeps single-process behaviour."""
    is_ps = False
    is_chief = True
    master = ''
    hooks = ()
    task_index = 0
    num_workers = 1
    replicas_to_aggregate = 1

    @staticmethod
    def configure_devices(num_gpus, log_device_placement=False, **kwargs):
        """`towers.configure_devices`."""
        return configure_devices(num_gpus, log_device_placement, **kwargs)

    @staticmethod
    def wrap_optimizer(optimizer):
        """Returns `optimizer` itself."""
        return optimizer

    @staticmethod
    def once_per_step(ops):
        """Returns `ops`: one process makes every update."""
        return list(ops)

    def finish(self):
        """Nothing to tell anyone."""


class ParameterServer:
    """A parameter server task: holds variables for the workers until they have all finished.

    Attributes:
      task_index: its index in the 'ps' job.
      num_workers: workers it waits for.
    """
    is_ps = True

    def __init__(self, spec, task_index):
        self._spec = spec
        self.task_index = task_index
        self.num_workers = spec.num_tasks(WORKER_JOB)

    def serve(self):
        """Serves until every worker has called `Worker.finish` (or Ctrl-C).

        Returns:
          The exit status: 0, or `EXIT_INTERRUPTED` after Ctrl-C.
        """
        device = '/job:%s/task:%d' % (PS_JOB, self.task_index)
        config = tf.ConfigProto(device_filters=[device])
        server = _start_server(self._spec, PS_JOB, self.task_index, config)
        log.info('ps %d at %s: serving the variables until %d worker(s) finish',
                 self.task_index, self._spec.task_address(PS_JOB, self.task_index),
                 self.num_workers)
        with tf.Graph().as_default():
            done = _done_queue(self.task_index).dequeue()
            with tf.Session(server.target, config=config) as sess:
                # A run blocked in TensorFlow does not see Ctrl-C; waiting for it from another
                # thread keeps the main thread free to take the interrupt.
                errors = []
                waiter = threading.Thread(target=self._wait_for_workers,
                                          args=(sess, done, errors), name='ps_wait_for_workers')
                waiter.start()
                try:
                    waiter.join()
                except KeyboardInterrupt:
                    log.warning('ps %d interrupted before all workers finished',
                                self.task_index)
                    # Closing the session cancels the blocked run; the thread must have left
                    # TensorFlow before the interpreter shuts down, or the process aborts.
                    sess.close()
                    waiter.join()
                    return EXIT_INTERRUPTED
        if errors:
            raise errors[0]
        log.info('ps %d: all %d worker(s) finished', self.task_index, self.num_workers)
        return 0

    def _wait_for_workers(self, sess, done, errors):
        finished = set()
        try:
            while len(finished) < self.num_workers:
                finished.add(int(sess.run(done)))
        except tf.errors.CancelledError:
            pass  # the main thread closed the session after Ctrl-C
        except tf.errors.OpError as err:
            errors.append(err)


class Worker:
    """A worker task: builds the graph with its towers on its own devices.

    Attributes:
      task_index: its index in the 'worker' job; worker 0 is the chief, which initialises or
        restores the variables and writes checkpoints and summaries.
      num_workers: workers in the cluster.
      num_ps: parameter servers in the cluster.
      sync: whether one update per step aggregates every worker's gradients.
      replicas_to_aggregate: workers whose gradients make one update: all of them when
        `sync`, else 1. Multiply the towers (and examples) of one update by it.
    """
    is_ps = False

    def __init__(self, spec, task_index, sync):
        self._spec = spec
        self.task_index = task_index
        self.num_workers = spec.num_tasks(WORKER_JOB)
        self.num_ps = spec.num_tasks(PS_JOB)
        self.sync = sync
        self.replicas_to_aggregate = self.num_workers if sync else 1
        self.device = '/job:%s/task:%d' % (WORKER_JOB, task_index)
        self._placement = VariablePlacement(self.num_ps, self.device)
        self._server = None
        self._config = None
        self._optimizer = None

    @property
    def is_chief(self):
        return self.task_index == 0

    @property
    def master(self):
        """The session target: this worker's own server."""
        if self._server is None:
            raise TowersError('worker %d has no server yet: call configure_devices first'
                              % self.task_index)
        return self._server.target

    def configure_devices(self, num_gpus, log_device_placement=False, **kwargs):
        """Starts this worker's server with `num_gpus` tower devices, as `towers.configure_devices`.

        Args:
          num_gpus, log_device_placement, kwargs: as `towers.configure_devices`.

        Returns:
          A `DeviceSetup`: tower devices '/job:worker/task:<i>/<gpu or cpu>:<k>', `ps_device`
          the `VariablePlacement` (a device function), and the session config, which also
          keeps this worker from waiting for the other workers.
        """
        local = configure_devices(num_gpus, log_device_placement, ps_device=self._placement,
                                  **kwargs)
        config = local.config
        config.device_filters.extend(['/job:%s' % PS_JOB, self.device])
        # The server creates the devices, so the virtual CPUs or logical GPUs of `config`
        # must be in the server's config.
        self._server = _start_server(self._spec, WORKER_JOB, self.task_index, config)
        self._config = config
        description = ('worker %d of %d at %s (%s), %d parameter server(s), %s updates'
                       % (self.task_index, self.num_workers,
                          self._spec.task_address(WORKER_JOB, self.task_index),
                          'chief' if self.is_chief else 'not chief', self.num_ps,
                          'synchronous' if self.sync else 'asynchronous'))
        log.info('cluster: %s', description)
        return DeviceSetup([self.device + d for d in local.tower_devices], self._placement,
                           config, '%s; %s' % (description, local.description))

    def wrap_optimizer(self, optimizer):
        """Returns the optimizer that makes the updates of this worker.

        Args:
          optimizer: a `tf.train.Optimizer`.

        Returns:
          With `sync`, a `tf.train.SyncReplicasOptimizer` around `optimizer` that waits for
          the gradients of every worker and applies their mean once per step; else `optimizer`.
          A SyncReplicasOptimizer makes one train op (one `apply_gradients`), and `hooks`
          serve the last one made: build only the train op that `towers.train` runs.
        """
        if self.sync:
            self._optimizer = tf.train.SyncReplicasOptimizer(
                optimizer, replicas_to_aggregate=self.num_workers,
                total_num_replicas=self.num_workers)
        return optimizer if self._optimizer is None else self._optimizer

    def once_per_step(self, ops):
        """Returns which of `ops`, ops that must run once per global step (e.g. the moving
        averages of the weights), belong in this worker's train op.

        Asynchronous workers each make their own updates, so each runs them. Synchronous
        workers all run every step, so only the chief does.
        """
        return list(ops) if self.is_chief or not self.sync else []

    @property
    def hooks(self):
        """The session hooks `towers.train` must run on this worker."""
        if not self.sync:
            return []
        if self._optimizer is None:
            raise TowersError('--sync_replicas needs the optimizer from wrap_optimizer; pass '
                              'the optimizer through Worker.wrap_optimizer before training')
        # No tokens up front: each worker may start step s+1 only once the update of step s
        # is made, so every update holds exactly one gradient from each worker.
        hooks = [self._optimizer.make_session_run_hook(self.is_chief, num_tokens=0)]
        if self.is_chief:
            hooks.append(CloseSessionOnStopHook())
        return hooks

    def finish(self):
        """Tells every parameter server that this worker is done; call after training."""
        with tf.Graph().as_default():
            signals = [_done_queue(i).enqueue(self.task_index) for i in range(self.num_ps)]
            with tf.Session(self.master, config=self._config) as sess:
                sess.run(signals)
        log.info('worker %d finished', self.task_index)


def run_task(args, work):
    """Plays this process's part in training, as the cluster flags say.

    A parameter server serves the variables until every worker is done. A worker (or a
    process training alone) starts with the devices of `--num_gpus`, `--log_device_placement`,
    `--intra_op_threads` and `--inter_op_threads`, calls `work(role, setup)`, and, unless
    training was interrupted, tells the parameter servers that it has finished.

    Args:
      args: flags parsed with `towers.flags.add_device_flags` and `add_cluster_flags`.
      work: a function (role, `DeviceSetup`) -> `TrainResult` of the last training run (with
        `interrupted`); it builds the graph on `setup` and trains it with the role's `master`,
        `is_chief`, `hooks`, `wrap_optimizer` and `once_per_step`, as `towers.fit` does.

    Returns:
      The process's exit status: 0, or `EXIT_INTERRUPTED` after Ctrl-C.
    """
    role = from_flags(args)
    if role.is_ps:
        return role.serve()
    setup = role.configure_devices(args.num_gpus, args.log_device_placement,
                                   intra_op_threads=args.intra_op_threads,
                                   inter_op_threads=args.inter_op_threads)
    if work(role, setup).interrupted:
        return EXIT_INTERRUPTED
    role.finish()
    return 0
