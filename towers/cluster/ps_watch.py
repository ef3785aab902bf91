"""Ending a worker whose parameter server is lost.

When a parameter server dies, TensorFlow's session recovery waits for it to come back, over and
over, so without a watch every worker would hang; see `ParameterServerWatch`.
"""
import os
import subprocess
import sys

from towers.compat import tf

# How often a worker checks that the parameter servers still answer (more often when
# --ps_timeout_secs is short).
PS_PROBE_SECS = 5.0


class ParameterServerWatch:
    """Ends this worker when a parameter server it has reached answers no more.

    When a parameter server dies, TensorFlow's session recovery waits for it to come back, over
    and over, so without this every worker would hang. In a `with` block, a process of its own
    (`towers/cluster/ps_watchdog.py`) connects to each parameter server's address every `probe_secs`;
    once one that answered before has not answered for `timeout_secs`, it prints one `error:`
    line naming the lost task and kills this worker, whatever it is blocked in: a thread of
    this process would not do, since the recovery can block inside TensorFlow holding the
    interpreter lock. A server answers a probe, or through `reached` (the worker's `hook`
    calls it when a session is created), so that one lost before the first probe is caught;
    one that never answered is still starting, as far as the watch knows. Restarted, the job
    resumes from the chief's newest checkpoint.
    """

    def __init__(self, addresses, timeout_secs, who):
        """Args:
          addresses: 'host:port' of each parameter server, by task index.
          timeout_secs: how long a lost server may stay silent.
          who: this process in the message, e.g. 'worker 1'.
        """
        self._addresses = addresses
        self._timeout = timeout_secs
        self._who = who
        self.probe_secs = min(PS_PROBE_SECS, timeout_secs / 3)
        self._process = None

    def __enter__(self):
        self._process = subprocess.Popen(
            [sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                          'ps_watchdog.py'),
             str(os.getpid()), repr(self._timeout), repr(self.probe_secs), self._who]
            + list(self._addresses), stdin=subprocess.PIPE)
        return self

    def __exit__(self, *exc_info):
        self._process.terminate()
        self._process.wait()
        self._process.stdin.close()

    def reached(self):
        """Tells the watch that this worker has just reached every parameter server (a
        session was created): each counts as answering now, even one that dies before the
        watch's next probe."""
        try:
            self._process.stdin.write(b'reached\n')
            self._process.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass   # the watch has ended

    def hook(self):
        """A session hook that calls `reached` whenever a session is created."""
        return _ReachedHook(self.reached)


class _ReachedHook(tf.train.SessionRunHook):
    def __init__(self, reached):
        self._reached = reached

    def after_create_session(self, session, coord):
        self._reached()
