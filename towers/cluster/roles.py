"""The roles of a training process: alone, a parameter server, or a worker of a cluster.

Each role offers the members `towers.fit` and `towers.cluster.run_task` use (`is_ps`,
`is_chief`, `master`, `hooks`, `configure_devices`, `wrap_optimizer`, `once_per_step`,
`watch_parameter_servers`, `finish`), so the same training code serves every role.
"""
import contextlib
import logging
import threading
import time

from towers import flags
from towers.cluster import isolation
from towers.cluster.ps_watch import ParameterServerWatch
from towers.compat import tf
from towers.devices import DeviceSetup, VariablePlacement, configure_devices
from towers.errors import TowersError
from towers.training.stopping import CloseSessionOnStopHook

log = logging.getLogger(__name__)

PS_JOB = flags.PS_JOB
WORKER_JOB = flags.WORKER_JOB
# Aborted runs in a row after which a parameter server takes the error for a real one.
ABORTED_RETRIES = 3


def _start_server(spec, job_name, task_index, config):
    """Starts this task's `tf.distribute.Server` and logs who can reach it."""
    address = spec.task_address(job_name, task_index)
    try:
        server = tf.distribute.Server(spec, job_name=job_name, task_index=task_index,
                                      config=config, start=True)
    except (tf.errors.OpError, ValueError) as err:
        raise TowersError('could not start the server of %s task %d on %s: %s'
                          % (job_name, task_index, address, err)) from err
    _log_reach(job_name, task_index, address)
    return server


def _log_reach(job_name, task_index, address):
    """Logs where the server of a task listens: TensorFlow's binds every interface whatever
    `address` names, and runs any op for whoever connects."""
    port = int(address.rsplit(':', 1)[1])
    listening = ', '.join(isolation.listening_addresses(port)) or '*:%d' % port
    if isolation.loopback_only():
        log.info('%s %d listens on %s in a network whose only interface is loopback: reachable '
                 'only by processes inside it', job_name, task_index, listening)
    else:
        log.warning('%s %d listens on %s, every network interface (the cluster names %s), and '
                    'is reachable from the network: anyone who can reach this machine on port '
                    '%d can run any op in this process as %s; see docs/security.md',
                    job_name, task_index, listening, address, port, isolation.user_name())


