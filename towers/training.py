"""The training loop every script shares.

It runs a train op to `max_steps`, prints the tutorials' progress line, writes summaries and
`model.ckpt-<step>` checkpoints to `train_dir`, resumes from the newest checkpoint there, stops
with `LossDivergedError` when the loss is not finite, and saves a last checkpoint on Ctrl-C.
The same loop serves one process and each worker of a cluster (`master`, `is_chief`).
"""
import collections
import logging
import os

from towers import hooks as hooks_lib
from towers.compat import tf

log = logging.getLogger(__name__)

# How often a worker other than the chief looks whether the chief has initialised the
# variables. TensorFlow's `WorkerSessionCreator` looks every 30 s, so a worker started with
# the chief idled for half a minute.
WORKER_WAIT_SECS = 1

TrainResult = collections.namedtuple('TrainResult', ['steps_done', 'interrupted', 'timing'])
TrainResult.__doc__ = """What a call of `train` did.

Attributes:
  steps_done: the global step at the end.
  interrupted: True when Ctrl-C ended the run (a checkpoint was written).
  timing: `StepTimerHook.summary()` of this run's steps.
"""


def train(train_op, loss, global_step, train_dir, max_steps, examples_per_step,
          num_towers=1, config=None, summary_op=None, saver=None,
          log_every_n_steps=10, save_summaries_steps=100, save_checkpoint_steps=1000,
          master='', is_chief=True, hooks=(), printer=print):
    """Runs `train_op` until the global step reaches `max_steps`.

    Args:
      train_op: the op of one training step; it must increment `global_step` by one.
      loss: scalar to log and guard against NaN (the tutorial logs the last tower's loss).
      global_step: the global step variable (integer or float, as the tutorial's float32).
      train_dir: directory of checkpoints and event files; created if missing. A checkpoint
        there is restored first, and training continues from its step.
      max_steps: the global step to stop at.
      examples_per_step: the global batch, for examples/sec.
      num_towers: for the tutorial's sec/batch (the step time divided by the towers).
      config: the session `tf.ConfigProto` (from `configure_devices`).
      summary_op: summaries to write; all merged summaries by default.
      saver: the `tf.train.Saver` of checkpoints; one of all global variables by default.
      log_every_n_steps, save_summaries_steps, save_checkpoint_steps: intervals in steps.
      master: the session target ('' in-process, 'grpc://host:port' in a cluster).
      is_chief: whether this process initialises or restores the variables and writes
        checkpoints and summaries; other processes wait for the chief.
      hooks: extra `tf.train.SessionRunHook`s, run after the loop's own.
      printer: where progress lines go.

    Returns:
      A `TrainResult`; its timing is also logged (steps, total time, median step time,
      examples/sec).

    Raises:
      LossDivergedError: the loss became NaN or infinite.
    """
    with tf.name_scope('train_loop'):
        with tf.control_dependencies([train_op]):
            # A fresh read, not the variable's snapshot: on a parameter server of a cluster
            # the snapshot is sent to the worker without waiting for the train op.
            steps_done = tf.identity(global_step.read_value(), name='steps_done')
    if saver is None:
        saver = tf.train.Saver(tf.global_variables(), max_to_keep=5)
    if summary_op is None:
        summary_op = tf.summary.merge_all()
    timer = hooks_lib.StepTimerHook(examples_per_step)
    stopper = hooks_lib.StopAtStepHook(steps_done, global_step, max_steps)
    # Order matters: the guard raises before any later hook writes the diverged step.
    all_hooks = [hooks_lib.DivergenceGuardHook(steps_done, loss), timer, stopper,
                 hooks_lib.LoggingHook(steps_done, loss, timer, num_towers,
                                       log_every_n_steps, printer)]
    scaffold = tf.train.Scaffold(saver=saver, summary_op=summary_op)
    if is_chief:
        tf.gfile.MakeDirs(train_dir)
        if summary_op is not None:
            writer = tf.summary.FileWriterCache.get(train_dir)
            all_hooks.append(hooks_lib.SummaryHook(steps_done, summary_op, writer,
                                                   save_summaries_steps))
        all_hooks.append(hooks_lib.CheckpointHook(steps_done, saver, train_dir,
                                                  save_checkpoint_steps, global_step))
        creator = tf.train.ChiefSessionCreator(scaffold=scaffold, master=master, config=config,
                                               checkpoint_dir=train_dir)
    else:
        creator = _WorkerSessionCreator(scaffold, master, config)
    all_hooks.extend(hooks)

    interrupted = False
    with tf.train.MonitoredSession(session_creator=creator, hooks=all_hooks) as sess:
        if stopper.steps_done:
            log.info('resuming from step %d in %s', stopper.steps_done, train_dir)
        try:
            while not stopper.finished and not sess.should_stop():
                sess.run(train_op)
        except KeyboardInterrupt:
            interrupted = True
            log.warning('interrupted at step %s; writing a last checkpoint to %s',
                        stopper.steps_done, os.path.abspath(train_dir))
    tf.summary.FileWriterCache.clear()
    timing = timer.summary()
    if timing['steps']:
        log.info('%d steps in %.1f s: median %.3f s/step, %.1f examples/sec on %d tower(s)',
                 timing['steps'], timing['total_sec'], timing['median_step_sec'],
                 timing['examples_per_sec'], num_towers)
    return TrainResult(stopper.steps_done, interrupted, timing)


class _WorkerSessionCreator(tf.train.SessionCreator):
    """`tf.train.WorkerSessionCreator` that looks for the chief's variables every
    `WORKER_WAIT_SECS` (up to 30 minutes) instead of every 30 s."""

    def __init__(self, scaffold, master, config):
        self._scaffold = scaffold
        self._master = master
        self._config = config

    def create_session(self):
        self._scaffold.finalize()
        manager = tf.train.SessionManager(
            local_init_op=self._scaffold.local_init_op,
            local_init_feed_dict=self._scaffold.local_init_feed_dict,
            ready_op=self._scaffold.ready_op,
            ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
            graph=tf.get_default_graph(), recovery_wait_secs=WORKER_WAIT_SECS)
        return manager.wait_for_session(self._master, config=self._config,
                                        max_wait_secs=30 * 60)
