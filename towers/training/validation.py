"""Validation while training: the model's metric on a held-out split every K steps, in the
training's own process and session, as Keras' `fit(validation_data=...)` gives it.

    towers.fit(recipe, input_fn, setup, role, train_dir, max_steps, global_batch,
               eval_every_steps=100,
               validation_input=lambda: array_batches((test_images, test_labels), 64))

The recipe says what to compute (`Recipe.validation_outputs`: the network on a validation batch
in inference mode, per-example outputs; `Recipe.validation_metrics`: the split's outputs
reduced to the metric its evaluation script reports). `build` puts that network in the
training graph after the training step, on the same variables (found by name through
`variable_scope` reuse, or the same Keras model object): in inference mode it runs no
batch-norm update and no dropout, and reads the moving statistics as they are. It reads an
input pipeline of its own (an initializable iterator, started again for each pass), so the
training stream's order and randomness are untouched. `ValidationHook` runs it between steps
(after every K-th step and after the last) in `session.run` calls of its own, never with a
training step, and outside the steps' timing. Its line follows the progress line:

    2026-01-01 12:00:00.000000: step 100, validation accuracy = 0.8520 (1000 examples, 1.2 s)

and TensorBoard gets `validation/<metric>` at the step in the `eval` run beside the training's
events (`<train_dir>/eval`, where the evaluation scripts write theirs: `towers.evaluation.events`;
side by side, each model's `<train_dir>/<model>/eval`). Only the chief validates.
"""
import collections
import datetime
import os
import time

import numpy as np

from towers.compat import tf
from towers.devices import assign_to_device
from towers.errors import TowersError
from towers.evaluation import events
from towers.training.hooks import StepHook, read_steps_done

# The TensorBoard tag of a validation metric: 'validation/accuracy'.
TAG = 'validation/%s'
LOG_FORMAT = '%s: step %d, validation %s (%d examples, %.1f s)'

Built = collections.namedtuple('Built', ['initializer', 'outputs', 'metrics', 'every_steps'])
Built.__doc__ = """The validation network of a training graph.

Attributes:
  initializer: the op that starts a pass over the split.
  outputs: dict name -> tensor [b, ...] of one validation batch.
  metrics: the recipe's `validation_metrics`.
  every_steps: K.
"""


def array_batches(arrays, batch_size):
    """A `tf.data.Dataset` of `arrays` in order, `batch_size` rows at a time, once.

    Read through a generator, so that the arrays stay out of the graph (and out of the meta
    graph of every checkpoint).

    Args:
      arrays: a numpy array or a tuple of them, each of n rows.
      batch_size: rows per batch; the last batch holds the rest.
    """
    flat = tuple(np.asarray(array) for array in tf.nest.flatten(arrays))

    def rows():
        for index in range(len(flat[0])):
            yield tuple(array[index] for array in flat)

    dataset = tf.data.Dataset.from_generator(rows, output_signature=tuple(
        tf.TensorSpec(array.shape[1:], tf.as_dtype(array.dtype)) for array in flat))
    dataset = dataset.batch(batch_size)
    return dataset.map(lambda *batch: tf.nest.pack_sequence_as(arrays, list(batch)))


def build(recipe, input_fn, setup, every_steps):
    """Builds the validation network of `recipe` in the default graph, after its training step.

    Args:
      recipe: the `towers.Recipe` trained, with `validation_outputs` and `validation_metrics`.
      input_fn: a function of no arguments returning a `tf.data.Dataset` of validation batches:
        one pass over the split, in order (e.g. `array_batches`).
      setup: the `towers.DeviceSetup`: the network runs on tower 0's device, its input on the
        parameter device.
      every_steps: K, validate after every K-th step.

    Returns:
      A `Built`.

    Raises:
      TowersError: the recipe has no validation.
    """
    with tf.name_scope('validation'):
        with tf.device(setup.ps_device):
            iterator = tf.data.make_initializable_iterator(input_fn())
            batch = iterator.get_next()
        with tf.device(assign_to_device(setup.tower_devices[0], setup.ps_device)), \
                tf.variable_scope(tf.get_variable_scope(), reuse=True):
            try:
                outputs = recipe.validation_outputs(batch)
            except NotImplementedError:
                raise TowersError('%s has no validation: --eval_every_steps needs its '
                                  'validation_outputs and validation_metrics'
                                  % type(recipe).__name__)
    return Built(iterator.initializer, outputs, recipe.validation_metrics, every_steps)


def run_pass(session, built):
    """Runs one pass over the split and reduces it.

    Returns:
      (metrics: as `built.metrics` gives them, examples: how many the pass had).
    """
    session.run(built.initializer)
    batches = []
    while True:
        try:
            batches.append(session.run(built.outputs))
        except tf.errors.OutOfRangeError:
            break
    if not batches:
        raise TowersError('the validation split is empty')
    outputs = {name: np.concatenate([batch[name] for batch in batches])
               for name in built.outputs}
    examples = len(next(iter(outputs.values()))) if outputs else 0
    return built.metrics(outputs), examples


def _line(metrics):
    """'accuracy = 0.8520', or for several runs 'iou unet = 0.8490, fpn = 0.8030'."""
    if not any(isinstance(value, dict) for value in metrics.values()):
        return ', '.join('%s = %.4f' % item for item in metrics.items())
    names = sorted({name for values in metrics.values() for name in values})
    return '; '.join('%s %s' % (name, ', '.join('%s = %.4f' % (run, values[name])
                                                 for run, values in metrics.items()
                                                 if name in values))
                     for name in names)


class ValidationHook(StepHook):
    """Validates after every `built.every_steps`-th step and after the last one.

    Args:
      steps_done: the global step after the run, as the loop fetches it.
      built: the `Built` network.
      max_steps: the last step.
      train_dir: where the summaries go (`train_dir/<run>` for a run of several).
      printer: where the line goes.
    """

    def __init__(self, steps_done, built, max_steps, train_dir, printer=print):
        super().__init__(steps_done)
        self._built = built
        self._max_steps = max_steps
        self._train_dir = train_dir
        self._print = printer

    def after_run(self, run_context, run_values):
        step = read_steps_done(run_values)
        if step % self._built.every_steps == 0 or step >= self._max_steps:
            self.validate(run_context.session, step)

    def validate(self, session, step):
        """Runs a pass at `step` (the steps trained), prints its line, writes its summaries."""
        start = time.time()
        metrics, examples = run_pass(session, self._built)
        self._print(LOG_FORMAT % (datetime.datetime.now(), step, _line(metrics), examples,
                                  time.time() - start), flush=True)
        runs = (metrics if any(isinstance(value, dict) for value in metrics.values())
                else {'': metrics})
        for run, values in runs.items():
            writer = tf.summary.FileWriterCache.get(
                events.eval_dir(os.path.join(self._train_dir, run) if run else self._train_dir))
            writer.add_summary(tf.Summary(value=[
                tf.Summary.Value(tag=TAG % name, simple_value=float(value))
                for name, value in values.items()]), step)
            writer.flush()