def _done_queue(ps_task):
    """The queue on parameter server `ps_task` where each worker reports its end: its index
    when it finished training, -1 - its index when it stopped on a signal."""
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

    @staticmethod
    def watch_parameter_servers(timeout_secs):
        """No parameter server to watch: a context that does nothing."""
        return contextlib.nullcontext()

    def finish(self, stopped=False):
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

    def serve(self, stop):
        """Serves until every worker has called `Worker.finish`, or until a stop.

        Args:
          stop: the process's `towers.training.preemption.StopRequest`. Once it is requested, serving
            goes on until every worker has reported its end (finished or stopped: a stopping
            chief is still saving its last checkpoint from here), for at most twice its
            `grace_secs`.

        Returns:
          The exit status: 0, or `stop.exit_status` after a stop.
        """
        device = '/job:%s/task:%d' % (PS_JOB, self.task_index)
        config = tf.ConfigProto(device_filters=[device])
        server = _start_server(self._spec, PS_JOB, self.task_index, config)
        log.info('ps %d at %s: serving the variables until %d worker(s) finish',
                 self.task_index, self._spec.task_address(PS_JOB, self.task_index),
                 self.num_workers)
        ends = {}  # worker -> 'finished' or 'stopped'
        errors = []
        changed = threading.Condition()
        closing = threading.Event()
        with tf.Graph().as_default():
            done = _done_queue(self.task_index).dequeue()
            with tf.Session(server.target, config=config) as sess:
                # A run blocked in TensorFlow does not see signals; waiting for it in another
                # thread keeps this one free to react to a stop.
                waiter = threading.Thread(target=self._collect_ends,
                                          args=(sess, done, ends, errors, changed, closing),
                                          name='ps_wait_for_workers')
                waiter.start()
                unregister = stop.on_request(lambda: _notify(changed))
                try:
                    self._wait(stop, ends, errors, changed)
                finally:
                    unregister()
                    # Closing the session cancels the blocked run; the thread must have left
                    # TensorFlow before the interpreter shuts down, or the process aborts.
                    closing.set()
                    sess.close()
                    waiter.join()
        if errors:
            raise errors[0]
        if stop.requested:
            missing = sorted(set(range(self.num_workers)) - set(ends))
            log.warning('ps %d stopped by %s; %s', self.task_index, stop.signal_name,
                        'worker(s) %s did not report' % ', '.join(map(str, missing))
                        if missing else 'every worker had stopped or finished')
            return stop.exit_status
        log.info('ps %d: all %d worker(s) finished', self.task_index, self.num_workers)
        return 0

    def _wait(self, stop, ends, errors, changed):
        """Returns once every worker finished, or after a stop as `serve` says."""
        deadline = None
        with changed:
            while not errors:
                if len(ends) == self.num_workers and (
                        stop.requested or set(ends.values()) == {'finished'}):
                    return
                if stop.requested:
                    if deadline is None:
                        deadline = time.monotonic() + 2 * stop.grace_secs
                    if not changed.wait(deadline - time.monotonic()):
                        return
                else:
                    changed.wait()

    def _collect_ends(self, sess, done, ends, errors, changed, closing):
        aborted = 0
        while True:
            try:
                worker = int(sess.run(done))
            except tf.errors.OpError as err:
                if closing.is_set():
                    return  # serve closed the session
                aborted = aborted + 1 if isinstance(err, tf.errors.AbortedError) else 0
                if 0 < aborted <= ABORTED_RETRIES:
                    # A worker's session cleaning up its steps here can abort this run; the
                    # reports stay in the queue.
                    continue
                with changed:
                    errors.append(err)
                    changed.notify_all()
                return
            aborted = 0
            with changed:
                if worker >= 0:
                    ends[worker] = 'finished'
                else:
                    ends[-1 - worker] = 'stopped'
                changed.notify_all()


def _notify(condition):
    with condition:
        condition.notify_all()


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
        self._watch = None

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
        """The session hooks `towers.train` must run on this worker: the synchronous
        replicas' hooks, and the one telling the parameter-server watch (inside
        `watch_parameter_servers`) that the session reached the servers."""
        hooks = [] if self._watch is None else [self._watch.hook()]
        if not self.sync:
            return hooks
        if self._optimizer is None:
            raise TowersError('--sync_replicas needs the optimizer from wrap_optimizer; pass '
                              'the optimizer through Worker.wrap_optimizer before training')
        # No tokens up front: each worker may start step s+1 only once the update of step s
        # is made, so every update holds exactly one gradient from each worker.
        hooks.append(self._optimizer.make_session_run_hook(self.is_chief, num_tokens=0))
        if self.is_chief:
            hooks.append(CloseSessionOnStopHook())
        return hooks

    @contextlib.contextmanager
    def watch_parameter_servers(self, timeout_secs):
        """A `ParameterServerWatch` of this cluster's parameter servers while the block runs;
        `hooks` include its hook meanwhile."""
        watch = ParameterServerWatch(
            [self._spec.task_address(PS_JOB, i) for i in range(self.num_ps)], timeout_secs,
            'worker %d' % self.task_index)
        with watch:
            self._watch = watch
            try:
                yield watch
            finally:
                self._watch = None

    def finish(self, stopped=False):
        """Tells every parameter server that this worker is done; call after training.

        Args:
          stopped: whether training stopped on a signal rather than finished; the parameter
            servers then keep serving the other workers (unless they are stopping too). A
            failure to tell them is only logged then, since they may have stopped already.
        """
        code = -1 - self.task_index if stopped else self.task_index
        try:
            with tf.Graph().as_default():
                signals = [_done_queue(i).enqueue(code) for i in range(self.num_ps)]
                with tf.Session(self.master, config=self._config) as sess:
                    sess.run(signals)
        except tf.errors.OpError as err:
            if not stopped:
                raise
            log.warning('worker %d could not report its stop to the parameter servers: %s',
                        self.task_index, err.message.split('\n')[0])
            return
        log.info('worker %d %s', self.task_index, 'stopped' if stopped else 'finished')
