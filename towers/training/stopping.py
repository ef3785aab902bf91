"""Session-run hooks that end a blocked step or session when a stop is requested
(`towers.training.preemption`): in a cluster, a step may wait for a process that stopped first."""
import logging
import threading

from towers.compat import tf

log = logging.getLogger(__name__)


class CancelStepOnStopHook(tf.train.SessionRunHook):
    """Cancels a cluster's training step that still runs `grace_secs` after a stop request.

    A synchronous worker's step waits for the gradients of every worker and for the chief's
    update; when another process has stopped first, they never come. Closing the session
    cancels the wait (the coordinator is asked to stop first, so that its threads'
    cancellation counts as no error); the loop then ends as stopped, and a chief saves its last
    checkpoint through a new session (`CheckpointHook.save_in_new_session`). A process training
    alone never needs this: its step waits for no one, and its variables die with its session.

    Attributes:
      cancelled: whether it closed the session.
    """

    def __init__(self, stop, grace_secs):
        """Args:
          stop: the process's `towers.training.preemption.StopRequest`.
          grace_secs: how long after the request the step may still run.
        """
        self._stop = stop
        self._grace = grace_secs
        self._lock = threading.Lock()
        self._ended = False
        self._timer = None
        self._unregister = None
        self._session = None
        self._coord = None
        self.cancelled = False

    def after_create_session(self, session, coord):
        # A session made again (after a parameter server came back) replaces the old one.
        if self._unregister is not None:
            self._unregister()
        self._session, self._coord = session, coord
        self._unregister = self._stop.on_request(self._arm)

    def end(self, session):
        self.disarm()

    def disarm(self):
        """Keeps it from cancelling anything from now on (the loop has left its steps)."""
        with self._lock:
            self._ended = True
            if self._timer is not None:
                self._timer.cancel()
        if self._unregister is not None:
            self._unregister()

    def _arm(self):
        with self._lock:
            if not self._ended:
                self._timer = threading.Timer(self._grace, self._cancel)
                self._timer.daemon = True
                self._timer.start()

    def _cancel(self):
        with self._lock:
            if self._ended:
                return
            self.cancelled = True
        log.warning('the current step still runs %g s after %s: it waits for a process '
                    'that has stopped; cancelling it', self._grace, self._stop.signal_name)
        self._coord.request_stop()
        self._session.close()


class CloseSessionOnStopHook(tf.train.SessionRunHook):
    """Closes the session as soon as its coordinator is asked to stop.

    The SyncReplicas chief's queue runner waits in the gradient accumulators for the next
    step's gradients; after the last step none come, so `MonitoredSession.close` would wait
    its 120 s grace period for the thread, and the thread would then die of a CancelledError
    reported as a failure. Closing the session the moment the stop is requested (after every
    hook's `end`, so after the last checkpoint) cancels that wait at once, and since the stop
    was already requested the coordinator does not count the cancellation as an error.
    """

    def after_create_session(self, session, coord):
        closer = threading.Thread(target=self._close_on_stop, args=(session, coord),
                                  name='close_session_on_stop', daemon=True)
        coord.register_thread(closer)
        closer.start()

    @staticmethod
    def _close_on_stop(session, coord):
        coord.wait_for_stop()
        session.close()
