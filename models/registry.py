"""The models that generic commands (the benchmark, scaling reports) train, by name.

As tf_cnn_benchmarks' `model_config` maps names to models, each entry says what a command needs
to build a model's training step without knowing the model:

    entry = registry.get('segdec')
    recipe = entry.recipe(entry.batch_size)            # a towers.Recipe
    training = towers.assemble(recipe, lambda: entry.synthetic_batch(global_batch), setup,
                               objectives=[entry.objective])
    train_op = training.train_ops[entry.objective]

The classic per-model modules (`models.cifar10.model`, `models.segdec.model`, ...) stay as they
are; an entry only refers to them.
"""
import collections

from models.cifar10 import model as cifar10
from models.cifar10.recipe import Cifar10Recipe
from models.datasets.cifar10 import reader as cifar10_input
from models.datasets.cifar10 import synthetic as cifar10_synthetic
from models.datasets.kolektor import reader as kolektor_input
from models.datasets.kolektor import synthetic as kolektor_synthetic
from models.segdec import model as segdec
from models.segdec.recipe import SegDecRecipe
from towers.compat import tf
from towers.errors import TowersError

Entry = collections.namedtuple(
    'Entry', ['name', 'title', 'description', 'batch_size', 'recipe', 'objective',
              'synthetic_batch', 'real_input', 'flop_skip_scopes'])
Entry.__doc__ = """A registered model.

Attributes:
  name: what `--model` calls it.
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
  flop_skip_scopes: name scopes whose matmuls `towers.benchmark.count_flops` must not count
    (normalisation built from matmuls).
"""


def _local_batch(*tensors):
    """Local variables filled at initialisation, one per (name, shape, dtype, initializer)."""
    with tf.variable_scope('in_memory'):
        return tuple(tf.get_local_variable(name, shape, dtype, initializer)
                     for name, shape, dtype, initializer in tensors)


CIFAR10_DATA_DIR = '/tmp/cifar10_data'


def _cifar10_synthetic_batch(global_batch):
    """Images [global_batch, 24, 24, 3] float32 and labels [global_batch] int32."""
    size = cifar10.IMAGE_SIZE
    return _local_batch(
        ('images', [global_batch, size, size, 3], tf.float32, tf.random_normal_initializer()),
        ('labels', [global_batch], tf.int32,
         tf.random_uniform_initializer(0, cifar10.NUM_CLASSES)))


def _cifar10_real_input(data_dir, global_batch):
    """The tutorial's `distorted_inputs`: images [global_batch, 24, 24, 3], labels."""
    batches_dir = cifar10_synthetic.locate_or_generate(data_dir or CIFAR10_DATA_DIR,
                                                       download=False)
    return cifar10_input.distorted_inputs(batches_dir, global_batch)


# SegDecNet at the smallest square input on which every layer gets a gradient (at 64x64 the
# decision net's last convolution has a single output pixel), for a cheap step: the segmentation
# stage takes 11.4 GFLOP per image forward and 34 GFLOP to train, most of it in the 15x15
# feature convolution (about 1 s per image on 2 CPU cores, milliseconds on a GPU).
SEGDEC_SIZE = 128


def _segdec_recipe(batch_size):
    """The paper's first stage; its fixed learning rate does not depend on `batch_size`."""
    return SegDecRecipe(segdec.SegDecNet())


def _segdec_synthetic_batch(global_batch):
    """Images [global_batch, 128, 128, 1] in [0, 1), pixel labels [global_batch, 16, 16, 1]
    in [0, 1) (soft targets cost what binary ones do) and labels [global_batch] in {0, 1}."""
    pixels = SEGDEC_SIZE // segdec.OUTPUT_STRIDE
    return _local_batch(
        ('images', [global_batch, SEGDEC_SIZE, SEGDEC_SIZE, 1], tf.float32,
         tf.random_uniform_initializer()),
        ('pixel_labels', [global_batch, pixels, pixels, 1], tf.float32,
         tf.random_uniform_initializer()),
        ('labels', [global_batch], tf.int32, tf.random_uniform_initializer(0, 2)))


def _segdec_real_input(data_dir, global_batch):
    """The training split of KolektorSDD resized to 128x128, defective and clean images
    alternating, as `training_inputs` gives them to one tower of `global_batch` images."""
    data = kolektor_input.load_split(data_dir or kolektor_synthetic.ensure_default_dataset(),
                                     'train', SEGDEC_SIZE, SEGDEC_SIZE,
                                     stride=segdec.OUTPUT_STRIDE)
    return kolektor_input.training_inputs(data, 1, global_batch)


_ENTRIES = {entry.name: entry for entry in [
    Entry(name='cifar10', title='CIFAR-10',
          description='the TF1 tutorial\'s CIFAR-10 network on 24x24 crops (%s)'
                      % CIFAR10_DATA_DIR,
          batch_size=cifar10.BATCH_SIZE, recipe=Cifar10Recipe, objective='total',
          synthetic_batch=_cifar10_synthetic_batch, real_input=_cifar10_real_input,
          flop_skip_scopes=cifar10.NORMALIZATION_SCOPES),
    Entry(name='segdec', title='SegDecNet %dx%d' % (SEGDEC_SIZE, SEGDEC_SIZE),
          description='SegDecNet\'s segmentation stage on %dx%d KolektorSDD images (%s)'
                      % (SEGDEC_SIZE, SEGDEC_SIZE, kolektor_synthetic.DEFAULT_DIR),
          batch_size=1, recipe=_segdec_recipe, objective='segment',
          synthetic_batch=_segdec_synthetic_batch, real_input=_segdec_real_input,
          flop_skip_scopes=()),
]}


def names():
    """The registered names, sorted."""
    return sorted(_ENTRIES)


def get(name):
    """The `Entry` registered as `name`.

    Raises:
      TowersError: no model is registered as `name`; the message lists those that are.
    """
    if name not in _ENTRIES:
        raise TowersError('unknown model %r; registered models: %s' % (name, ', '.join(names())))
    return _ENTRIES[name]
