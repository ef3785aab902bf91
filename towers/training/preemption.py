"""SIGTERM and SIGINT as a request to stop cleanly: how preemption reaches a training process.

Kubernetes, Slurm and spot instances send SIGTERM some seconds before they kill a job, and a
terminal sends SIGINT on Ctrl-C. While `stop_signals()` is active, either signal only records a
request to stop, which the training loop honours after the current step (the chief then writes
a last checkpoint) and which the process reports with the shells' status, 128 + the signal:

    with preemption.stop_signals(grace_secs=10) as stop:
        while not stop.requested:
            run_one_step()
    return stop.exit_status if stop.requested else 0

The request is also seen at once by other threads (`on_request` callbacks run in a thread of
their own), which matters when the main thread is blocked inside TensorFlow: Python runs signal
handlers in the main thread only, after the blocking call returns, which for a worker waiting
for a peer that has stopped may be never. `grace_secs` is how long such a process may take to
stop; what it cancels after that is up to the callbacks.
"""
import contextlib
import logging
import signal
import socket
import threading

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
# A stopping worker waits this long for its current step before cancelling it; a stopping
# parameter server serves the workers up to twice this. Kubernetes kills 30 s after SIGTERM.
STOP_GRACE_SECS = 10.0

_active = []


class StopRequest:
    """Whether, and by which signal, this process was asked to stop.

    Attributes:
      grace_secs: how long stopping may wait for work in progress (see the module docstring).
      signum: the first stop signal received, or None.
    """

    def __init__(self, grace_secs=STOP_GRACE_SECS):
        self.grace_secs = grace_secs
        self.signum = None
        self._requested = threading.Event()
        self._lock = threading.Lock()
        self._callbacks = []
        self._announced = False

    @property
    def requested(self):
        """True once a stop signal came (or `request` was called)."""
        return self._requested.is_set()

    @property
    def exit_status(self):
        """128 + the signal, as shells report a process ended by it: 143 for SIGTERM, 130 for
        SIGINT; None before a request."""
        return None if self.signum is None else 128 + self.signum

    @property
    def signal_name(self):
        """'SIGTERM', 'SIGINT', or None before a request."""
        return None if self.signum is None else signal.Signals(self.signum).name

    def wait(self, timeout=None):
        """Waits up to `timeout` seconds (None: forever) for a request; returns `requested`."""
        return self._requested.wait(timeout)

    def request(self, signum, in_signal_handler=False):
        """Records a request to stop by `signum`; only the first request counts. Its line is
        logged by the first call not `in_signal_handler`: a signal handler runs inside whatever
        the main thread was doing, a write to stderr perhaps, which the line's write would
        enter again (Python refuses, and the line is lost)."""
        with self._lock:
            first = not self._requested.is_set()
            if first:
                self.signum = signum
                self._requested.set()
                callbacks = list(self._callbacks)
            announce = not (in_signal_handler or self._announced)
            self._announced = self._announced or announce
        if announce:
            log.warning('%s received: stopping cleanly', self.signal_name)
        if first:
            for callback in callbacks:
                callback()

    def on_request(self, callback):
        """Calls `callback()` when the stop is requested, at once if it already was.

        Returns:
          A function of no arguments that unregisters `callback`.
        """
        with self._lock:
            already = self._requested.is_set()
            if not already:
                self._callbacks.append(callback)
        if already:
            callback()

        def unregister():
            with self._lock:
                if callback in self._callbacks:
                    self._callbacks.remove(callback)
        return unregister


@contextlib.contextmanager
def stop_signals(grace_secs=STOP_GRACE_SECS):
    """Turns SIGTERM and SIGINT into a `StopRequest` while the block runs.

    Re-entrant: inside another `stop_signals` block it yields the outer block's request (and
    `grace_secs` is the outer one's). Outside the main thread, where Python cannot install
    signal handlers, it yields a request that only `request()` sets.

    Yields:
      The `StopRequest`.
    """
    if _active:
        yield _active[-1]
        return
    stop = StopRequest(grace_secs)
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return
    # The interpreter writes each caught signal's number to the wakeup socket as soon as the
    # signal arrives, whichever thread is running; the watcher reads it there, so the request
    # is seen while the main thread is blocked in TensorFlow, and logs its line.
    receiver, sender = socket.socketpair()
    sender.setblocking(False)
    previous = {signum: signal.signal(
        signum, lambda signum, frame: stop.request(signum, in_signal_handler=True))
        for signum in STOP_SIGNALS}
    previous_wakeup = signal.set_wakeup_fd(sender.fileno(), warn_on_full_buffer=False)
    watcher = threading.Thread(target=_watch, args=(receiver, stop), name='stop_signals',
                               daemon=True)
    watcher.start()
    _active.append(stop)
    try:
        yield stop
    finally:
        _active.pop()
        signal.set_wakeup_fd(previous_wakeup)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        sender.close()  # ends the watcher's read
        watcher.join()
        receiver.close()


def _watch(receiver, stop):
    while True:
        try:
            received = receiver.recv(1)
        except OSError:
            return
        if not received:
            return
        if received[0] in STOP_SIGNALS:
            stop.request(received[0])
