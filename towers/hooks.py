"""Session-run hooks of the training loop.

TensorFlow's own hooks insist on an integer `global_step`; the tutorials this project
reproduces keep theirs as float32 (and their checkpoints store it so), so these hooks take the
step from the loop instead. Each reads `steps_done`: the global step after the run, which the
loop fetches after the train op.
"""
import datetime
import os
import threading
import time

import numpy as np

from towers.compat import tf
from towers.errors import LossDivergedError

LOG_FORMAT = '%s: step %d, loss = %.2f (%.1f examples/sec; %.3f sec/batch)'


def _steps_done(run_values):
    return int(round(float(run_values.results['steps_done'])))


class _StepHook(tf.train.SessionRunHook):
    """Fetches `steps_done` (and any `extra` tensors) with every run."""

    def __init__(self, steps_done, **extra):
        self._fetches = dict(extra, steps_done=steps_done)

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._fetches)


class DivergenceGuardHook(_StepHook):
    """Stops training with `LossDivergedError` when the loss is NaN or infinite.

    It must come before the checkpoint hook, so that no checkpoint of a diverged step is written.
    """

    def __init__(self, steps_done, loss):
        super().__init__(steps_done, loss=loss)

    def after_run(self, run_context, run_values):
        loss_value = run_values.results['loss']
        if not np.all(np.isfinite(loss_value)):
            raise LossDivergedError(_steps_done(run_values) - 1, float(loss_value))


class StopAtStepHook(_StepHook):
    """Requests a stop once the global step reaches `max_steps`."""

    def __init__(self, steps_done, global_step, max_steps):
        super().__init__(steps_done)
        self._global_step = global_step
        self._max_steps = max_steps
        self.steps_done = None

    def after_create_session(self, session, coord):
        self.steps_done = int(round(float(session.run(self._global_step))))

    @property
    def finished(self):
        return self.steps_done is not None and self.steps_done >= self._max_steps

    def after_run(self, run_context, run_values):
        self.steps_done = _steps_done(run_values)
        if self.finished:
            run_context.request_stop()


class StepTimerHook(tf.train.SessionRunHook):
    """Times every step: the wall time of each `session.run` of the train op.

    Attributes:
      durations: seconds of each step so far.
    """

    def __init__(self, examples_per_step):
        self.examples_per_step = examples_per_step
        self.durations = []
        self._start = None
        self._first_start = None

    def before_run(self, run_context):
        self._start = time.time()
        if self._first_start is None:
            self._first_start = self._start

    def after_run(self, run_context, run_values):
        self.durations.append(time.time() - self._start)

    def summary(self):
        """Returns a dict: steps, median_step_sec, examples_per_sec (at the median), total_sec."""
        if not self.durations:
            return {'steps': 0, 'median_step_sec': None, 'examples_per_sec': None,
                    'total_sec': 0.0}
        median = float(np.median(self.durations))
        return {'steps': len(self.durations), 'median_step_sec': median,
                'examples_per_sec': self.examples_per_step / median,
                'total_sec': time.time() - self._first_start}


class LoggingHook(_StepHook):
    """Prints the tutorial's progress line every `every_n_steps` steps."""

    def __init__(self, steps_done, loss, timer, num_towers, every_n_steps=10, printer=print):
        super().__init__(steps_done, loss=loss)
        self._timer = timer
        self._num_towers = num_towers
        self._every = every_n_steps
        self._print = printer

    def after_run(self, run_context, run_values):
        step = _steps_done(run_values) - 1
        if step % self._every:
            return
        duration = self._timer.durations[-1]
        self._print(LOG_FORMAT % (datetime.datetime.now(), step, run_values.results['loss'],
                                  self._timer.examples_per_step / duration,
                                  duration / self._num_towers), flush=True)


class SummaryHook(_StepHook):
    """Writes `summary_op` to `writer` every `every_n_steps` steps and after the last one."""

    def __init__(self, steps_done, summary_op, writer, every_n_steps):
        super().__init__(steps_done)
        self._summary_op = summary_op
        self._writer = writer
        self._every = every_n_steps
        self._last_written = None
        self._steps_done = None

    def before_run(self, run_context):
        fetches = dict(self._fetches)
        if self._steps_done is None or self._steps_done % self._every == 0:
            fetches['summary'] = self._summary_op
        return tf.train.SessionRunArgs(fetches)

    def after_run(self, run_context, run_values):
        self._steps_done = _steps_done(run_values)
        if 'summary' in run_values.results:
            self._write(run_values.results['summary'], self._steps_done - 1)

    def end(self, session):
        if self._steps_done is not None and self._last_written != self._steps_done - 1:
            self._write(session.run(self._summary_op), self._steps_done - 1)
        self._writer.flush()

    def _write(self, summary, step):
        self._writer.add_summary(summary, step)
        self._last_written = step


class CheckpointHook(_StepHook):
    """Saves `train_dir/model.ckpt-<global step>` every `every_n_steps` steps and at the end.

    TensorFlow's saver writes the data under a temporary name and renames it, and rewrites the
    `checkpoint` index file atomically, so an interrupted save leaves the previous checkpoint
    as the newest.
    """

    def __init__(self, steps_done, saver, train_dir, every_n_steps, global_step):
        super().__init__(steps_done)
        self._saver = saver
        self._prefix = os.path.join(train_dir, 'model.ckpt')
        self._every = every_n_steps
        self._global_step = global_step
        self._last_saved = None

    def after_create_session(self, session, coord):
        self._last_saved = int(round(float(session.run(self._global_step))))

    def after_run(self, run_context, run_values):
        steps_done = _steps_done(run_values)
        if steps_done % self._every == 0:
            self._save(run_context.session, steps_done)

    def end(self, session):
        steps_done = int(round(float(session.run(self._global_step))))
        if steps_done != self._last_saved:
            self._save(session, steps_done)

    def _save(self, session, steps_done):
        self._saver.save(session, self._prefix, global_step=steps_done)
        self._last_saved = steps_done


class CloseSessionOnStopHook(tf.train.SessionRunHook):
    """Closes the session as soon as its coordinator is asked to stop.

    The SyncReplicas chief's queue runner waits in the gradient accumulators for the next
    step's gradients; after the last step none come, so `MonitoredSession.close` would wait
    its 120 s grace period for the thread, and the thread would then die of a CancelledError
    reported as a failure. Closing the session the moment the stop is requested (after every
    hook's `end`, so after the last checkpoint) cancels that wait at once, and since the stop
    was already requested the coordinator does not count the cancellation as an error.
    """

    def after_create_session(self, session, coord):
        closer = threading.Thread(target=self._close_on_stop, args=(session, coord),
                                  name='close_session_on_stop', daemon=True)
        coord.register_thread(closer)
        closer.start()

    @staticmethod
    def _close_on_stop(session, coord):
        coord.wait_for_stop()
        session.close()
