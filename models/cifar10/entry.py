"""CIFAR-10's entry in the model registry (`models.registry`): the tutorial's network, recipe,
data and benchmark batch."""
from models import registry
from models.cifar10 import ABOUT, model
from models.cifar10.recipe import Cifar10Recipe
from models.datasets import cifar10 as data
from towers.benchmarks.measure import in_memory_batch
from towers.compat import tf


def synthetic_batch(global_batch):
    """Images [global_batch, 24, 24, 3] float32 and labels [global_batch] int32."""
    size = model.IMAGE_SIZE
    return in_memory_batch(
        ('images', [global_batch, size, size, 3], tf.float32, tf.random_normal_initializer()),
        ('labels', [global_batch], tf.int32,
         tf.random_uniform_initializer(0, model.NUM_CLASSES)))


def real_input(data_dir, global_batch):
    """The tutorial's `distorted_inputs`: images [global_batch, 24, 24, 3], labels."""
    batches_dir = data.locate_or_generate(data_dir or data.DEFAULT_DATA_DIR, download=False)
    return data.training_input(batches_dir, global_batch)


ENTRY = registry.Entry(
    name='cifar10', **ABOUT._asdict(), recipe=Cifar10Recipe, objective='total',
    synthetic_batch=synthetic_batch, real_input=real_input,
    flop_skip_scopes=model.NORMALIZATION_SCOPES)
