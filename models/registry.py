"""The models by name, for commands that serve any model (the benchmark, scaling reports, the
export).

As tf_cnn_benchmarks' `model_config` maps names to models, the registry only maps a name to the
package of the same name; each package says what a command needs to build its training step
without knowing the model, in its `entry.py`, and what its trained network serves, in its
`serving.py`; what the model is, for help texts, its `__init__.py` says without importing
TensorFlow:

    registry.about('segdec').description               # models/segdec/__init__.py's ABOUT
    entry = registry.get('segdec')                     # models/segdec/entry.py's ENTRY
    recipe = entry.recipe(entry.batch_size)            # a towers.Recipe
    training = towers.assemble(recipe, lambda: entry.synthetic_batch(global_batch), setup,
                               objectives=[entry.objective])
    train_op = training.train_ops[entry.objective]

    serving = registry.serving('segdec')               # models/segdec/serving.py
    signature = export.save(serving.serving(checkpoint, image_height=320, image_width=128),
                            checkpoint, '/tmp/segdec_export')
"""
import collections
import importlib

from towers.errors import TowersError

# The registered models: each the name of its package under models/.
NAMES = ('cifar10', 'fashion_mnist', 'image_folder', 'imagenet', 'segdec')
# The models `scripts/export_saved_model.py` exports, each by its package's `serving.py`: the
# registered ones, and the segmentation models trained side by side (not a benchmark entry).
EXPORTABLE = NAMES + ('side_by_side',)

About = collections.namedtuple('About', ['title', 'description', 'batch_size', 'published'],
                               defaults=(None,))
About.__doc__ = """What a registered model is, without building it: the fields of its `Entry` that
describe it (see there). A model's package holds its `ABOUT` in its `__init__.py`, which imports
no TensorFlow, so that a script's --help can list the models at once."""

Entry = collections.namedtuple(
    'Entry', ['name', 'title', 'description', 'batch_size', 'recipe', 'objective',
              'synthetic_batch', 'real_input', 'flop_skip_scopes', 'published'],
    defaults=(None,))
Entry.__doc__ = """A registered model.

Attributes:
  name: what `--model` calls it: the name of its package, its scripts and its section of
    docs/workloads.md.
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


def about(name):
    """The `About` of the model `name`, from `models/<name>/__init__.py`; imports no TensorFlow.

    Raises:
      TowersError: no model is registered as `name`; the message lists those that are.
    """
    return _registered(name).ABOUT


def get(name):
    """The `Entry` of the model `name`, from `models/<name>/entry.py`.

    Raises:
      TowersError: no model is registered as `name`; the message lists those that are.
    """
    return importlib.import_module(_registered(name).__name__ + '.entry').ENTRY


def _registered(name):
    """The package of the registered model `name`."""
    if name not in NAMES:
        raise TowersError('unknown model %r; registered models: %s' % (name, ', '.join(names())))
    return importlib.import_module('models.' + name)


def serving(name):
    """The module `models/<name>/serving.py` of the exportable model `name`.

    It holds `FLAGS`, the names of the export flags it takes (sizes a checkpoint does not
    hold, e.g. ('image_height', 'image_width')), and `serving(checkpoint, **flags)`, which
    returns the `towers.export.Serving` of the network `checkpoint` holds.

    Raises:
      TowersError: no model is exportable as `name`; the message lists those that are.
    """
    if name not in EXPORTABLE:
        raise TowersError('unknown model %r; exportable models: %s'
                          % (name, ', '.join(sorted(EXPORTABLE))))
    return importlib.import_module('models.%s.serving' % name)
