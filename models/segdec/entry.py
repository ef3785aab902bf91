"""SegDecNet's entry in the model registry (`models.registry`): its segmentation stage at 128x128
on KolektorSDD, for the benchmark."""
from models import registry
from models.datasets import kolektor as data
from models.segdec import ABOUT, BENCHMARK_SIZE as SIZE, model
from models.segdec.recipe import SegDecRecipe
from towers.benchmarks.measure import in_memory_batch
from towers.compat import tf


def recipe(batch_size):
    """The paper's first stage; its fixed learning rate does not depend on `batch_size`."""
    return SegDecRecipe(model.SegDecNet())


def synthetic_batch(global_batch):
    """Images [global_batch, 128, 128, 1] in [0, 1), pixel labels [global_batch, 16, 16, 1]
    in [0, 1) (soft targets cost what binary ones do) and labels [global_batch] in {0, 1}."""
    pixels = SIZE // model.OUTPUT_STRIDE
    return in_memory_batch(
        ('images', [global_batch, SIZE, SIZE, 1], tf.float32, tf.random_uniform_initializer()),
        ('pixel_labels', [global_batch, pixels, pixels, 1], tf.float32,
         tf.random_uniform_initializer()),
        ('labels', [global_batch], tf.int32, tf.random_uniform_initializer(0, 2)))


def real_input(data_dir, global_batch):
    """The training split of KolektorSDD resized to 128x128, defective and clean images
    alternating, as `training_input` gives them to one tower of `global_batch` images."""
    split = data.load_split(data.locate_or_generate(data_dir), 'train', SIZE, SIZE,
                            stride=model.OUTPUT_STRIDE)
    return data.training_input(split, 1, global_batch)


ENTRY = registry.Entry(
    name='segdec', **ABOUT._asdict(), recipe=recipe, objective='segment',
    synthetic_batch=synthetic_batch, real_input=real_input, flop_skip_scopes=())
