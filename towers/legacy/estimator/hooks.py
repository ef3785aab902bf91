"""TF 1.15's `tf.estimator.experimental.InMemoryEvaluatorHook` and
`make_stop_at_checkpoint_step_hook` (`tensorflow_estimator.python.estimator.hooks.hooks`).

    evaluator = tf.estimator.experimental.InMemoryEvaluatorHook(
        estimator, eval_input_fn, every_n_iter=100)
    estimator.train(train_input_fn, hooks=[evaluator])   # evaluations in model_dir/eval

The evaluator evaluates the variables training holds in memory, no checkpoint read: once
when the training session starts, every `every_n_iter` training steps, and at the end, each
written to `eval_dir(name)` at the training's global step.
"""
import time

from towers.compat import tf
from towers.evaluation.restore import load_variables
from towers.legacy.estimator import calls, running
from towers.legacy.estimator.spec import EstimatorError, ModeKeys
from towers.training import checkpoints


class InMemoryEvaluatorHook(tf.train.SessionRunHook):
    """Evaluates `estimator`'s EVAL network on `input_fn` with the training's variable values.

    Args:
      estimator: the `tf.estimator.Estimator` being trained (on one machine).
      input_fn, steps, hooks, name: as `Estimator.evaluate` takes them.
      every_n_iter: training steps (runs of this hook) between two evaluations.

    Raises:
      EstimatorError (a `ValueError`): `every_n_iter` is not positive; the estimator's
        `RunConfig` has parameter servers or several workers; and, when the evaluation graph
        is built (`begin`) or the training session made, a `model_fn` scaffold with its own
        saver or `init_fn`, or saveables other than variables in training, none of which can
        be copied in memory.
    """

    def __init__(self, estimator, input_fn, steps=None, hooks=None, name=None,
                 every_n_iter=100):
        if every_n_iter is None or every_n_iter <= 0:
            raise EstimatorError('InMemoryEvaluatorHook: invalid every_n_iter=%s (expected a '
                                 'positive number of training steps).' % every_n_iter)
        config = estimator.config
        if config.num_ps_replicas > 0 or config.num_worker_replicas > 1:
            raise EstimatorError(
                'InMemoryEvaluator supports only single machine (aka Local) setting: the '
                "RunConfig's TF_CONFIG has %d parameter servers and %d workers"
                % (config.num_ps_replicas, config.num_worker_replicas))
        self._estimator = estimator
        self._input_fn = input_fn
        self._steps = steps
        self._eval_dir = estimator.eval_dir(name)
        self._hooks = running.checked_hooks(hooks, 'InMemoryEvaluatorHook hooks')
        self._timer = tf.train.SecondOrStepTimer(every_steps=every_n_iter)
        self._graph = self._outputs = self._init = None
        self._iter_count = 0
        self._train_variables = {}

    def begin(self):
        """Builds the evaluation graph."""
        self._timer.reset()
        self._iter_count = 0
        self._graph = tf.Graph()
        with self._graph.as_default():
            if self._estimator.config.tf_random_seed is not None:
                self._graph.seed = self._estimator.config.tf_random_seed
            self._outputs = self._build()
            self._init = tf.group(tf.global_variables_initializer(), tf.tables_initializer())

    def _build(self):
        global_step = tf.train.get_or_create_global_step()
        features, labels, input_hooks = calls.call_input_fn(
            self._input_fn, ModeKeys.EVAL, self._estimator.params, self._estimator.config)
        spec = self._estimator.model_fn(features, labels, ModeKeys.EVAL,
                                        self._estimator.config)
        if spec.scaffold.saver is not None:
            raise EstimatorError('InMemoryEvaluator does not support custom saver: the '
                                 "model_fn's EVAL scaffold has one")
        if spec.scaffold.init_fn is not None:
            raise EstimatorError('InMemoryEvaluator does not support custom init_fn: the '
                                 "model_fn's EVAL scaffold has one")
        return running.evaluation_outputs(spec, global_step, input_hooks)

    def after_create_session(self, session, coord):
        """Evaluates the values training starts from."""
        graph = session.graph
        if graph.get_collection(tf.GraphKeys.SAVEABLE_OBJECTS):
            raise EstimatorError('InMemoryEvaluator does not support saveables other than '
                                 'global variables (the training graph has SAVEABLE_OBJECTS)')
        evaluated = {variable.op.name
                     for variable in self._graph.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)}
        self._train_variables = {
            variable.op.name: variable
            for variable in graph.get_collection(tf.GraphKeys.GLOBAL_VARIABLES)
            if variable.op.name in evaluated}
        self._evaluate(session)

    def after_run(self, run_context, run_values):
        self._iter_count += 1
        if self._timer.should_trigger_for_step(self._iter_count):
            self._evaluate(run_context.session)

    def end(self, session):
        """Evaluates the final values."""
        self._evaluate(session)

    def _evaluate(self, train_session):
        """Evaluates the training's values in a new session of the evaluation graph and
        writes the metrics to the evaluation folder at their global step."""
        values = train_session.run(self._train_variables)
        outputs = self._outputs
        ends = tf.train.FinalOpsHook({'values': outputs['values'],
                                      'global_step': outputs['global_step']})
        hooks = outputs['hooks'] + self._hooks + [running.EvaluationStepsHook(self._steps), ends]
        session = tf.Session(graph=self._graph, config=self._estimator.config.session_config)
        with self._graph.as_default():
            session.run(self._init)
            load_variables(session, self._graph, values)
            creator = running.GivenSession(session, outputs['local_init'])
            with tf.train.MonitoredSession(session_creator=creator, hooks=hooks) as monitored:
                while not monitored.should_stop():
                    monitored.run(outputs['update'])
        results = dict(ends.final_ops_values['values'])
        results['global_step'] = int(ends.final_ops_values['global_step'])
        tf.logging.info('Saving dict for global step %d: %s', results['global_step'],
                        ', '.join('%s = %s' % item for item in sorted(results.items())))
        running.write_summaries(self._eval_dir, results, None)
        self._timer.update_last_triggered_step(self._iter_count)


