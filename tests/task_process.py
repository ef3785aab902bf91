"""A training process started by a test, whose output lines the test can wait for."""
import re
import signal
import subprocess
import threading
import time

import pytest


class Task:
    """A process whose output (stdout and stderr, merged) a test can wait for, line by line.

    Attributes:
      name: what failures call it, e.g. 'worker1'.
      process: the `subprocess.Popen`.
      lines: its output lines so far.
    """

    def __init__(self, name, argv, cwd):
        self.name = name
        self.process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        text=True, cwd=cwd)
        self.lines = []
        self._ended = False
        self._changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self._ended = True
            self._changed.notify_all()

    def wait_for_line(self, pattern, deadline):
        """Returns the first output line matching `pattern`, waiting until `deadline` (a
        `time.monotonic()` time)."""
        def match():
            return next((line for line in self.lines if re.search(pattern, line)), None)
        with self._changed:
            self._changed.wait_for(lambda: match() or self._ended,
                                   max(0.0, deadline - time.monotonic()))
            found = match()
        assert found, '%s printed no line matching %r:\n%s' % (self.name, pattern,
                                                               self.output())
        return found

    def exit_status(self, deadline):
        """The exit status, waiting until `deadline`; fails the test if it still runs then."""
        try:
            return self.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            # The training programs dump every thread's stack on SIGUSR1 (faulthandler), to
            # show where a process that should have ended is stuck.
            self.process.send_signal(signal.SIGUSR1)
            time.sleep(2)
            pytest.fail('%s still runs at the end of the test:\n%s' % (self.name,
                                                                      self.output()))

    def all_output(self):
        """Every line once the process has exited and its output is read to the end."""
        self.process.wait()
        with self._changed:
            self._changed.wait_for(lambda: self._ended)
            return ''.join(self.lines)

    def output(self):
        """The last 40 lines, after the earlier lines that tell what went wrong: `error:`
        lines, warnings and tracebacks' last lines."""
        with self._changed:
            earlier = [line for line in self.lines[:-40]
                       if re.search(r'error|Error|WARNING|Traceback', line)]
            shown = earlier[-20:] + (['...\n'] if earlier else []) + self.lines[-40:]
            return ''.join(shown)

    def kill(self):
        """Kills the process if it still runs (cleanup at the end of a test)."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
