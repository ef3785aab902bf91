"""Specification of the parameter-server watchdog: it reaches a server on any address gRPC uses,
and kills the worker that lost one, after one line naming it."""
import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WATCHDOG = os.path.join(ROOT, 'towers', 'cluster', 'ps_watchdog.py')
# Loaded from its file, as a worker runs it: without the towers package (and TensorFlow).
_spec = importlib.util.spec_from_file_location('ps_watchdog', WATCHDOG)
ps_watchdog = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ps_watchdog)


def listener(family, host):
    server = socket.socket(family, socket.SOCK_STREAM)
    server.bind((host, 0))
    server.listen(1)
    return server


def test_a_server_listening_on_ipv6_alone_answers_for_localhost():
    # gRPC binds a server to IPv6 alone when the IPv4 side of its port is taken, and takes
    # 'localhost' for ::1 whatever /etc/hosts says.
    try:
        server = listener(socket.AF_INET6, '::1')
    except OSError:
        pytest.fail('this machine has no IPv6 loopback, which the test needs')
    with server:
        assert ps_watchdog.probe('localhost:%d' % server.getsockname()[1], 1.0) is None


def test_a_closed_port_says_why_in_ipv4s_words():
    with listener(socket.AF_INET, '127.0.0.1') as server:
        port = server.getsockname()[1]
    assert ps_watchdog.probe('localhost:%d' % port, 1.0) == 'Connection refused'


def stand_in_worker(address, says_reached):
    """A process that starts the watchdog as ParameterServerWatch does (when `says_reached`,
    telling it at once that its session reached the servers), prints 'watching', and waits."""
    worker = textwrap.dedent('''
        import os, subprocess, sys, time
        watchdog = subprocess.Popen([sys.executable, %r, str(os.getpid()), '2.0', '0.5',
                                     'worker 1', %r], stdin=subprocess.PIPE)
        if %r:
            watchdog.stdin.write(b'reached\\n')
            watchdog.stdin.flush()
        print('watching', flush=True)
        time.sleep(60)
    ''' % (WATCHDOG, address, says_reached))
    process = subprocess.Popen([sys.executable, '-c', worker], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline() == 'watching\n'
    return process


def assert_killed_after_one_line(process, address):
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == -signal.SIGKILL
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    expected = (r'error: lost parameter server ps 0 at %s: no answer for \d+ s \(Connection '
                r'refused\); worker 1 stops\. Restart the job: the chief resumes from its newest '
                r'checkpoint' % re.escape(address))
    assert re.fullmatch(expected, lines[0]), stderr


def test_a_lost_server_gets_one_line_and_the_worker_is_killed():
    server = listener(socket.AF_INET, '127.0.0.1')
    address = 'localhost:%d' % server.getsockname()[1]
    process = stand_in_worker(address, says_reached=False)
    server.accept()[0].close()      # wait for the first probe: the server has answered
    server.close()
    assert_killed_after_one_line(process, address)


def test_a_server_lost_before_any_probe_is_lost_once_the_worker_reached_it():
    # A worker's session can reach a server and run 25 steps before the first probe; the
    # server then dies. The worker's word counts as the server's answer.
    with listener(socket.AF_INET, '127.0.0.1') as server:
        address = 'localhost:%d' % server.getsockname()[1]
    assert_killed_after_one_line(stand_in_worker(address, says_reached=True), address)


def test_a_server_that_never_answered_is_still_starting():
    with listener(socket.AF_INET, '127.0.0.1') as server:
        address = 'localhost:%d' % server.getsockname()[1]
    process = stand_in_worker(address, says_reached=False)
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=4.0)    # twice the watchdog's timeout
    finally:
        process.kill()
        process.wait()
