"""The image-folder model's entry in the model registry (`models.registry`): Keras VGG16 frozen
but for block 5, a new softmax, at 64x64 on OCT2017's classes."""
from models import registry
from models.datasets import image_folder as data
from models.datasets.image_folder import synthetic
from models.image_folder import ABOUT, BENCHMARK_SIZE as SIZE, model
from models.image_folder.recipe import Vgg16TransferRecipe
from towers.benchmarks.measure import in_memory_batch
from towers.compat import tf

# The classes of OCT2017.
CLASSES = list(synthetic.CLASSES)


def recipe(batch_size):
    """Adam at a fixed rate, which does not depend on `batch_size`."""
    return Vgg16TransferRecipe(model.Vgg16Transfer(len(CLASSES), SIZE))


def synthetic_batch(global_batch):
    """Images [global_batch, 64, 64, 3] in [0, 1) and labels [global_batch] int32 in 0..3."""
    return in_memory_batch(
        ('images', [global_batch, SIZE, SIZE, 3], tf.float32, tf.random_uniform_initializer()),
        ('labels', [global_batch], tf.int32, tf.random_uniform_initializer(0, len(CLASSES))))


def real_input(data_dir, global_batch):
    """The training JPEGs of OCT2017 (or the generated set in its layout) at 64x64:
    images [global_batch, 64, 64, 3], labels [global_batch]."""
    split = data.list_split(data.locate_or_generate(data_dir), 'train', CLASSES)
    return data.training_input(split, SIZE, global_batch)


ENTRY = registry.Entry(
    name='image_folder', **ABOUT._asdict(), recipe=recipe, objective='total',
    synthetic_batch=synthetic_batch, real_input=real_input, flop_skip_scopes=())
