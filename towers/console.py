"""What a script's run shows of TensorFlow's C++ log: its start-up noise hidden, the rest kept.

TensorFlow's native libraries print lines that no setting hides. Before absl's logging is set up
they print its banner (`WARNING: All log messages before absl::InitializeLog() is called are
written to STDERR`) and INFO lines (oneDNN, `Could not find cuda drivers`), twice, whatever
`TF_CPP_MIN_LOG_LEVEL` says; on a machine without a GPU, listing the devices logs
`failed call to cuInit: ... UNKNOWN ERROR (303)` as an ERROR; and some graphs log a oneDNN
fallback as an ERROR on their first step. None of them is a fault of the run. (Where a GPU's
driver fails, the cuInit line is hidden as well: the devices line says no GPU was found, and
`--verbose` shows why.)

`filter_native_logs()`, called by `towers.cli.run` before TensorFlow is imported, passes the
process's file descriptor 2 (where C++ writes) through a filter process that drops those lines:
C++ log lines below `TF_CPP_MIN_LOG_LEVEL` (the user's value; 1, INFO hidden, when unset, as
`towers.compat` sets it), and, when the user has not set it, the known harmless ERROR lines above.
Every other byte passes through unchanged. Python's own `sys.stderr` writes go straight to the
terminal, not through the filter, so the script's lines keep their order. `show_everything()`
(the scripts' `--verbose`) turns the filter into a plain copy and TensorFlow's INFO logs on.

The filter is a forked process, not a thread: a C++ crash (`Check failed`, an abort) kills the
script, and its last lines still reach the terminal through the filter, which ends when every
writer of its pipe has ended.
"""
import atexit
import logging
import os
import re
import select
import signal
import sys
import time

LEVEL_VARIABLE = 'TF_CPP_MIN_LOG_LEVEL'
BANNER = b'WARNING: All log messages before absl::InitializeLog() is called are written to STDERR'
# absl's C++ log line: `E0000 00:00:1795704626.148856    7189 util.cc:131] message`.
_NATIVE_LINE = re.compile(rb'^([IWEF])\d{4} [\d:.]+\s+\d+ [\w./-]+\.(?:cc|h|cpp|c):\d+\] (.*)')
_LEVELS = {b'I': 0, b'W': 1, b'E': 2, b'F': 3}
# ERROR and WARNING lines of a healthy run: no GPU on this machine; oneDNN's fallback for uint8
# and float16 ops; the end of each step of a session on a server (a Horovod rank's), which cleans up its
# rendezvous.
HARMLESS_ERRORS = (b'failed call to cuInit', b'oneDNN supports DT_UINT8 only',
                   b'oneDNN supports DT_HALF only',
                   b'Local rendezvous is aborting with status: ABORTED: Cleanup')
# What `show_everything` writes into the filter's pipe: from this line on, the filter copies.
VERBOSE = b'\x00towers.console: show everything\x00'
# How long a line without its newline waits for the rest before it passes as it is.
_PARTIAL_WAIT_SECS = 0.1
# How long the script's end waits for the filter to write out what it holds.
_DRAIN_SECS = 3.0

_filter = None


class NativeLogFilter:
    """Which lines of the C++ log a run shows (see the module docstring).

    Args:
      user_level: `TF_CPP_MIN_LOG_LEVEL` as the user set it, or None.
    """

    def __init__(self, user_level):
        self.user_set = user_level is not None
        self.level = _parse_level(user_level)
        self.verbose = False

    def keeps(self, line):
        """Whether `line` (bytes, without its newline) is shown."""
        if line == VERBOSE:
            self.verbose = True
            return False
        if self.verbose:
            return True
        if line.rstrip() == BANNER:
            return self.level < 1
        match = _NATIVE_LINE.match(line)
        if not match:
            return True
        if _LEVELS[match.group(1)] < self.level:
            return False
        return self.user_set or not match.group(2).startswith(HARMLESS_ERRORS)


def _parse_level(text):
    try:
        return min(max(int(text), 0), 3)
    except (TypeError, ValueError):
        return 1


def filter_native_logs():
    """Filters this process's C++ log until it ends (see the module docstring).

    Does nothing once TensorFlow is imported (a test's process, say: its start-up is over), a
    second time, or where processes cannot fork.
    """
    global _filter
    if _filter is not None or 'tensorflow' in sys.modules or not hasattr(os, 'fork'):
        return
    rules = NativeLogFilter(os.environ.get(LEVEL_VARIABLE))
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    terminal = os.dup(2)
    # The filter ignores Ctrl-C and a stop from its start: they are the script's.
    handlers = {signal.SIGINT: signal.SIG_IGN, signal.SIGTERM: signal.SIG_IGN}
    previous = {number: signal.signal(number, handler) for number, handler in handlers.items()}
    pid = os.fork()
    if pid == 0:
        os.close(write_end)
        _run_filter(read_end, terminal, rules)
        os._exit(0)
    for number, handler in previous.items():
        signal.signal(number, handler)
    os.close(read_end)
    os.dup2(write_end, 2)
    os.close(write_end)
    sys.stderr = open(terminal, 'w', buffering=1, closefd=False,
                      encoding=sys.stderr.encoding, errors='backslashreplace')
    _filter = (pid, terminal, rules)
    atexit.register(_drain)


def show_everything():
    """The run shows every C++ log line and TensorFlow's INFO logs (`--verbose`); only where
    `filter_native_logs` filters this process, before TensorFlow is imported."""
    if _filter is None:
        return
    _, _, rules = _filter
    # Said through the pipe itself, so every line written after it passes.
    os.write(2, VERBOSE + b'\n')
    if not rules.user_set:
        os.environ[LEVEL_VARIABLE] = '0'
    logging.getLogger('tensorflow').setLevel(logging.INFO)


def _drain():
    """At the script's end: fd 2 back to the terminal, and the filter's last lines written."""
    pid, terminal, _ = _filter
    sys.stderr.flush()
    os.dup2(terminal, 2)
    deadline = time.monotonic() + _DRAIN_SECS
    while time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG)[0]:
            return
        time.sleep(0.01)


def _run_filter(read_end, terminal, rules):
    """The filter process: copies `read_end` to `terminal` line by line as `rules` say; it ends
    when the script's end closes the pipe."""
    pending = b''
    while True:
        if pending and not _readable(read_end, _PARTIAL_WAIT_SECS):
            _write(terminal, pending)
            pending = b''
        try:
            chunk = os.read(read_end, 65536)
        except InterruptedError:
            continue
        if not chunk:
            break
        *lines, pending = (pending + chunk).split(b'\n')
        for line in lines:
            if rules.keeps(line):
                _write(terminal, line + b'\n')
    if pending:
        _write(terminal, pending)


def _readable(fd, seconds):
    try:
        return bool(select.select([fd], [], [], seconds)[0])
    except InterruptedError:
        return True


def _write(fd, data):
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError:
        pass
