"""`tf.contrib.learn` as 2017-2018 Estimator programs used it: `RunConfig`, `Experiment` and
`learn_runner` on `tf.estimator.Estimator` (or on an estimator of the interfaces `Evaluable` and
`Trainable`), `ExportStrategy` and `make_export_strategy`, and `datasets` (`mnist`, and
`base`'s offline helpers).

    experiment = tf.contrib.learn.Experiment(estimator, train_input_fn, eval_input_fn, ...)
    tf.contrib.learn.learn_runner.run(experiment_fn, run_config=tf.contrib.learn.RunConfig(
        model_dir=...), hparams=tf.contrib.training.HParams(...))

contrib.learn's own estimators (`tf.contrib.learn.Estimator`, `DNNClassifier`, ...: `fit`,
monitors, heads) are not provided: `tf.estimator` replaces them.
"""
from towers.legacy.contrib.learn import learn_runner
from towers.legacy.contrib.learn.experiment import Experiment
from towers.legacy.contrib.learn.export import ExportStrategy, make_export_strategy
from towers.legacy.contrib.learn.interfaces import Evaluable, Trainable
from towers.legacy.contrib.learn.run_config import Environment, RunConfig, TaskType


class ModeKeys:
    """contrib.learn's modes: those of `tf.estimator.ModeKeys`, PREDICT named INFER."""
    TRAIN = 'train'
    EVAL = 'eval'
    INFER = 'infer'


__all__ = ['Environment', 'Evaluable', 'Experiment', 'ExportStrategy', 'ModeKeys', 'RunConfig',
           'TaskType', 'Trainable', 'learn_runner', 'make_export_strategy']
