"""The training loop every script shares.

It runs a train op to `max_steps`, prints the tutorials' progress line, writes summaries and
`model.ckpt-<step>` checkpoints to `train_dir` (every 600 s or N steps, whichever comes first,
and at the end), resumes from the newest checkpoint there that reads whole, stops with
`LossDivergedError` when the loss is not finite, and on SIGTERM or Ctrl-C finishes the current
step, saves a last checkpoint and reports the stop.
At the end it logs the run's step timing and writes it to `train_dir/timing.json`.
The same loop serves one process and each worker of a cluster (`master`, `is_chief`).
"""
import collections
import logging
import os
import time

from towers.training import checkpoints
from towers.training import determinism
from towers.training import preemption
from towers.training import hooks as hooks_lib
from towers.training import progress
from towers.training import stopping
from towers.training import validation as validation_lib
from towers.compat import tf
from towers.files import TIMING_FILE, write_json

log = logging.getLogger(__name__)

# How often a worker other than the chief looks whether the chief has initialised the
# variables. TensorFlow's `WorkerSessionCreator` looks every 30 s, so a worker started with
# the chief idled for half a minute.
WORKER_WAIT_SECS = 1
WORKER_MAX_WAIT_SECS = 30 * 60

TrainResult = collections.namedtuple('TrainResult', ['steps_done', 'interrupted', 'timing'])
TrainResult.__doc__ = """What a call of `train` did.

Attributes:
  steps_done: the global step at the end.
  interrupted: True when SIGTERM or SIGINT (Ctrl-C) ended the run; the chief wrote a
    checkpoint of the step it ended at.
  timing: `StepTimerHook.summary()` of this run's steps.
"""


