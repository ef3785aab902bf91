"""The bound on a Horovod rank's wait for its peers: a step that holds collectives and does not
complete within the job's timeout (`towers-legacy --collective_timeout`) ends the rank with one
line naming it and the collectives of that step.

TensorFlow's collective ops have a timeout of their own, but each op given one starts a thread
that sleeps the whole timeout: thousands of threads a minute at a few steps a second, until the
process cannot start another and aborts. So the ops wait without one, and one thread per rank
watches the session runs instead: `install()` wraps `Session.run`; a run of a graph that holds
collectives, in a job of several ranks, is timed from its start, and the watch (a daemon
thread, started with the first such run) checks every second.
"""
import os
import sys
import threading
import time

from towers.compat import tf
from towers.legacy.horovod import collectives, ranks

_runs = {}
_lock = threading.Lock()
_started = []


def install():
    """Wraps every session's `run` (for the rest of the process) so that a rank's runs of
    graphs with collectives are watched."""
    base = tf.Session.__bases__[0]
    base.run = _watched(base.run)


def _watched(run):
    def watched_run(session, fetches, *args, **kwargs):
        if not ranks.is_initialized() or not collectives.holds_collectives(session.graph):
            return run(session, fetches, *args, **kwargs)
        world = ranks.world()
        if world.size == 1 or not world.timeout:
            return run(session, fetches, *args, **kwargs)
        _start(world)
        key = threading.get_ident()
        with _lock:
            _runs[key] = (time.monotonic() + world.timeout, session.graph, fetches)
        try:
            return run(session, fetches, *args, **kwargs)
        finally:
            with _lock:
                _runs.pop(key, None)
    return watched_run


def _start(world):
    with _lock:
        if _started:
            return
        _started.append(threading.Thread(target=_watch, args=(world,), daemon=True,
                                         name='towers-horovod-watchdog'))
    _started[0].start()


def _watch(world):
    while True:
        time.sleep(1.0)
        with _lock:
            late = [run for run in _runs.values() if run[0] < time.monotonic()]
        if late:
            _, graph, fetches = late[0]
            try:
                pending = collectives.pending(graph, fetches)
            except Exception:  # noqa: BLE001 (the rank must end, named or not)
                pending = []
            sys.stderr.write('error: %s\n' % late_line(world, pending))
            sys.stderr.flush()
            os._exit(1)


def late_line(world, pending):
    """The line of a rank whose step waited longer than the job's timeout for the collectives
    `pending` (descriptions, as `collectives.pending` gives them)."""
    shown = ', '.join(pending[:3]) + (' and %d more' % (len(pending) - 3)
                                      if len(pending) > 3 else '')
    return ('rank %d: the %s did not complete within %.0f s: another rank stopped, or built '
            'another graph (towers-legacy --collective_timeout sets the bound)'
            % (world.rank, shown or 'collectives of a step', world.timeout))
