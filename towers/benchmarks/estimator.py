"""The Estimator's step against `towers.fit`'s: what `tf.estimator` (the legacy runner's) costs.

    ratio, rounds = estimator.run(registry.get('cifar10'), batch_size=32, plan=QUICK,
                                  work_dir='/tmp/bench')

A registered model's recipe trains on one device on its random in-memory batch two ways: through
`towers.fit`, and through an `Estimator` whose `model_fn` builds the same step
(`towers.assemble` on the Estimator's global step, as a user's `model_fn` may) from the batch its
`input_fn` gives. Both go through the one training loop; what differs is the Estimator's
graph-per-call, its hooks and log lines. Each round trains `plan.steps_per_repeat` more steps
each way, in turns (A B A B, both resuming their checkpoints), and compares the median step time
of the loop's own step timer; the first round of each warms up untimed.
"""
import os

import numpy as np

import towers
from towers.benchmarks.measure import Ratio
from towers.compat import tf
from towers.legacy.estimator import Estimator, EstimatorSpec, RunConfig
from towers.training.loop import TIMING_FILE
from towers.files import read_json


def _recipe(entry, batch_size):
    """`entry`'s recipe, whose global step is TensorFlow's int64 one (which the Estimator
    makes before its `model_fn`; the CIFAR-10 tutorial's own is a float32), both ways."""
    recipe = entry.recipe(batch_size)
    recipe.create_global_step = tf.train.get_or_create_global_step
    return recipe


def _model_fn(entry, batch_size, setup):
    """A `model_fn` of `entry`'s recipe: its step on one device, from (features, labels)."""
    def model_fn(features, labels, mode):
        batch = features if labels is None else (features, labels)
        training = towers.assemble(_recipe(entry, batch_size), lambda: batch, setup,
                                   objectives=[entry.objective])
        return EstimatorSpec(mode, loss=training.losses[entry.objective],
                             train_op=training.train_ops[entry.objective])
    return model_fn


def run(entry, batch_size, plan, work_dir, configure=towers.configure_devices):
    """Times `entry` through an Estimator and through `towers.fit`, in turns.

    Returns:
      (ratio, medians): the `Ratio` of the Estimator's step rate over `towers.fit`'s (the
      median and quartiles of the rounds' ratios), and each way's median step seconds per
      round, as {'estimator': [...], 'fit': [...]}.
    """
    setup = configure(1)
    estimator = Estimator(
        _model_fn(entry, batch_size, setup), os.path.join(work_dir, 'estimator'),
        RunConfig(session_config=setup.config, save_checkpoints_secs=None,
                  save_summary_steps=None, log_step_count_steps=None))
    fit_dir = os.path.join(work_dir, 'fit')
    steps = plan.steps_per_repeat
    medians = {'estimator': [], 'fit': []}
    for round_index in range(plan.repeats + 1):
        estimator.train(lambda: entry.synthetic_batch(batch_size), steps=steps)
        timing = read_json(os.path.join(estimator.model_dir, TIMING_FILE), 'the step timing')
        result = towers.fit(_recipe(entry, batch_size), lambda: entry.synthetic_batch(batch_size),
                            setup, None, fit_dir, (round_index + 1) * steps, batch_size,
                            objective=entry.objective, log_every_n_steps=None,
                            save_checkpoint_secs=None, save_summaries_steps=10 ** 9)
        if round_index:
            medians['estimator'].append(timing['median_step_sec'])
            medians['fit'].append(result.timing['median_step_sec'])
    ratios = np.asarray(medians['fit']) / np.asarray(medians['estimator'])
    low, median, high = np.percentile(ratios, [25, 50, 75])
    return Ratio(float(median), float(low), float(high)), medians
