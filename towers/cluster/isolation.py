"""A network of a cluster's own: a network namespace whose only interface is loopback.

TensorFlow's distributed runtime listens on every network interface whatever the cluster spec
names, and it is unauthenticated gRPC: whoever reaches a task's port can run any op in it. A
cluster tried out on one machine needs no network at all, so the launcher runs it in a network
namespace of its own, inside a user namespace of its own (which the kernel lets an ordinary
user make where unprivileged user namespaces are allowed):

    network = isolation.private_network()      # raises IsolationUnavailable, saying why
    subprocess.Popen(network.command(argv), pass_fds=network.pass_fds)   # as many as needed
    network.close()                            # the processes keep the namespace alive

Nothing outside the namespace reaches its processes' ports, not even other users' processes on
the same machine; inside, they reach each other on localhost (127.0.0.1 and ::1). Each user id
and group id is mapped to itself, so the files the processes write belong to the user as
always. `HOST_NETWORK` is the other choice: processes started as usual.

A process that changes its user namespace must have one thread, and a process that has imported
TensorFlow has several, so this file is also run directly (`python -I -S isolation.py`,
importing neither TensorFlow nor the `towers` package):

    isolation.py create       makes the namespaces and brings loopback up; prints 'ready' and
                              waits until its standard input closes (meanwhile its parent opens
                              /proc/PID/ns/user and /proc/PID/ns/net), or prints one
                              'unavailable: WHY' line and exits 1.
    isolation.py join USER_FD NET_FD PROGRAM [ARG...]
                              enters the namespaces those descriptors hold, then becomes
                              PROGRAM (exec: same process id, signals and exit status).

`listening_addresses` and `loopback_only` tell a task how it can be reached.
"""
import ctypes
import errno
import fcntl
import os
import pwd
import socket
import struct
import subprocess
import sys

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
_NAMESPACES = (('user', CLONE_NEWUSER), ('net', CLONE_NEWNET))  # the order of entering them
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
_IFREQ = '16sH22x'   # struct ifreq: the interface name, then the flags
_READY = 'ready'
_UNAVAILABLE = 'unavailable: '
# Settings that forbid unprivileged user namespaces: (file under /proc/sys, value that forbids,
# what it means).
_SYSCTLS = (
    ('kernel/unprivileged_userns_clone', '0', 'unprivileged user namespaces are disabled'),
    ('user/max_user_namespaces', '0', 'user namespaces are disabled'),
    ('user/max_net_namespaces', '0', 'network namespaces are disabled'),
    ('kernel/apparmor_restrict_unprivileged_userns', '1',
     'AppArmor restricts unprivileged user namespaces'),
)
_LISTEN = '0A'   # TCP_LISTEN in /proc/net/tcp


class IsolationUnavailable(Exception):
    """The operating system does not let this user make a private network; the message says
    why."""


class HostNetwork:
    """The machine's own network: processes are started as they are, reachable as they listen.

    Attributes:
      private: False.
      pass_fds: descriptors a process must inherit for `command` to work: none.
    """
    private = False
    pass_fds = ()

    @staticmethod
    def command(argv):
        """Returns `argv` itself."""
        return list(argv)

    def close(self):
        """Nothing to release."""


HOST_NETWORK = HostNetwork()


class PrivateNetwork(HostNetwork):
    """A user and network namespace whose only interface is loopback, held by two descriptors.

    Attributes:
      private: True.
      pass_fds: the descriptors of the namespaces, which `command` needs its process to
        inherit (`subprocess.Popen(..., pass_fds=network.pass_fds)`).
    """
    private = True

    def __init__(self, user_fd, net_fd):
        self.pass_fds = (user_fd, net_fd)

    def command(self, argv):
        """The command that runs `argv` inside the namespaces, as the same process."""
        return ([sys.executable, '-I', '-S', os.path.abspath(__file__), 'join']
                + [str(fd) for fd in self.pass_fds] + list(argv))

    def close(self):
        """Closes this process's descriptors; the processes started inside keep the
        namespaces alive until the last of them exits."""
        for fd in self.pass_fds:
            os.close(fd)
        self.pass_fds = ()


