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
from models.datasets.fashion_mnist import reader as fashion_mnist_input
from models.datasets.fashion_mnist import synthetic as fashion_mnist_synthetic
from models.datasets.image_folder import reader as image_folder_input
from models.datasets.image_folder import synthetic as image_folder_synthetic
from models.datasets.imagenet import reader as imagenet_input
from models.datasets.imagenet import synthetic as imagenet_synthetic
from models.datasets.kolektor import reader as kolektor_input
from models.datasets.kolektor import synthetic as kolektor_synthetic
from models.fashion_mnist import model as fashion_mnist
from models.fashion_mnist.recipe import FashionMnistRecipe
from models.resnet import model as resnet
from models.resnet.recipe import ResNetRecipe
from models.segdec import model as segdec
from models.segdec.recipe import SegDecRecipe
from models.vgg16_transfer import model as vgg16_transfer
from models.vgg16_transfer.recipe import Vgg16TransferRecipe
from towers.compat import tf
from towers.errors import TowersError

Entry = collections.namedtuple(
    'Entry', ['name', 'title', 'description', 'batch_size', 'recipe', 'objective',
              'synthetic_batch', 'real_input', 'flop_skip_scopes', 'published'],
    defaults=(None,))
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
  flop_skip_scopes: name scopes whose matmuls `towers.benchmarks.measure.count_flops` must not count
    (normalisation built from matmuls).
  published: published figures of the model to print beside the measured ones (one line of
    text), or None.
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


def _fashion_mnist_synthetic_batch(global_batch):
    """Images [global_batch, 28, 28, 1] in [0, 1) and one-hot labels [global_batch, 10]."""
    classes = fashion_mnist_input.NUM_CLASSES

    def one_hot_rows(shape, dtype, partition_info=None):
        return tf.one_hot(tf.random.uniform(shape[:1], 0, classes, tf.int32), classes,
                          dtype=dtype)

    return _local_batch(
        ('images', [global_batch, fashion_mnist_input.HEIGHT, fashion_mnist_input.WIDTH, 1],
         tf.float32, tf.random_uniform_initializer()),
        ('labels', [global_batch, classes], tf.float32, one_hot_rows))


def _fashion_mnist_real_input(data_dir, global_batch):
    """The reference's input of the training split: [global_batch, 28, 28, 1], one-hot."""
    images_dir = fashion_mnist_synthetic.locate_or_generate(
        data_dir or fashion_mnist_synthetic.DEFAULT_DATA_DIR)
    return fashion_mnist_input.train_input(fashion_mnist_input.load_split(images_dir, 'train'),
                                           global_batch)


# The frozen-VGG16 transfer model at 64x64 rather than its 224x224 (12x fewer FLOPs), so that a
# CPU takes a step of a few towers in about a second; the classes of OCT2017.
IMAGE_FOLDER_SIZE = 64
IMAGE_FOLDER_CLASSES = list(image_folder_synthetic.CLASSES)


def _image_folder_recipe(batch_size):
    """Adam at a fixed rate, which does not depend on `batch_size`."""
    return Vgg16TransferRecipe(vgg16_transfer.Vgg16Transfer(len(IMAGE_FOLDER_CLASSES),
                                                            IMAGE_FOLDER_SIZE))


def _image_folder_synthetic_batch(global_batch):
    """Images [global_batch, 64, 64, 3] in [0, 1) and labels [global_batch] int32 in 0..3."""
    return _local_batch(
        ('images', [global_batch, IMAGE_FOLDER_SIZE, IMAGE_FOLDER_SIZE, 3], tf.float32,
         tf.random_uniform_initializer()),
        ('labels', [global_batch], tf.int32,
         tf.random_uniform_initializer(0, len(IMAGE_FOLDER_CLASSES))))


def _image_folder_real_input(data_dir, global_batch):
    """The training JPEGs of OCT2017 (or the generated set in its layout) at 64x64:
    images [global_batch, 64, 64, 3], labels [global_batch]."""
    split = image_folder_input.list_split(
        data_dir or image_folder_synthetic.ensure_default_dataset(), 'train',
        IMAGE_FOLDER_CLASSES)
    return image_folder_input.training_inputs(split, IMAGE_FOLDER_SIZE, global_batch)


