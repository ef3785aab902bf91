"""How far a training is, and how long it has left: a line beside the tutorial's, and the step rate
in TensorBoard.

The CIFAR-10 tutorial's line (`step 30, loss = 2.31 (512.3 examples/sec; 0.250 sec/batch)`)
stays as it was: users' log parsers and the live regression read it. `ProgressHook` prints after
it, at the same steps and after the last,

    progress: 30/1000 steps (3%), 4.1 steps/sec, 0:03:56 left

the rate measured since its last line, the time left at that rate; without a `max_steps` (a run
until its input ends) the step alone. On the chief it also writes the rate as the summaries
`global_step/sec` and `examples/sec` (TF 1.x's Estimator names) at that step.
"""
import datetime
import time

from towers.compat import tf
from towers.training.hooks import StepHook, read_steps_done

PROGRESS_FORMAT = 'progress: %s steps%s, %.1f steps/sec%s'


class ProgressHook(StepHook):
    """The progress line and step-rate summaries (see the module docstring).

    Args:
      steps_done: the global step after the train op, as every `StepHook` fetches it.
      max_steps: the global step the run stops at, or None.
      examples_per_step: examples of one step (for examples/sec), or None.
      every_n_steps: as the tutorial's line (after steps 0, N, 2N, ...).
      printer: prints one line (`print`).
      writer: a `tf.summary.FileWriter` for the rate summaries, or None.
      clock: seconds, `time.time` by default.
    """

    def __init__(self, steps_done, max_steps, examples_per_step, every_n_steps, printer=print,
                 writer=None, clock=time.time):
        super().__init__(steps_done)
        self._max_steps = max_steps
        self._examples = examples_per_step
        self._every = every_n_steps
        self._print = printer
        self._writer = writer
        self._clock = clock
        self._last = None

    def after_run(self, run_context, run_values):
        done = read_steps_done(run_values)
        now = self._clock()
        if self._last is None:
            self._last = (done, now)
        if (done - 1) % self._every and done != self._max_steps:
            return
        steps, seconds = done - self._last[0], now - self._last[1]
        self._last = (done, now)
        if steps <= 0 or seconds <= 0:
            return
        rate = steps / seconds
        if self._max_steps:
            total = '%d/%d' % (done, self._max_steps)
            share = ' (%d%%)' % (100 * done // self._max_steps)
            left = ', %s left' % datetime.timedelta(
                seconds=round(max(self._max_steps - done, 0) / rate))
        else:
            total, share, left = '%d' % done, '', ''
        self._print(PROGRESS_FORMAT % (total, share, rate, left), flush=True)
        if self._writer is not None:
            self._writer.add_summary(rate_summary(rate, self._examples), done)


def rate_summary(steps_per_sec, examples_per_step=None):
    """The summaries 'global_step/sec' and, given `examples_per_step`, 'examples/sec' (TF
    1.x's names) of a step rate."""
    values = [tf.Summary.Value(tag='global_step/sec', simple_value=steps_per_sec)]
    if examples_per_step:
        values.append(tf.Summary.Value(tag='examples/sec',
                                       simple_value=steps_per_sec * examples_per_step))
    return tf.Summary(value=values)
