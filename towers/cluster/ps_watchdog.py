"""The parameter-server watch's own process: probes the parameter servers, ends a worker that
lost one.

    python towers/cluster/ps_watchdog.py PARENT_PID TIMEOUT_SECS PROBE_SECS WHO HOST:PORT [HOST:PORT ...]

`towers.cluster.ParameterServerWatch` starts it beside a worker. A thread of the worker could
not do this job: when a parameter server dies, the worker's session recovery can block inside
TensorFlow while holding Python's interpreter lock (seen: `Session._extend_graph` of a chief
restoring its checkpoint), and no other thread of that process runs again. This process runs
the file directly (it imports neither TensorFlow nor the `towers` package), connects to each
parameter server at once and then every PROBE_SECS (a TCP connect, which the gRPC server accepts
and forgets), and once one that answered before has not answered for TIMEOUT_SECS, writes one
`error:` line naming the lost task to the stderr it shares with the worker and kills the worker
(SIGKILL: nothing in it may still run).

A server answers either to a probe or through the worker: a line `reached` on this process's
standard input, which the worker writes once its session is created (a created session has
reached every parameter server). A server that dies before any probe of it (a worker can be 25
steps in less than a probe interval) is lost all the same. A server that never answered is
still starting, as far as it knows. It leaves when the worker is gone, and ignores SIGINT (a
terminal's Ctrl-C reaches the whole process group; the worker stops cleanly and ends it).
"""
import os
import select
import signal
import socket
import sys
import time

MESSAGE = ('error: lost parameter server ps %d at %s: no answer for %.0f s (%s); %s stops. '
           'Restart the job: the chief resumes from its newest checkpoint')


def probe(address, timeout_secs):
    """None when a TCP connection to 'host:port' opens within `timeout_secs`, else why not.

    Every address of the host is tried, as gRPC tries them: a server may listen on one family
    only (it binds IPv6 alone when another socket holds the IPv4 port), and gRPC takes
    'localhost' for ::1 as well as 127.0.0.1 whatever /etc/hosts says.
    """
    host, port = address.rsplit(':', 1)
    failure = 'no address'
    for family, target in _targets(host.strip('[]'), int(port)):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as sock:
                sock.settimeout(timeout_secs)
                sock.connect(target)
                return None
        except OSError as err:
            failure = err.strerror or str(err)
    return failure


def _targets(host, port):
    """(family, address) pairs to connect to, IPv6 first (so a failure says IPv4's reason)."""
    targets = [(socket.AF_INET6, ('::1', port))] if host == 'localhost' else []
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError:
        infos = []
    targets += [(family, sockaddr[:2]) for family, _, _, _, sockaddr in infos
                if (family, sockaddr[:2]) not in targets]
    if host == 'localhost' and (socket.AF_INET, ('127.0.0.1', port)) not in targets:
        targets.append((socket.AF_INET, ('127.0.0.1', port)))
    return sorted(targets, key=lambda target: target[0] != socket.AF_INET6)


def watch(parent, timeout_secs, probe_secs, who, addresses, words=None):
    """Probes `addresses` until `parent` is gone or a server is lost (then kills `parent`).

    Args:
      parent: the worker's process id.
      timeout_secs, probe_secs, who, addresses: as on the command line.
      words: a file descriptor on which the worker writes `reached` lines, or None.
    """
    last_answer = {}
    while True:
        for task, address in enumerate(addresses):
            failure = probe(address, probe_secs)
            now = time.monotonic()
            if failure is None:
                last_answer[task] = now
            elif task in last_answer and now - last_answer[task] >= timeout_secs:
                print(MESSAGE % (task, address, now - last_answer[task], failure, who),
                      file=sys.stderr, flush=True)
                os.kill(parent, signal.SIGKILL)
                return
        words = _wait_for_words(words, probe_secs, last_answer, len(addresses))
        if os.getppid() != parent:
            return


def _wait_for_words(words, secs, last_answer, num_servers):
    """Waits `secs`, taking the worker's `reached` lines meanwhile; returns `words`, or None
    once it has ended (the worker closed it, or it was never a pipe)."""
    end = time.monotonic() + secs
    while words is not None and time.monotonic() < end:
        ready, _, _ = select.select([words], [], [], max(0.0, end - time.monotonic()))
        if not ready:
            break
        data = os.read(words, 4096)
        if not data:
            words = None
        elif b'reached' in data:
            now = time.monotonic()
            last_answer.update((task, now) for task in range(num_servers))
    time.sleep(max(0.0, end - time.monotonic()))
    return words


def main(argv):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent, timeout_secs, probe_secs, who = int(argv[1]), float(argv[2]), float(argv[3]), argv[4]
    watch(parent, timeout_secs, probe_secs, who, argv[5:], words=sys.stdin.fileno())
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
