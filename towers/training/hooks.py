"""Session-run hooks of the training loop.

TensorFlow's own hooks insist on an integer `global_step`; the tutorials this project
reproduces keep theirs as float32 (and their checkpoints store it so), so these hooks take the
step from the loop instead. Each reads `steps_done`: the global step after the run, which the
loop fetches after the train op.
"""
import datetime
import logging
import os
import threading
import time

import numpy as np

from towers.compat import tf
from towers.training import checkpoints
from towers.errors import LossDivergedError, TowersError, tf_error_cause

log = logging.getLogger(__name__)

LOG_FORMAT = '%s: step %d, loss = %.2f (%.1f examples/sec; %.3f sec/batch)'
# Models trained side by side: every model's loss on the one line, e.g. 'loss unet = 0.5213,
# fpn = 0.6110'.
NAMED_LOSSES_FORMAT = '%s: step %d, loss %s (%.1f examples/sec; %.3f sec/batch)'


def read_steps_done(run_values):
    """The global step after a run, from the `steps_done` a `StepHook` fetched."""
    return int(round(float(run_values.results['steps_done'])))


def _read_step(session, global_step):
    return int(round(float(session.run(global_step))))


class StepHook(tf.train.SessionRunHook):
    """Fetches `steps_done` (and any `extra` tensors) with every run; `read_steps_done` reads
    it in `after_run`."""

    def __init__(self, steps_done, **extra):
        self._fetches = dict(extra, steps_done=steps_done)

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._fetches)


class DivergenceGuardHook(StepHook):
    """Stops training with `LossDivergedError` when the loss (or one of a dict of named
    losses) is NaN or infinite.

    It must come before the checkpoint hook, so that no checkpoint of a diverged step is written.
    """

    def __init__(self, steps_done, loss):
        super().__init__(steps_done, loss=loss)

    def after_run(self, run_context, run_values):
        loss_value = run_values.results['loss']
        named = loss_value if isinstance(loss_value, dict) else {None: loss_value}
        for name, value in named.items():
            if not np.all(np.isfinite(value)):
                raise LossDivergedError(read_steps_done(run_values) - 1, float(value), name)


class StopAtStepHook(StepHook):
    """Requests a stop once the global step reaches `max_steps` (None: never), an attribute
    (with `more_steps`, set once a session starts)."""

    def __init__(self, steps_done, global_step, max_steps, more_steps=None):
        """`more_steps`, instead of `max_steps`: how many past the step a session starts at."""
        super().__init__(steps_done)
        self._global_step = global_step
        self.max_steps = max_steps
        self._more_steps = more_steps
        self.steps_done = None

    def after_create_session(self, session, coord):
        self.steps_done = _read_step(session, self._global_step)
        if self._more_steps is not None:
            self.max_steps = self.steps_done + self._more_steps

    @property
    def finished(self):
        return (self.max_steps is not None and self.steps_done is not None
                and self.steps_done >= self.max_steps)

    def after_run(self, run_context, run_values):
        self.steps_done = read_steps_done(run_values)
        if self.finished:
            run_context.request_stop()


