"""image_folder: a classifier of a folder of JPEGs by transfer from Keras VGG16 (frozen but for
block 5, a new softmax), as the OCT2017 reference trains it.

`model` (`Vgg16Transfer`), `recipe`, `entry` (its registry entry). Scripts:
train_image_folder.py, eval_image_folder.py; data: `models.datasets.image_folder`. This package
itself holds what the scripts' flags and the registry's `about` need, and imports no TensorFlow.
"""
from models import registry
from models.datasets import image_folder as data
from towers.replication.registry import Mode

IMAGE_SIZE = 224
# VGG16's five poolings halve the image five times; Keras refuses inputs smaller than this.
MIN_IMAGE_SIZE = 32
# Keras' Adam's, which the reference used.
LEARNING_RATE = 0.001
# The training mode of the scripts, the fastest the benchmark measured side by side on CPUs
# (`benchmark.py --model image_folder --quick --num_gpus 2`, 64x64, 16 per tower): the towers
# with XLA, 1.23x [1.22-1.26] the towers without. (Keras models take neither the replicated
# update nor mixed precision.)
DEFAULT_MODE = Mode(xla=True)
# The benchmark's side: 64x64 rather than its 224x224 (12x fewer FLOPs), so that a CPU takes a
# step of a few towers in about a second.
BENCHMARK_SIZE = 64

ABOUT = registry.About(
    title='VGG16 transfer %dx%d' % (BENCHMARK_SIZE, BENCHMARK_SIZE),
    description='Keras VGG16 frozen but for block 5, a new softmax, on %dx%d JPEGs of '
                'OCT2017\'s classes (%s)'
                % (BENCHMARK_SIZE, BENCHMARK_SIZE, data.DEFAULT_DATA_DIR),
    batch_size=16)
