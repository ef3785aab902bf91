"""The ImageNet model's entry in the model registry (`models.registry`): tf-slim's ResNet-50 v1
with the reference recipe."""
from models import registry
from models.datasets import imagenet as data
from models.datasets.imagenet import sources
from models.imagenet import ABOUT, CPU_SIZE, GPU_SIZE, model
from models.imagenet.recipe import ResNetRecipe
from towers.benchmarks.measure import in_memory_batch
from towers.compat import tf


def image_size():
    """S: 224 with a GPU, else 64."""
    return GPU_SIZE if tf.config.list_physical_devices('GPU') else CPU_SIZE


def recipe(batch_size):
    """The reference recipe, its schedule counted in epochs of ImageNet's training split."""
    return ResNetRecipe(model.ResNet(50), batch_size, sources.STANDARD_SHARDS[sources.TRAIN][1])


def synthetic_batch(global_batch):
    """Images [global_batch, S, S, 3] float32 and labels [global_batch] int32."""
    size = image_size()
    return in_memory_batch(
        ('images', [global_batch, size, size, 3], tf.float32, tf.random_normal_initializer()),
        ('labels', [global_batch], tf.int32,
         tf.random_uniform_initializer(0, model.NUM_CLASSES)))


def real_input(data_dir, global_batch):
    """The reference's training input from ImageNet's TFRecord shards, S x S as above."""
    data_dir = data.locate_or_generate(data_dir or data.DEFAULT_DATA_DIR, sources.TRAIN)
    return data.training_input(sources.Shards(data_dir, sources.TRAIN), global_batch,
                               image_size())


ENTRY = registry.Entry(
    name='imagenet', **ABOUT._asdict(), recipe=recipe, objective='total',
    synthetic_batch=synthetic_batch, real_input=real_input, flop_skip_scopes=())