def train(train_op, loss, global_step, train_dir, max_steps, examples_per_step,
          num_towers=1, config=None, summary_op=None, saver=None,
          log_every_n_steps=10, save_summaries_steps=100, save_checkpoint_secs=600,
          save_checkpoint_steps=None, master='', is_chief=True, hooks=(), printer=print,
          initial_values=None, validation=None, save_input_position=False, scaffold=None,
          saving_listeners=(), save_initial_checkpoint=False, steps=None, step_hooks=(),
          as_tf1_estimator=False):
    """Runs `train_op` until the global step reaches `max_steps`.

    Args:
      train_op: the op of one training step; it must increment `global_step` by one.
      loss: scalar to log and guard against NaN (the tutorial logs the last tower's loss), or
        a dict name -> scalar of several models trained side by side, logged on one line.
      global_step: the global step variable (integer or float, as the tutorial's float32).
      train_dir: directory of checkpoints and event files; created if missing. Its newest
        checkpoint that reads whole is restored first (damaged newer ones are skipped, each
        with a warning naming it), and training continues from its step.
      max_steps: the global step to stop at; None: until the input ends (an
        `OutOfRangeError`, which ends the run as its last step would).
      examples_per_step: the global batch, for examples/sec; None when it is not known.
      num_towers: for the tutorial's sec/batch (the step time divided by the towers).
      config: the session `tf.ConfigProto` (from `configure_devices`).
      summary_op: summaries to write; all merged summaries by default. Or a dict run name ->
        summaries, each written to `train_dir/<run name>` ('' for `train_dir` itself), so
        that TensorBoard overlays the runs' equal tags (one run per model side by side).
      saver: the `tf.train.Saver` of checkpoints; by default one of all global variables
        (and with `save_input_position`, of the input's position) that keeps the 5 newest.
      log_every_n_steps, save_summaries_steps: intervals in steps (the tutorial's line, then
        `towers.training.progress`'s, with the step out of `max_steps` and the time left, and
        the step rate as summaries); log_every_n_steps None:
        no tutorial line (a caller that logs its own, as the Estimator does).
      save_checkpoint_secs, save_checkpoint_steps: a checkpoint is written after the first
        step that ends this long after the last one, or at each multiple of this many steps,
        whichever comes first (None turns either off); and always at the end, the last step
        or a stop. A process killed outright loses at most that interval.
      master: the session target ('' in-process, 'grpc://host:port' in a cluster).
      is_chief: whether this process initialises or restores the variables and writes
        checkpoints and summaries; other processes wait for the chief.
      hooks: extra `tf.train.SessionRunHook`s, run after the loop's own.
      printer: where progress lines go.
      initial_values: dict variable -> numpy array: values that these variables start from
        instead of their initializers' (pretrained weights); fed to the chief's initialisation
        of a run that has no checkpoint to resume, so that no constant of them enters the graph.
      validation: a `towers.training.validation.Built` network, which the chief runs between
        steps (every K steps and after the last), or None.
      save_input_position: whether checkpoints hold the training input's position too
        (`towers.training.determinism.Saver`), so that a resumed run reads the batches an
        uninterrupted one would have read.
      scaffold: a `tf.train.Scaffold` whose init op, init function, ready ops and local init
        op the run uses (a program's own, as an Estimator's `model_fn` gives one); the saver
        and summaries stay the loop's.
      saving_listeners: `tf.train.CheckpointSaverListener`s told of every checkpoint the chief
        writes; one whose `after_save` returns True ends the run.
      save_initial_checkpoint: whether the chief also writes a checkpoint of the step the run
        starts from (as TF 1.x's Estimator did: `model.ckpt-0` of a new run).
      steps: instead of `max_steps` (then None), how many steps to run past the step the
        run resumes from.
      step_hooks: functions steps_done -> `tf.train.SessionRunHook`, for hooks of the caller
        that read the global step after each step (`towers.training.hooks.StepHook`s), run
        after `hooks`.
      as_tf1_estimator: write into `train_dir` what TF 1.x's Estimator wrote: summaries at the
        global step after the step, from the run's first step (`hooks.SummaryHook`), not at
        the tutorial's step index; no timing.json.

    Returns:
      A `TrainResult`; its timing is also logged (steps, total time, median and mean step
      time, examples/sec at each) and, by the chief, written to `train_dir/timing.json` (with
      `num_towers`), when the run made steps (and not `as_tf1_estimator`).

    While it runs, SIGTERM and SIGINT (see `towers.training.preemption`) end the loop after the current
    step, and the chief saves a last checkpoint; in a cluster a step still blocked the stop's
    `grace_secs` later (waiting for a process that stopped first) is cancelled.

    Raises:
      LossDivergedError: the loss became NaN or infinite.
      TowersError: no checkpoint in `train_dir` reads whole, or one cannot be written.
    """
    with tf.name_scope('train_loop'):
        with tf.control_dependencies([train_op]):
            # A fresh read, not the variable's snapshot: on a parameter server of a cluster
            # the snapshot is sent to the worker without waiting for the train op.
            steps_done = tf.identity(global_step.read_value(), name='steps_done')
    if saver is None:
        saver = (determinism.Saver(max_to_keep=5) if save_input_position
                 else tf.train.Saver(tf.global_variables(), max_to_keep=5))
    if summary_op is None:
        summary_op = tf.summary.merge_all()
    summary_runs = summary_op if isinstance(summary_op, dict) else {'': summary_op}
    timer = hooks_lib.StepTimerHook(examples_per_step)
    stopper = hooks_lib.StopAtStepHook(steps_done, global_step, max_steps, steps)
    # Order matters: the guard raises before any later hook writes the diverged step.
    all_hooks = [hooks_lib.DivergenceGuardHook(steps_done, loss), timer, stopper]
    if log_every_n_steps:
        all_hooks.append(hooks_lib.LoggingHook(steps_done, loss, timer, num_towers,
                                               log_every_n_steps, printer))

    scaffold = tf.train.Scaffold(
        saver=saver, summary_op=summary_runs.get(''),
        init_feed_dict={variable.initial_value: value
                        for variable, value in (initial_values or {}).items()} or None,
        copy_from_scaffold=scaffold)
    if is_chief:
        tf.gfile.MakeDirs(train_dir)
        checkpoints.recover_history(saver, train_dir)
        saving = hooks_lib.CheckpointHook(steps_done, saver, train_dir, global_step,
                                          save_checkpoint_steps, save_checkpoint_secs,
                                          saving_listeners, save_initial_checkpoint)
        # The last checkpoint comes before the last summary, whose run reads one more batch
        # that the checkpoint's input position must not count.
        all_hooks.append(saving)
        for run, run_summary_op in summary_runs.items():
            if run_summary_op is not None:
                writer = tf.summary.FileWriterCache.get(
                    os.path.join(train_dir, run) if run else train_dir)
                all_hooks.append(hooks_lib.SummaryHook(steps_done, run_summary_op, writer,
                                                       save_summaries_steps,
                                                       as_tf1_estimator))
        if validation is not None:
            all_hooks.append(validation_lib.ValidationHook(steps_done, validation, max_steps,
                                                           train_dir, printer))
    if log_every_n_steps:
        # After the tutorial's line and the validation line of the same step.
        all_hooks.append(progress.ProgressHook(
            steps_done, max_steps, examples_per_step, log_every_n_steps, printer,
            tf.summary.FileWriterCache.get(train_dir) if is_chief else None))
    all_hooks.extend(hooks)
    all_hooks.extend(make(steps_done) for make in step_hooks)

    with preemption.stop_signals() as stop:
        if is_chief:
            creator = _ChiefSessionCreator(scaffold, master, config, train_dir)
        else:
            creator = _WorkerSessionCreator(scaffold, master, config, stop)
        # Only a cluster's step can wait for another process. The canceller comes first, so
        # that its `end` disarms it before the last save.
        canceller = stopping.CancelStepOnStopHook(stop, stop.grace_secs) if master else None
        loop_hooks = ([canceller] if canceller else []) + all_hooks
        try:
            with tf.train.MonitoredSession(session_creator=creator, hooks=loop_hooks) as sess:
                if stopper.steps_done:
                    log.info('resuming from step %d in %s', stopper.steps_done, train_dir)
                if stopper.finished:
                    log.info('nothing to train: step %d is the last (max_steps %d); a larger '
                             'max_steps trains on', stopper.steps_done, stopper.max_steps)
                while not (stopper.finished or sess.should_stop() or stop.requested):
                    sess.run(train_op)
        except _StoppedWaiting:
            pass
        except (tf.errors.CancelledError, RuntimeError):
            # A closed session makes the blocked run fail (CancelledError) or the next one
            # refuse (RuntimeError).
            if not (canceller and canceller.cancelled):
                raise
            if is_chief:
                saving.save_in_new_session(master, config)
        finally:
            if canceller:
                canceller.disarm()
    if stop.requested:
        log.warning('stopped by %s at step %s%s', stop.signal_name, stopper.steps_done,
                    '; last checkpoint %s' % tf.train.latest_checkpoint(train_dir)
                    if is_chief else '')
    tf.summary.FileWriterCache.clear()
    timing = timer.summary()
    if timing['steps']:
        log.info('%d steps in %.1f s: median %.3f s/step, %s examples/sec on %d tower(s); '
                 'mean %.3f s/step, %s examples/sec; steps alone %.1f s',
                 timing['steps'], timing['total_sec'], timing['median_step_sec'],
                 _rate(timing['examples_per_sec']), num_towers, timing['mean_step_sec'],
                 _rate(timing['examples_per_sec_mean']), timing['sum_step_sec'])
        if is_chief and not as_tf1_estimator:
            write_json(os.path.join(train_dir, TIMING_FILE), dict(timing, num_towers=num_towers))
    return TrainResult(stopper.steps_done, stop.requested, timing)


