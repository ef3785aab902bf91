"""Specification of a training's progress: the step out of max_steps, the rate and the time left
beside the tutorial's line, and the step rate in TensorBoard."""
import numpy as np

from towers.compat import tf
from towers.training.progress import ProgressHook


class Values:
    def __init__(self, steps_done):
        self.results = {'steps_done': np.int64(steps_done)}


def run(hook, steps, seconds_per_step):
    """Runs `hook` after steps 1..steps, each `seconds_per_step` long on its clock."""
    for done in range(1, steps + 1):
        hook.now = done * seconds_per_step
        hook.after_run(None, Values(done))


def make(printed, max_steps, writer=None, examples=None):
    hook = ProgressHook(tf.constant(0), max_steps, examples, 10, printer=lambda line, flush:
                        printed.append(line), writer=writer, clock=lambda: hook.now)
    return hook


def test_it_says_the_step_out_of_max_steps_the_rate_and_the_time_left_and_ends_at_the_last():
    printed = []
    run(make(printed, 30), 30, 0.5)
    assert printed == ['progress: 11/30 steps (36%), 2.0 steps/sec, 0:00:10 left',
                       'progress: 21/30 steps (70%), 2.0 steps/sec, 0:00:04 left',
                       'progress: 30/30 steps (100%), 2.0 steps/sec, 0:00:00 left']


def test_without_max_steps_it_says_the_step_alone():
    printed = []
    run(make(printed, None), 21, 0.25)
    assert printed == ['progress: 11 steps, 4.0 steps/sec', 'progress: 21 steps, 4.0 steps/sec']


def test_the_chief_writes_the_step_rate_and_examples_per_second(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path))
    run(make([], 20, writer, examples=64), 20, 0.5)
    writer.close()
    found = {}
    for name in tmp_path.iterdir():
        for event in tf.train.summary_iterator(str(name)):
            for value in event.summary.value:
                found[(value.tag, event.step)] = value.simple_value
    assert found == {('global_step/sec', 11): 2.0, ('examples/sec', 11): 128.0,
                     ('global_step/sec', 20): 2.0, ('examples/sec', 20): 128.0}
