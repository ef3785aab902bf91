"""Fashion-MNIST's entry in the model registry (`models.registry`): the Keras CNN of the
multi-GPU example, one model shared by the towers."""
from models import registry
from models.datasets import fashion_mnist as data
from models.datasets.fashion_mnist import reader
from models.fashion_mnist import ABOUT
from models.fashion_mnist.recipe import FashionMnistRecipe
from towers.benchmarks.measure import in_memory_batch
from towers.compat import tf


def synthetic_batch(global_batch):
    """Images [global_batch, 28, 28, 1] in [0, 1) and one-hot labels [global_batch, 10]."""
    classes = reader.NUM_CLASSES

    def one_hot_rows(shape, dtype, partition_info=None):
        return tf.one_hot(tf.random.uniform(shape[:1], 0, classes, tf.int32), classes,
                          dtype=dtype)

    return in_memory_batch(
        ('images', [global_batch, reader.HEIGHT, reader.WIDTH, 1], tf.float32,
         tf.random_uniform_initializer()),
        ('labels', [global_batch, classes], tf.float32, one_hot_rows))


def real_input(data_dir, global_batch):
    """The reference's input of the training split: [global_batch, 28, 28, 1], one-hot."""
    images_dir = data.locate_or_generate(data_dir or data.DEFAULT_DATA_DIR)
    return data.training_input(data.load_split(images_dir, 'train'), global_batch)


ENTRY = registry.Entry(
    name='fashion_mnist', **ABOUT._asdict(), recipe=lambda batch_size: FashionMnistRecipe(),
    objective='total', synthetic_batch=synthetic_batch, real_input=real_input,
    flop_skip_scopes=())
