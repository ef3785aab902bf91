"""imagenet: tf-slim's ResNet v1 (50/101/152) with the reference ImageNet recipe.

`model` (`ResNet`, slim's variable names), `recipe` (warmup, cosine, label smoothing, L2),
`entry` (its registry entry). Scripts: train_imagenet.py, eval_imagenet.py; data:
`models.datasets.imagenet`. This package itself holds what the scripts' flags and the
registry's `about` need, and imports no TensorFlow.
"""
from models import registry
from models.datasets import imagenet as data

# The network (`model`): its depths, and the loss's label smoothing and L2 factor.
DEPTHS = (50, 101, 152)
LABEL_SMOOTHING = 0.1
WEIGHT_DECAY = 1e-4
# The reference recipe (`recipe`): its peak learning rate at a global batch of `BASE_BATCH`,
# its length, warmup, final fraction of the peak and momentum.
BASE_LEARNING_RATE = 0.05
BASE_BATCH = 128
EPOCHS = 50
WARMUP_EPOCHS = 1
COSINE_ALPHA = 1e-4
MOMENTUM = 0.9

# The benchmark's side (`entry`): tf_cnn_benchmarks' 224x224 where there is a GPU; a CPU takes
# it at 64x64, 12x fewer FLOPs, so that a step of 2 towers of 32 images takes seconds rather
# than a minute.
GPU_SIZE = 224
CPU_SIZE = 64
PUBLISHED = (
    'published, tf_cnn_benchmarks ResNet-50 224x224, 64 images per GPU, parameter server on '
    'the CPU, P100 DGX-1: synthetic 219 / 422 / 852 / 1734, real data 218 / 425 / 853 / 1630 '
    'images/sec on 1 / 2 / 4 / 8 GPUs')

ABOUT = registry.About(
    title='ResNet-50',
    description='tf-slim\'s ResNet-50 v1 with the reference ImageNet recipe, %dx%d with a GPU, '
                '%dx%d without (%s)' % (GPU_SIZE, GPU_SIZE, CPU_SIZE, CPU_SIZE,
                                        data.DEFAULT_DATA_DIR),
    batch_size=32, published=PUBLISHED)