class StepTimerHook(tf.train.SessionRunHook):
    """Times every step: the wall time of each `session.run` of the train op.

    Its `summary` gives the figures of the `TimeHistory` callback of the Keras multi-GPU
    Estimator examples (every step's time, their sum as the total time, images/sec from the mean
    step time) and the median beside them, which one slow step (the first, where the graph is
    optimised, or one disturbed by another process) does not move.

    Attributes:
      durations: seconds of each step so far.
    """

    def __init__(self, examples_per_step, clock=time.time):
        """Args:
          examples_per_step: the global batch of one step, or None when it is not known
            (the examples/sec figures are None then).
          clock: the time in seconds (for tests).
        """
        self.examples_per_step = examples_per_step
        self.durations = []
        self._clock = clock
        self._start = None
        self._first_start = None

    def before_run(self, run_context):
        self._start = self._clock()
        if self._first_start is None:
            self._first_start = self._start

    def after_run(self, run_context, run_values):
        self.durations.append(self._clock() - self._start)

    def summary(self):
        """The timing of the steps so far, as a dict ready for JSON.

        Returns:
          A dict: steps; step_secs (each step's seconds, in order); sum_step_sec (their sum, the
          reference's total time); mean_step_sec and median_step_sec; examples_per_step (the
          global batch: batch per tower x towers); examples_per_sec_mean (examples_per_step /
          mean_step_sec, the reference's images/sec); examples_per_sec (at the median);
          total_sec (wall time from the first step's start until now, hooks and checkpoints
          included). The step-time figures are None without steps.
        """
        steps = len(self.durations)
        mean = float(np.mean(self.durations)) if steps else None
        median = float(np.median(self.durations)) if steps else None
        rated = steps and self.examples_per_step is not None
        return {'steps': steps, 'step_secs': [float(d) for d in self.durations],
                'sum_step_sec': float(np.sum(self.durations)),
                'mean_step_sec': mean, 'median_step_sec': median,
                'examples_per_step': self.examples_per_step,
                'examples_per_sec_mean': self.examples_per_step / mean if rated else None,
                'examples_per_sec': self.examples_per_step / median if rated else None,
                'total_sec': self._clock() - self._first_start if steps else 0.0}


class LoggingHook(StepHook):
    """Prints the tutorial's progress line every `every_n_steps` steps; for a dict of named
    losses, each name and loss (`NAMED_LOSSES_FORMAT`)."""

    def __init__(self, steps_done, loss, timer, num_towers, every_n_steps=10, printer=print):
        super().__init__(steps_done, loss=loss)
        self._timer = timer
        self._num_towers = num_towers
        self._every = every_n_steps
        self._print = printer

    def after_run(self, run_context, run_values):
        step = read_steps_done(run_values) - 1
        if step % self._every:
            return
        duration = self._timer.durations[-1]
        loss = run_values.results['loss']
        line = LOG_FORMAT
        if isinstance(loss, dict):
            line = NAMED_LOSSES_FORMAT
            loss = ', '.join('%s = %.4f' % named for named in loss.items())
        self._print(line % (datetime.datetime.now(), step, loss,
                            self._timer.examples_per_step / duration,
                            duration / self._num_towers), flush=True)


class SummaryHook(StepHook):
    """Writes `summary_op` to `writer` every `every_n_steps` steps and after the last one
    (unless the run ended because its input did), at each step's index (the tutorial's
    `add_summary(summary_str, step)`, from 0).

    With `at_global_step`, as TF 1.x's `SummarySaverHook` of the Estimator and
    `MonitoredTrainingSession` wrote them instead: at the global step after the step (1 for a
    new run's first), with the first step of the run and then every `every_n_steps` global
    steps after the last written, and nothing more at the end.
    """

    def __init__(self, steps_done, summary_op, writer, every_n_steps, at_global_step=False):
        super().__init__(steps_done)
        self._summary_op = summary_op
        self._writer = writer
        self._every = every_n_steps
        self._at_global_step = at_global_step
        self._last_written = None
        self._steps_done = None

    def _due(self):
        if self._steps_done is None:
            return True
        if self._at_global_step:
            return self._steps_done + 1 >= self._last_written + self._every
        return self._steps_done % self._every == 0

    def before_run(self, run_context):
        fetches = dict(self._fetches)
        if self._due():
            fetches['summary'] = self._summary_op
        return tf.train.SessionRunArgs(fetches)

    def after_run(self, run_context, run_values):
        self._steps_done = read_steps_done(run_values)
        if 'summary' in run_values.results:
            self._write(run_values.results['summary'],
                        self._steps_done - (0 if self._at_global_step else 1))

    def end(self, session):
        if (not self._at_global_step and self._steps_done is not None
                and self._last_written != self._steps_done - 1):
            try:
                self._write(session.run(self._summary_op), self._steps_done - 1)
            except tf.errors.OutOfRangeError:
                pass  # a run that ended with its input has no batch left to summarise
        self._writer.flush()

    def _write(self, summary, step):
        self._writer.add_summary(summary, step)
        self._last_written = step