# ResNet-50 at tf_cnn_benchmarks' 224x224 where there is a GPU; a CPU takes it at 64x64, 12x
# fewer FLOPs, so that a step of 2 towers of 32 images takes seconds rather than a minute.
RESNET50_GPU_SIZE = 224
RESNET50_CPU_SIZE = 64
RESNET50_PUBLISHED = (
    'published, tf_cnn_benchmarks ResNet-50 224x224, 64 images per GPU, parameter server on '
    'the CPU, P100 DGX-1: synthetic 219 / 422 / 852 / 1734, real data 218 / 425 / 853 / 1630 '
    'images/sec on 1 / 2 / 4 / 8 GPUs')


def _resnet50_image_size():
    return RESNET50_GPU_SIZE if tf.config.list_physical_devices('GPU') else RESNET50_CPU_SIZE


def _resnet50_recipe(batch_size):
    """The reference recipe, its schedule counted in epochs of ImageNet's training split."""
    return ResNetRecipe(resnet.ResNet(50), batch_size,
                        imagenet_input.STANDARD_SHARDS[imagenet_input.TRAIN][1])


def _resnet50_synthetic_batch(global_batch):
    """Images [global_batch, S, S, 3] float32 and labels [global_batch] int32, S = 224 with
    a GPU, else 64."""
    size = _resnet50_image_size()
    return _local_batch(
        ('images', [global_batch, size, size, 3], tf.float32, tf.random_normal_initializer()),
        ('labels', [global_batch], tf.int32,
         tf.random_uniform_initializer(0, resnet.NUM_CLASSES)))


def _resnet50_real_input(data_dir, global_batch):
    """The reference's training input from ImageNet's TFRecord shards, S x S as above."""
    data_dir = imagenet_synthetic.locate_or_generate(
        data_dir or imagenet_synthetic.DEFAULT_DATA_DIR, imagenet_input.TRAIN)
    return imagenet_input.train_inputs(imagenet_input.Shards(data_dir, imagenet_input.TRAIN),
                                       global_batch, _resnet50_image_size())


_ENTRIES = {entry.name: entry for entry in [
    Entry(name='cifar10', title='CIFAR-10',
          description='the TF1 tutorial\'s CIFAR-10 network on 24x24 crops (%s)'
                      % CIFAR10_DATA_DIR,
          batch_size=cifar10.BATCH_SIZE, recipe=Cifar10Recipe, objective='total',
          synthetic_batch=_cifar10_synthetic_batch, real_input=_cifar10_real_input,
          flop_skip_scopes=cifar10.NORMALIZATION_SCOPES),
    Entry(name='fashion_mnist', title='Fashion-MNIST (Keras)',
          description='the Keras CNN of the Fashion-MNIST multi-GPU example, one model shared '
                      'by the towers (%s)' % fashion_mnist_synthetic.DEFAULT_DATA_DIR,
          batch_size=fashion_mnist.BATCH_SIZE, recipe=lambda batch_size: FashionMnistRecipe(),
          objective='total', synthetic_batch=_fashion_mnist_synthetic_batch,
          real_input=_fashion_mnist_real_input, flop_skip_scopes=()),
    Entry(name='image_folder', title='VGG16 transfer %dx%d' % (IMAGE_FOLDER_SIZE,
                                                                IMAGE_FOLDER_SIZE),
          description='Keras VGG16 frozen but for block 5, a new softmax, on %dx%d JPEGs of '
                      'OCT2017\'s classes (%s)' % (IMAGE_FOLDER_SIZE, IMAGE_FOLDER_SIZE,
                                                    image_folder_synthetic.DEFAULT_DIR),
          batch_size=16, recipe=_image_folder_recipe, objective='total',
          synthetic_batch=_image_folder_synthetic_batch, real_input=_image_folder_real_input,
          flop_skip_scopes=()),
    Entry(name='resnet50', title='ResNet-50',
          description='tf-slim\'s ResNet-50 v1 with the reference ImageNet recipe, %dx%d with '
                      'a GPU, %dx%d without (%s)'
                      % (RESNET50_GPU_SIZE, RESNET50_GPU_SIZE, RESNET50_CPU_SIZE,
                         RESNET50_CPU_SIZE, imagenet_synthetic.DEFAULT_DATA_DIR),
          batch_size=32, recipe=_resnet50_recipe, objective='total',
          synthetic_batch=_resnet50_synthetic_batch, real_input=_resnet50_real_input,
          flop_skip_scopes=(), published=RESNET50_PUBLISHED),
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
