"""The models by name, for commands that serve any model (the benchmark, scaling reports).

As tf_cnn_benchmarks' `model_config` maps names to models, the registry only maps a name to the
package of the same name; each package says what a command needs to build its training step
without knowing the model, in its `entry.py`:

    entry = registry.get('segdec')                     # models/segdec/entry.py's ENTRY
    recipe = entry.recipe(entry.batch_size)            # a towers.Recipe
    training = towers.assemble(recipe, lambda: entry.synthetic_batch(global_batch), setup,
                               objectives=[entry.objective])
    train_op = training.train_ops[entry.objective]
"""
import collections
import importlib

from towers.errors import TowersError

# The registered models: each the name of its package under models/.
NAMES = ('cifar10', 'fashion_mnist', 'image_folder', 'imagenet', 'segdec')

Entry = collections.namedtuple(
    'Entry', ['name', 'title', 'description', 'batch_size', 'recipe', 'objective',
              'synthetic_batch', 'real_input', 'flop_skip_scopes', 'published'],
    defaults=(None,))
Entry.__doc__ = """A registered model.

Attributes:
  name: what `--model` calls it: the name of its package, its scripts and its README section.
  title: how reports and charts name it, e.g. 'CIFAR-10'.
  description: one line on the network and its input.
  batch_size: the default examples per tower.
  recipe: batch_size -> a `towers.Recipe` for towers of `batch_size` examples each.
  objective: the name of the recipe's objective that a training step runs.
  synthetic_batch: global_batch -> the batch as random tensors held in local variables (so
    that a step reads it from memory without an input pipeline), a tuple of tensors whose
    first dimension is `global_batch`. Built in the caller's device scope.
  real_input: (data_dir, global_batch) -> the training input pipeline's batch, the same
    structure as `synthetic_batch`'s. `data_dir` None means the model's usual place; a
    generated data set in the real one's format is written there when none is found.
  flop_skip_scopes: name scopes whose matmuls `towers.benchmarks.measure.count_flops` must
    not count (normalisation built from matmuls).
  published: published figures of the model to print beside the measured ones (one line of
    text), or None.
"""


def names():
    """The registered names, sorted."""
    return sorted(NAMES)


def get(name):
    """The `Entry` of the model `name`, from `models/<name>/entry.py`.

    Raises:
      TowersError: no model is registered as `name`; the message lists those that are.
    """
    if name not in NAMES:
        raise TowersError('unknown model %r; registered models: %s' % (name, ', '.join(names())))
    return importlib.import_module('models.%s.entry' % name).ENTRY
