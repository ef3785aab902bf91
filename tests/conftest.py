"""Each test builds its graph in a fresh default graph; `timed_steps` makes step timers of given
step times."""
import pytest

from towers.compat import tf
from towers.training.hooks import StepTimerHook


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as graph:
        yield graph


@pytest.fixture
def timed_steps():
    """A function (step seconds, examples per step) -> a `StepTimerHook` that has timed steps
    of those seconds, one second apart, on a clock of its own."""
    def make(step_secs, examples_per_step):
        now = [0.0]
        timer = StepTimerHook(examples_per_step, clock=lambda: now[0])
        for seconds in step_secs:
            timer.before_run(None)
            now[0] += seconds
            timer.after_run(None, None)
            now[0] += 1.0
        return timer
    return make
