"""`tf.contrib.learn.learn_runner` (also `tensorflow.contrib.learn.python.learn.learn_runner`):
makes an `Experiment` and runs one of its schedules, as TF 1.x did.

    learn_runner.run(experiment_fn, run_config=tf.contrib.learn.RunConfig(model_dir=...),
                     hparams=tf.contrib.training.HParams(...), schedule=None)

`experiment_fn(run_config, hparams)` (or, the older form, `experiment_fn(output_dir)`) returns
the `Experiment`; its Estimator must have been given that `run_config` (checked by `uid`).
Without a `schedule`, the task's role chooses it: 'train_and_evaluate' on one machine (no
cluster, or a one-task cluster) and for a 'master' task, 'train' for a 'worker', and
'run_std_server' for a 'ps'.
"""
from towers.legacy.contrib.hparam import HParams
from towers.legacy.contrib.learn.experiment import Experiment
from towers.legacy.contrib.learn.run_config import RunConfig, TaskType
from towers.legacy.estimator.spec import EstimatorError

_DEFAULT_SCHEDULES = {TaskType.MASTER: 'train_and_evaluate', TaskType.PS: 'run_std_server',
                      TaskType.WORKER: 'train'}


def run(experiment_fn, output_dir=None, schedule=None, run_config=None, hparams=None):
    """Makes the `Experiment` and runs its method named `schedule`.

    Args:
      experiment_fn: (run_config, hparams) -> `Experiment`, or (output_dir) -> `Experiment`.
      output_dir: the model directory, for the older `experiment_fn(output_dir)`; or None.
      schedule: the name of an `Experiment` method; None for the task's default.
      run_config: a `tf.contrib.learn.RunConfig` with a `model_dir` (not with `output_dir`).
      hparams: a `tf.contrib.training.HParams`, or None.

    Returns:
      What the schedule returns.

    Raises:
      EstimatorError: both or neither of `output_dir` and `run_config`, or an empty
        `output_dir`; a `run_config` that is no `tf.contrib.learn.RunConfig` or has no
        `model_dir`; `hparams` that are no `HParams`; a schedule the `Experiment` lacks, or
        none given for a cluster task without a default (see `default_schedule`).
      TypeError: an `experiment_fn` that is not callable or returns no `Experiment`; a
        schedule that names no method.
      RuntimeError: an `experiment_fn` that builds its Estimator with another configuration.
    """
    if output_dir is not None and run_config is not None:
        raise EstimatorError('learn_runner.run: give output_dir or run_config, not both')
    if output_dir is None and run_config is None:
        raise EstimatorError('learn_runner.run: give run_config (or output_dir)')
    if not callable(experiment_fn):
        raise TypeError('learn_runner.run: Experiment builder %r is not callable'
                        % (experiment_fn,))
    if run_config is not None:
        experiment = _checked_experiment(experiment_fn, run_config, hparams)
    else:
        if not output_dir:
            raise EstimatorError('learn_runner.run: Must specify an output directory (got %r)'
                                 % (output_dir,))
        if hparams is not None:
            raise EstimatorError('learn_runner.run: an experiment_fn(output_dir) takes no '
                                 'hparams; give run_config instead of output_dir')
        experiment = _experiment(experiment_fn(output_dir=output_dir))
    return _execute(experiment, schedule or default_schedule(
        run_config or experiment.estimator.config))


def _experiment(experiment):
    if not isinstance(experiment, Experiment):
        raise TypeError('learn_runner.run: Experiment builder did not return an Experiment '
                        '(tf.contrib.learn.Experiment), got %s' % type(experiment).__name__)
    return experiment


def _checked_experiment(experiment_fn, run_config, hparams):
    """`experiment_fn(run_config, hparams)`, checked as TF 1.x checked it."""
    if not isinstance(run_config, RunConfig):
        raise EstimatorError('learn_runner.run: run_config must be a tf.contrib.learn.RunConfig, '
                             'got %s' % type(run_config).__name__)
    if not run_config.model_dir:
        raise EstimatorError('learn_runner.run: run_config has no model_dir: give '
                             'RunConfig(model_dir=...)')
    if hparams is not None and not isinstance(hparams, HParams):
        raise EstimatorError('learn_runner.run: hparams must be a tf.contrib.training.HParams, '
                             'got %s' % type(hparams).__name__)
    expected = run_config.uid()
    experiment = _experiment(experiment_fn(run_config, hparams))
    used = experiment.estimator.config
    if not hasattr(used, 'uid'):
        raise RuntimeError('learn_runner.run: the Experiment\'s Estimator was not given the '
                           "experiment_fn's run_config: pass it as Estimator(config=run_config)")
    if used.uid() != expected:
        raise RuntimeError('learn_runner.run: the Experiment\'s Estimator has another '
                           'RunConfig than the experiment_fn was given: expected %s, got %s'
                           % (expected, used.uid()))
    return experiment


def default_schedule(config):
    """The schedule of the task `config` (None: a single machine) describes (see the module).

    Raises:
      EstimatorError: a cluster of several tasks and no task type, or one with no default.
    """
    cluster = config.cluster_spec if config is not None else None
    if not cluster or sum(cluster.num_tasks(job) for job in cluster.jobs) <= 1:
        return 'train_and_evaluate'
    if not config.task_type:
        raise EstimatorError('learn_runner.run: Must specify a schedule: the cluster has several '
                             'tasks and the RunConfig (TF_CONFIG) names no task type')
    if config.task_type in _DEFAULT_SCHEDULES:
        return _DEFAULT_SCHEDULES[config.task_type]
    raise EstimatorError('learn_runner.run: No default schedule for task type %r (there is one '
                         'for %s): give schedule=' % (config.task_type,
                                                      ', '.join(sorted(_DEFAULT_SCHEDULES))))


def _execute(experiment, schedule):
    """Runs `experiment`'s method named `schedule`."""
    if schedule.startswith('_') or not hasattr(experiment, schedule):
        schedules = sorted(name for name in dir(experiment) if not name.startswith('_')
                           and callable(getattr(experiment, name)))
        raise EstimatorError('learn_runner.run: Schedule references non-existent task %r; the '
                             'Experiment has %s' % (schedule, ', '.join(schedules)))
    task = getattr(experiment, schedule)
    if not callable(task):
        raise TypeError('learn_runner.run: Schedule references non-callable member %r of the '
                        'Experiment (a %s)' % (schedule, type(task).__name__))
    return task()
