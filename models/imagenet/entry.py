"""The ImageNet model's entry in the model registry (`models.registry`): tf-slim's ResNet-50 v1
with the reference recipe."""
from models import registry
from models.datasets import imagenet as data
from models.datasets.imagenet import sources
from models.imagenet import model
from models.imagenet.recipe import ResNetRecipe
from towers.benchmarks.measure import in_memory_batch
from towers.compat import tf

# tf_cnn_benchmarks' 224x224 where there is a GPU; a CPU takes it at 64x64, 12x fewer FLOPs, so
# that a step of 2 towers of 32 images takes seconds rather than a minute.
GPU_SIZE = 224
CPU_SIZE = 64
PUBLISHED = (
    'published, tf_cnn_benchmarks ResNet-50 224x224, 64 images per GPU, parameter server on '
    'the CPU, P100 DGX-1: synthetic 219 / 422 / 852 / 1734, real data 218 / 425 / 853 / 1630 '
    'images/sec on 1 / 2 / 4 / 8 GPUs')


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
    name='imagenet', title='ResNet-50',
    description='tf-slim\'s ResNet-50 v1 with the reference ImageNet recipe, %dx%d with a GPU, '
                '%dx%d without (%s)' % (GPU_SIZE, GPU_SIZE, CPU_SIZE, CPU_SIZE,
                                        data.DEFAULT_DATA_DIR),
    batch_size=32, recipe=recipe, objective='total', synthetic_batch=synthetic_batch,
    real_input=real_input, flop_skip_scopes=(), published=PUBLISHED)
