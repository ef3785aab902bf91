"""Specification of the private network of a local cluster (towers/cluster/isolation.py): loopback
alone, out of reach from outside, the user's own ids; and why, where the kernel allows none."""
import os
import socket
import subprocess
import sys

import pytest

from towers.cluster import isolation

ISOLATION = isolation.__file__

# Listens on every interface of its namespace, checks that it reaches itself on both loopback
# addresses, prints its port and waits for its standard input to close.
SERVER = '''
import socket, sys
server = socket.create_server(('::', 0), family=socket.AF_INET6, dualstack_ipv6=True)
port = server.getsockname()[1]
for host in ('127.0.0.1', '::1'):
    socket.create_connection((host, port), timeout=5).close()
print(port, flush=True)
sys.stdin.read()
'''


@pytest.fixture
def network():
    made = isolation.private_network()
    yield made
    made.close()


def test_a_program_inside_sees_loopback_alone_and_runs_as_the_same_user_and_process(network,
                                                                                     tmp_path):
    process = subprocess.Popen(network.command([
        sys.executable, '-c', 'import os, socket; print(os.getpid(), '
                              '*[name for _, name in socket.if_nameindex()]); '
                              'open("written", "w")']),
        pass_fds=network.pass_fds, stdout=subprocess.PIPE, text=True, cwd=str(tmp_path))
    printed = process.communicate(timeout=60)[0].split()
    assert process.returncode == 0
    assert printed == [str(process.pid), 'lo']
    written = os.stat(str(tmp_path / 'written'))
    assert (written.st_uid, written.st_gid) == (os.geteuid(), os.getegid())


def test_what_listens_inside_is_reachable_inside_and_refused_outside(network):
    server = subprocess.Popen(network.command([sys.executable, '-c', SERVER]),
                              pass_fds=network.pass_fds, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        assert isolation.listening_addresses(port, server.pid) == ['[::]:%d' % port]
        assert isolation.listening_addresses(port) == []
        for host in ('127.0.0.1', '::1'):
            with pytest.raises(ConnectionRefusedError):
                socket.create_connection((host, port), timeout=5)
    finally:
        server.stdin.close()
        server.wait(timeout=60)


def test_where_user_namespaces_are_forbidden_the_reason_names_the_setting():
    # A user namespace of its own whose limit of user namespaces is 0 forbids any more, as
    # user.max_user_namespaces=0 does on a whole machine.
    forbidden = subprocess.run(
        ['unshare', '--user', '--map-root-user', 'sh', '-c',
         'echo 0 > /proc/sys/user/max_user_namespaces && exec "$@"', 'sh',
         sys.executable, '-I', '-S', ISOLATION, 'create'],
        capture_output=True, text=True, timeout=60)
    assert forbidden.returncode == 1, forbidden.stderr
    assert forbidden.stdout == ('unavailable: user namespaces are disabled '
                                '(user.max_user_namespaces=0)\n')


def test_the_reason_names_debians_switch_when_it_is_off(tmp_path):
    (tmp_path / 'kernel').mkdir()
    (tmp_path / 'kernel' / 'unprivileged_userns_clone').write_text('0\n')
    assert isolation.why_unavailable('creating a user and network namespace', 1,
                                     proc_sys=str(tmp_path)) == (
        'unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0)')


def test_without_a_forbidding_setting_the_reason_is_the_failed_step_and_its_error(tmp_path):
    assert isolation.why_unavailable('bringing up the loopback interface', 1,
                                     proc_sys=str(tmp_path)) == (
        'bringing up the loopback interface failed: Operation not permitted')


def test_listening_addresses_name_the_address_a_socket_is_bound_to():
    with socket.create_server(('127.0.0.1', 0)) as server:
        port = server.getsockname()[1]
        assert isolation.listening_addresses(port) == ['127.0.0.1:%d' % port]