class CheckpointHook(StepHook):
    """Saves `train_dir/model.ckpt-<global step>` every `every_n_steps` steps or every
    `every_n_secs` seconds, whichever comes first, and at the end (the last step, or a stop).

    TensorFlow's saver writes the data and the index under temporary names and renames them,
    and the `checkpoint` state file atomically: a save killed or failing leaves the previous
    checkpoint the newest. A failed save ends training with a `TowersError` saying why (a full
    disk as such) and naming that checkpoint. Listeners hear of each save as TF 1.x's hook
    told them; one whose `after_save` returns True ends the run.
    """

    def __init__(self, steps_done, saver, train_dir, global_step, every_n_steps=None,
                 every_n_secs=None, listeners=(), save_at_start=False):
        """Args:
          steps_done: the global step after the run, as the loop fetches it.
          saver: the `tf.train.Saver` to save with.
          train_dir: the directory of the checkpoints.
          global_step: the global step variable.
          every_n_steps: save when the global step is a multiple of it; None: never for that.
          every_n_secs: save after the first step that ends this long after the last save;
            None: never for that.
          listeners: `tf.train.CheckpointSaverListener`s.
          save_at_start: also save the step a new session starts from, unless saved (TF 1.x's
            Estimator wrote `model.ckpt-0` so).
        """
        super().__init__(steps_done)
        self._saver = saver
        self._train_dir = train_dir
        self._prefix = os.path.join(train_dir, 'model.ckpt')
        self._global_step = global_step
        self._every_steps = every_n_steps
        self._every_secs = every_n_secs
        # The loop's thread and a cancelled chief's save never write at once.
        self._lock = threading.Lock()
        self._last_saved = None
        self._last_time = None
        self._listeners = list(listeners)
        self._save_at_start = save_at_start

    def begin(self):
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        step = _read_step(session, self._global_step)
        self._last_time = time.monotonic()
        if self._save_at_start and not checkpoints.exists('%s-%d' % (self._prefix, step)):
            self._save(session, step)
        self._last_saved = step

    def after_run(self, run_context, run_values):
        steps_done = read_steps_done(run_values)
        if ((self._every_steps and steps_done % self._every_steps == 0)
                or (self._every_secs is not None
                    and time.monotonic() - self._last_time >= self._every_secs)):
            if self._save(run_context.session, steps_done):
                run_context.request_stop()

    def end(self, session):
        step = _read_step(session, self._global_step)
        self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def save_in_new_session(self, master, config):
        """Saves the current step through a session of its own.

        For a cluster's chief whose training session was closed to cancel a blocked step: the
        variables live on the parameter servers and outlast that session.
        """
        with tf.Session(master, config=config) as session:
            self._save(session, _read_step(session, self._global_step))

    def _save(self, session, steps_done):
        """Saves `steps_done` unless saved already; returns whether a listener asks to stop."""
        with self._lock:
            if steps_done == self._last_saved:
                return False
            tf.logging.info('Saving checkpoints for %d into %s.', steps_done, self._prefix)
            for listener in self._listeners:
                listener.before_save(session, steps_done)
            try:
                self._saver.save(session, self._prefix, global_step=steps_done)
            except tf.errors.OpError as err:
                cause = tf_error_cause(err.message)
                full = (isinstance(err, tf.errors.ResourceExhaustedError)
                        or 'No space left' in cause)
                previous = tf.train.latest_checkpoint(self._train_dir)
                raise TowersError(
                    '%s: cannot write checkpoint %s-%d (%s); %s' % (
                        'the disk is full' if full else 'saving failed', self._prefix,
                        steps_done, cause,
                        'the previous checkpoint %s is intact, and a restart resumes from it'
                        % previous if previous else 'no checkpoint was written before'))
            self._last_saved = steps_done
            self._last_time = time.monotonic()
            stop = False
            for listener in self._listeners:
                stop = bool(listener.after_save(session, steps_done)) or stop
            return stop