def private_network():
    """Makes a private network (a `PrivateNetwork`) for processes to be started in.

    Raises:
      IsolationUnavailable: not Linux, or the kernel refuses this user a user namespace (the
        message names the setting that forbids it where one does, else the failed step and its
        error).
    """
    if not sys.platform.startswith('linux'):
        raise IsolationUnavailable('network namespaces exist only on Linux')
    maker = subprocess.Popen([sys.executable, '-I', '-S', os.path.abspath(__file__), 'create'],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    fds = []
    try:
        said = maker.stdout.readline().rstrip('\n')
        if said != _READY:
            failure = (maker.stderr.read().strip().splitlines() or [said or 'no answer'])[-1]
            raise IsolationUnavailable(said[len(_UNAVAILABLE):] if said.startswith(_UNAVAILABLE)
                                       else 'its helper failed: %s' % failure)
        for name, _ in _NAMESPACES:
            path = '/proc/%d/ns/%s' % (maker.pid, name)
            try:
                fds.append(os.open(path, os.O_RDONLY))
            except OSError as err:
                raise IsolationUnavailable('opening %s failed: %s' % (path, err.strerror))
        return PrivateNetwork(*fds)
    except IsolationUnavailable:
        for fd in fds:
            os.close(fd)
        raise
    finally:
        maker.stdin.close()
        maker.wait()
        maker.stdout.close()
        maker.stderr.close()


def listening_addresses(port, pid='self'):
    """Where TCP sockets listen on `port` in the network namespace of process `pid`.

    Returns:
      'address:port' of each, once (gRPC may hold two sockets on one address), e.g.
      ['[::]:2222'] for every interface (IPv6 and IPv4); [] where /proc cannot tell.
    """
    found = []
    for table, family in (('tcp', socket.AF_INET), ('tcp6', socket.AF_INET6)):
        try:
            with open('/proc/%s/net/%s' % (pid, table)) as f:
                rows = [line.split() for line in f.readlines()[1:]]
        except OSError:
            continue
        for row in rows:
            address, hex_port = row[1].split(':')
            if row[3] == _LISTEN and int(hex_port, 16) == port:
                # The address is in words of 4 bytes, each in the machine's byte order.
                words = bytes.fromhex(address)
                packed = b''.join(struct.pack('=I', int.from_bytes(words[i:i + 4], 'big'))
                                  for i in range(0, len(words), 4))
                host = socket.inet_ntop(family, packed)
                found.append(('[%s]:%d' if family == socket.AF_INET6 else '%s:%d')
                             % (host, port))
    return list(dict.fromkeys(found))


def loopback_only():
    """Whether this process's network namespace has no interface but loopback, so that only
    processes inside it can reach what listens here."""
    try:
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        return False
    return names == ['lo']


def user_name():
    """The name of the user this process runs as (its user id where it has no name)."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return 'user id %d' % os.geteuid()


def why_unavailable(step, error_number, proc_sys='/proc/sys'):
    """Why the kernel refused a step of making the namespaces, in words.

    Args:
      step: what failed, e.g. 'creating a user and network namespace'.
      error_number: its errno.
      proc_sys: where the kernel's settings are read.

    Returns:
      The setting that forbids unprivileged user namespaces, e.g. 'unprivileged user
      namespaces are disabled (kernel.unprivileged_userns_clone=0)'; or, when none does,
      '<step> failed: <the error's text>'.
    """
    for name, forbidding, meaning in _SYSCTLS:
        try:
            with open(os.path.join(proc_sys, name)) as f:
                value = f.read().strip()
        except OSError:
            continue
        if value == forbidding:
            return '%s (%s=%s)' % (meaning, name.replace('/', '.'), value)
    return '%s failed: %s' % (step, os.strerror(error_number))


def _create():
    """Makes the namespaces in this process and says so on standard output; returns the exit
    status."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.geteuid(), os.getegid()
    step = 'creating a user and network namespace'
    try:
        if libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), step)
        step = 'mapping the user and group ids into the user namespace'
        # An unprivileged process may map only its own ids, and its group's only once
        # setgroups is denied.
        for name, text in (('setgroups', 'deny'), ('uid_map', '%d %d 1' % (uid, uid)),
                           ('gid_map', '%d %d 1' % (gid, gid))):
            with open('/proc/self/' + name, 'w') as f:
                f.write(text)
        step = 'bringing up the loopback interface'
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            request = fcntl.ioctl(sock.fileno(), _SIOCGIFFLAGS, struct.pack(_IFREQ, b'lo', 0))
            flags = struct.unpack(_IFREQ, request)[1]
            fcntl.ioctl(sock.fileno(), _SIOCSIFFLAGS, struct.pack(_IFREQ, b'lo',
                                                                  flags | _IFF_UP))
    except OSError as err:
        print(_UNAVAILABLE + why_unavailable(step, err.errno or errno.EPERM), flush=True)
        return 1
    print(_READY, flush=True)
    sys.stdin.read()
    return 0


def _join(user_fd, net_fd, argv):
    """Enters the namespaces of the descriptors, then executes `argv`."""
    libc = ctypes.CDLL(None, use_errno=True)
    for fd, (name, kind) in zip((user_fd, net_fd), _NAMESPACES):
        if libc.setns(fd, kind) != 0:
            print('error: cannot enter the cluster\'s %s namespace: %s'
                  % (name, os.strerror(ctypes.get_errno())), file=sys.stderr, flush=True)
            return 1
        os.close(fd)
    try:
        os.execvp(argv[0], argv)
    except OSError as err:
        print('error: cannot run %s: %s' % (argv[0], err.strerror), file=sys.stderr, flush=True)
        return 127 if err.errno == errno.ENOENT else 126


def main(argv):
    if argv[1:2] == ['create']:
        return _create()
    return _join(int(argv[2]), int(argv[3]), argv[4:])


if __name__ == '__main__':
    sys.exit(main(sys.argv))
