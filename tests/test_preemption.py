"""Specification of stop signals (towers/training/preemption.py): SIGTERM and SIGINT become a request to
stop, seen by every thread, with the shells' exit status."""
import os
import signal
import threading

import pytest

from towers.training import preemption
from towers.compat import tf

WAIT_SECS = 30


@pytest.mark.parametrize('signum, status', [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_stop_signal_is_recorded_with_its_exit_status_instead_of_ending_the_process(signum,
                                                                                   status):
    with preemption.stop_signals() as stop:
        assert not stop.requested and stop.exit_status is None
        os.kill(os.getpid(), signum)
        assert stop.wait(WAIT_SECS)
    assert (stop.signum, stop.exit_status) == (signum, status)
    assert stop.signal_name == signal.Signals(signum).name


def test_the_request_reaches_another_thread_while_the_main_thread_is_blocked_in_tensorflow():
    with tf.Graph().as_default():
        started = tf.FIFOQueue(1, tf.int32, shapes=[])
        never_filled = tf.FIFOQueue(1, tf.int32, shapes=[])
        with tf.control_dependencies([started.enqueue(1)]):
            blocked = never_filled.dequeue()
        entered = started.dequeue()
        with tf.Session() as sess, preemption.stop_signals() as stop:
            stop.on_request(sess.close)

            def signal_once_blocked():
                sess.run(entered)
                os.kill(os.getpid(), signal.SIGTERM)

            threading.Thread(target=signal_once_blocked, daemon=True).start()
            # Python would run a handler only once this run returned; the request closes the
            # session from the signal watcher's thread, which cancels the run (without it, the
            # run would end with DeadlineExceededError).
            with pytest.raises(tf.errors.CancelledError):
                sess.run(blocked, options=tf.RunOptions(timeout_in_ms=WAIT_SECS * 1000))
    assert stop.signal_name == 'SIGTERM'


def test_a_callback_registered_after_the_request_runs_at_once_and_only_the_first_signal_counts():
    stop = preemption.StopRequest()
    stop.request(signal.SIGINT)
    stop.request(signal.SIGTERM)
    called = []
    stop.on_request(lambda: called.append(stop.signum))
    assert called == [signal.SIGINT]


def test_an_inner_block_shares_the_outer_blocks_request_and_grace():
    with preemption.stop_signals(grace_secs=2) as outer:
        with preemption.stop_signals() as inner:
            assert inner is outer and inner.grace_secs == 2
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