class _StopAtCheckpointStepHook(tf.train.SessionRunHook):
    """Asks to stop once the global step reaches `last_step` and a checkpoint of `model_dir`
    of that step exists; until it does, waits `wait_after_file_check_secs` after each look
    (many workers reading one folder).

    Raises:
      EstimatorError (a `ValueError`): `last_step` or `model_dir` is None.
      RuntimeError: (in `begin`) the graph has no global step.
    """

    def __init__(self, model_dir, last_step, wait_after_file_check_secs=30):
        if last_step is None:
            raise EstimatorError('StopAtCheckpointStepHook: last_step must be specified.')
        if model_dir is None:
            raise EstimatorError('StopAtCheckpointStepHook: model_dir must be specified.')
        self._model_dir = model_dir
        self._last_step = last_step
        self._wait_after_file_check_secs = wait_after_file_check_secs
        self._global_step = None

    def begin(self):
        self._global_step = tf.train.get_global_step()
        if self._global_step is None:
            raise RuntimeError('Global step should be created to use StopAtCheckpointStepHook.')

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        if run_values.results + 1 < self._last_step:
            return
        saved = checkpoints.saved_step(tf.train.latest_checkpoint(self._model_dir))
        if saved >= self._last_step:
            run_context.request_stop()
        else:
            time.sleep(self._wait_after_file_check_secs)


def make_stop_at_checkpoint_step_hook(estimator, last_step, wait_after_file_check_secs=30):
    """A hook ending training at global step `last_step`: the chief's `tf.train.StopAtStepHook`;
    another worker's waits for the chief's checkpoint of that step (`_StopAtCheckpointStepHook`).
    """
    if estimator.config.is_chief:
        return tf.train.StopAtStepHook(last_step=last_step)
    return _StopAtCheckpointStepHook(estimator.model_dir, last_step, wait_after_file_check_secs)