def _rate(examples_per_sec):
    return '?' if examples_per_sec is None else '%.1f' % examples_per_sec


class _StoppedWaiting(Exception):
    """A stop signal came while a worker waited for the chief."""


class _ChiefSessionCreator(tf.train.SessionCreator):
    """`tf.train.ChiefSessionCreator` that restores the newest checkpoint of `train_dir` that
    reads whole (`towers.training.checkpoints.newest_readable`), chosen again each time a session is
    made: `MonitoredSession` makes a new one when a parameter server comes back."""

    def __init__(self, scaffold, master, config, train_dir):
        self._scaffold = scaffold
        self._master = master
        self._config = config
        self._train_dir = train_dir

    def create_session(self):
        checkpoint = checkpoints.newest_readable(self._train_dir)
        return tf.train.ChiefSessionCreator(
            scaffold=self._scaffold, master=self._master, config=self._config,
            checkpoint_filename_with_path=checkpoint).create_session()


class _WorkerSessionCreator(tf.train.SessionCreator):
    """`tf.train.WorkerSessionCreator` that looks for the chief's variables every
    `WORKER_WAIT_SECS` (up to 30 minutes) instead of every 30 s, and gives up waiting with
    `_StoppedWaiting` when `stop` is requested."""

    def __init__(self, scaffold, master, config, stop):
        self._scaffold = scaffold
        self._master = master
        self._config = config
        self._stop = stop

    def create_session(self):
        self._scaffold.finalize()
        manager = tf.train.SessionManager(
            local_init_op=self._scaffold.local_init_op,
            local_init_feed_dict=self._scaffold.local_init_feed_dict,
            ready_op=self._scaffold.ready_op,
            ready_for_local_init_op=self._scaffold.ready_for_local_init_op,
            graph=tf.get_default_graph(), recovery_wait_secs=WORKER_WAIT_SECS)
        deadline = time.monotonic() + WORKER_MAX_WAIT_SECS
        while True:
            try:
                # One look: less than `recovery_wait_secs` to wait makes it give up at once.
                return manager.wait_for_session(self._master, config=self._config,
                                                max_wait_secs=WORKER_WAIT_SECS / 2)
            except tf.errors.DeadlineExceededError:
                if time.monotonic() > deadline:
                    raise
            if self._stop.wait(WORKER_WAIT_SECS):
                raise _StoppedWaiting()
