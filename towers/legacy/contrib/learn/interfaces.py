"""`tf.contrib.learn.Evaluable` and `tf.contrib.learn.Trainable` (also
`tensorflow.contrib.learn.python.learn.evaluable` and `...learn.trainable`): the abstract faces
of contrib.learn's own estimators, which an `Experiment` takes besides a
`tf.estimator.Estimator`.

    class MyEstimator(tf.contrib.learn.Evaluable, tf.contrib.learn.Trainable):
        model_dir = property(lambda self: '/tmp/model')
        def fit(self, x=None, y=None, input_fn=None, steps=None, batch_size=None,
                monitors=None, max_steps=None): ...
        def evaluate(self, x=None, y=None, input_fn=None, feed_fn=None, batch_size=None,
                     steps=None, metrics=None, name=None, checkpoint_path=None,
                     hooks=None): ...

`ContribAsCore` gives such an estimator `tf.estimator.Estimator`'s `train` and `evaluate`, so
that an `Experiment` runs one kind of call for both.
"""
import abc

from towers.compat import tf


class Evaluable(abc.ABC):
    """An estimator an `Experiment` can evaluate: it has `model_dir` and `evaluate`."""

    @property
    @abc.abstractmethod
    def model_dir(self):
        """The directory whose checkpoints evaluation reads."""

    @abc.abstractmethod
    def evaluate(self, x=None, y=None, input_fn=None, feed_fn=None, batch_size=None,
                 steps=None, metrics=None, name=None, checkpoint_path=None, hooks=None):
        """Evaluates a checkpoint (`checkpoint_path`, or the newest in `model_dir`) on `steps`
        batches of `input_fn` (or of `x`, `y` fed `batch_size` at a time), until the input
        ends when `steps` is None.

        Returns:
          dict: each metric's value (from `metrics`, name -> `MetricSpec`; None for the
          estimator's own), and 'global_step' (the checkpoint's).
        """


class Trainable(abc.ABC):
    """An estimator an `Experiment` can train: it has `fit`."""

    @abc.abstractmethod
    def fit(self, x=None, y=None, input_fn=None, steps=None, batch_size=None, monitors=None,
            max_steps=None):
        """Trains on `input_fn` (or on `x`, `y` fed `batch_size` at a time) for `steps` more
        steps, or up to global step `max_steps` (one of them; neither: until the input ends),
        calling `monitors` (monitors or session-run hooks) on the way.

        Returns:
          The estimator itself.
        """


class ContribAsCore:
    """`tf.estimator.Estimator`'s `train` and `evaluate` on an `Evaluable` and `Trainable`.

    Args:
      estimator: the contrib.learn estimator.
      metrics: the `Experiment`'s `eval_metrics`, which each evaluation gets as `metrics`.
    """

    def __init__(self, estimator, metrics):
        self._estimator = estimator
        self._metrics = metrics

    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """`fit`; `saving_listeners` run on a checkpoint saver of their own, at the
        configuration's cadence, as contrib.learn's estimators took no listeners."""
        hooks = list(hooks or ())
        if saving_listeners:
            config = self._estimator.config
            hooks.append(tf.train.CheckpointSaverHook(
                self._estimator.model_dir, save_secs=config.save_checkpoints_secs,
                save_steps=config.save_checkpoints_steps, listeners=list(saving_listeners)))
        return self._estimator.fit(input_fn=input_fn, steps=steps, max_steps=max_steps,
                                   monitors=hooks)

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """`evaluate` with the `Experiment`'s metrics."""
        return self._estimator.evaluate(input_fn=input_fn, steps=steps, metrics=self._metrics,
                                        name=name, checkpoint_path=checkpoint_path, hooks=hooks)
