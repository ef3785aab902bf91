"""The Estimator's step against `towers.fit`'s: what `tf.estimator` (the legacy runner's) costs.

    ratio, rounds = estimator.run(registry.get('cifar10'), batch_size=32, plan=QUICK,
                                  work_dir='/tmp/bench', num_devices=2)

A registered model's recipe trains on its random in-memory batch two ways: through `towers.fit`,
and through an `Estimator`. On one device the Estimator's `model_fn` builds the same step
(`towers.assemble` on the Estimator's global step, as a user's `model_fn` may) from the batch its
`input_fn` gives; on N devices it is one replica (the recipe's tower, its loss, its optimizer's
`minimize`) under `RunConfig(train_distribute=MirroredStrategy(devices))`, each replica taking
`batch_size` examples, against `towers.fit`'s N towers on the global batch of N times that.
Both go through the one training loop; what differs is the Estimator's graph-per-call, its
replicas' captured updates, its hooks and log lines. Each round trains `plan.steps_per_repeat`
more steps each way, in turns (A B A B, both resuming their checkpoints), and compares the
median step time of the loop's own step timer; the first round of each warms up untimed.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import towers
from towers import bars
from towers.benchmarks.measure import rounds_ratio
from towers.compat import tf
from towers.legacy.estimator import Estimator, EstimatorSpec, RunConfig
from towers.legacy.estimator.distribute import MirroredStrategy
from towers.errors import TowersError

KERAS_FIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'keras_fit.py')


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


def _replica_model_fn(entry, batch_size, num_devices, recipes):
    """A `model_fn` of one replica of `entry`'s recipe: its tower on the replica's batch, the
    tower's loss and the recipe's optimizer at the learning rate of `num_devices` towers; the
    recipe of each graph goes into the dict `recipes`."""

    def model_fn(features, labels, mode):
        recipe = recipes.setdefault(tf.get_default_graph(), _recipe(entry, batch_size))
        recipe.tower_fn(features if labels is None else (features, labels))
        loss = tf.losses.get_total_loss()
        global_step = tf.train.get_global_step()
        optimizer = recipe.optimizer(recipe.learning_rate(global_step, num_devices))
        return EstimatorSpec(mode, loss=loss,
                             train_op=optimizer.minimize(loss, global_step=global_step))
    return model_fn


def _replica_input(entry, batch_size):
    """The in-memory batch as a `Dataset`, whose next element each replica takes."""
    return lambda: tf.data.Dataset.from_tensors(entry.synthetic_batch(batch_size)).repeat()


def run(entry, batch_size, plan, work_dir, configure=towers.configure_devices, num_devices=1):
    """Times `entry` through an Estimator and through `towers.fit`, in turns, on
    `num_devices` devices (`batch_size` examples per device).

    Returns:
      (ratio, medians): the `Ratio` of the Estimator's step rate over `towers.fit`'s (the
      median and quartiles of the rounds' ratios), and each way's median step seconds per
      round, as {'estimator': [...], 'fit': [...]}.
    """
    setup = configure(num_devices)
    if num_devices == 1:
        model_fn, input_fn, strategy = (_model_fn(entry, batch_size, setup),
                                        lambda: entry.synthetic_batch(batch_size), None)
    else:
        model_fn, input_fn = (_replica_model_fn(entry, batch_size, num_devices, {}),
                              _replica_input(entry, batch_size))
        strategy = MirroredStrategy(devices=setup.tower_devices)
    estimator = Estimator(
        model_fn, os.path.join(work_dir, 'estimator'),
        RunConfig(session_config=setup.config, save_checkpoints_secs=None,
                  save_summary_steps=None, log_step_count_steps=None,
                  train_distribute=strategy))
    global_batch = batch_size * num_devices
    fit_dir = os.path.join(work_dir, 'fit')
    steps = plan.steps_per_repeat
    medians = {'estimator': [], 'fit': []}
    for round_index in bars.bar(range(plan.repeats + 1), 'Estimator against towers.fit',
                                'rounds'):
        estimator.train(input_fn, steps=steps)
        timing = estimator._training_timing
        result = towers.fit(_recipe(entry, batch_size),
                            lambda: entry.synthetic_batch(global_batch), setup, None, fit_dir,
                            (round_index + 1) * steps, global_batch,
                            objective=entry.objective, log_every_n_steps=None,
                            save_checkpoint_secs=None, save_summaries_steps=10 ** 9)
        if round_index:
            medians['estimator'].append(timing['median_step_sec'])
            medians['fit'].append(result.timing['median_step_sec'])
    return rounds_ratio(np.asarray(medians['fit']) / np.asarray(medians['estimator'])), medians


def against_keras_fit(entry, batch_size, plan, work_dir, num_devices,
                      configure=towers.configure_devices):
    """Times `entry`'s Keras model through an Estimator with `MirroredStrategy` on
    `num_devices` devices (`batch_size` per replica) and through Keras `fit` under TensorFlow
    2's `tf.distribute.MirroredStrategy` on as many (`keras_fit.py`, a process of its own per
    round, timed inside it) on the same global batch, in turns.

    Returns:
      (ratio, medians): the `Ratio` of the Estimator's step rate over Keras fit's, and each
      way's median step seconds per round, as {'estimator': [...], 'keras_fit': [...]}.

    Raises:
      TowersError: the recipe is not a Keras model's (no `keras_loss`), or `fit` failed.
    """
    setup = configure(num_devices)
    recipes = {}
    estimator = Estimator(
        _replica_model_fn(entry, batch_size, num_devices, recipes),
        os.path.join(work_dir, 'estimator_mirrored'),
        RunConfig(session_config=setup.config, save_checkpoints_secs=None,
                  save_summary_steps=None, log_step_count_steps=None,
                  train_distribute=MirroredStrategy(devices=setup.tower_devices)))
    steps = plan.steps_per_repeat
    medians = {'estimator': [], 'keras_fit': []}
    model_json = os.path.join(work_dir, 'model.json')
    for round_index in bars.bar(range(plan.repeats + 1), 'Estimator against Keras fit',
                                'rounds'):
        estimator.train(_replica_input(entry, batch_size), steps=steps)
        timing = estimator._training_timing
        if round_index == 0:
            recipe = next(iter(recipes.values()))
            loss = getattr(recipe, 'keras_loss', None)
            if loss is None:
                raise TowersError('%s is not a Keras model: Keras fit has nothing to compare'
                                  % entry.title)
            with open(model_json, 'w') as f:
                f.write(recipe.shared_model.model.to_json())
            with tf.Graph().as_default():
                rate = tf.get_static_value(tf.convert_to_tensor(recipe.learning_rate(
                    tf.train.get_or_create_global_step(), num_devices)))
        fit = subprocess.run(
            [sys.executable, KERAS_FIT, model_json, str(num_devices),
             str(batch_size * num_devices), loss, repr(float(rate)), str(plan.warmup_steps),
             str(steps)], capture_output=True, text=True)
        if fit.returncode:
            raise TowersError('Keras fit under tf.distribute.MirroredStrategy failed: %s'
                              % (fit.stderr.strip().splitlines() or ['(no output)'])[-1])
        if round_index:
            medians['estimator'].append(timing['median_step_sec'])
            medians['keras_fit'].append(
                json.loads(fit.stdout.strip().splitlines()[-1])['median_step_sec'])
    ratios = np.asarray(medians['keras_fit']) / np.asarray(medians['estimator'])
    return rounds_ratio(ratios), medians


def report(entry, batch_size, plan, num_devices):
    """Yields the lines of `scripts/benchmark.py --estimator`: the Estimator against
    `towers.fit` on one device and on `num_devices` (with `MirroredStrategy`), and, for a Keras
    model, against Keras fit under `tf.distribute.MirroredStrategy` on `num_devices`; each
    with its rounds' median step seconds and the ratio of the rates against its target."""
    for devices in sorted({1, num_devices}):
        with tempfile.TemporaryDirectory(prefix='benchmark_estimator_') as work_dir:
            ratio, medians = run(entry, batch_size, plan, work_dir, num_devices=devices)
        yield from _lines(
            '%s, %d examples per device and step, %s' % (entry.title, batch_size, (
                'one device' if devices == 1 else '%d devices (the Estimator with '
                'MirroredStrategy, towers.fit with %d towers)' % (devices, devices))),
            plan, medians, ratio, 'towers.fit', devices, 0.95)
    if getattr(entry.recipe(batch_size), 'keras_loss', None) is None:
        yield ('Keras fit under tf.distribute.MirroredStrategy: not measured: %s is not a '
               'Keras model' % entry.title)
        return
    with tempfile.TemporaryDirectory(prefix='benchmark_keras_fit_') as work_dir:
        ratio, medians = against_keras_fit(entry, batch_size, plan, work_dir, num_devices)
    yield from _lines(
        '%s, %d examples per device and step, %d devices: the Estimator with MirroredStrategy '
        'against Keras fit under TensorFlow 2\'s tf.distribute.MirroredStrategy (same model and '
        'global batch)' % (entry.title, batch_size, num_devices),
        plan, medians, ratio, 'Keras fit', num_devices, 1.0)


def _lines(title, plan, medians, ratio, other, devices, target):
    yield '%s, %d rounds of %d steps in turns:' % (title, plan.repeats, plan.steps_per_repeat)
    for way, seconds in medians.items():
        yield '  %-9s median step %.4f s (rounds: %s)' % (
            way, float(np.median(seconds)), ', '.join('%.4f' % each for each in seconds))
    yield ('Estimator step rate / %s step rate on %d device(s): %.3f (quartiles %.3f-%.3f); '
           'target >= %s: %s' % (other, devices, ratio.median, ratio.low, ratio.high, target,
                                 'met' if ratio.median >= target else 'NOT met'))
