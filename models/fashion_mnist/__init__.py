"""fashion_mnist: the Keras CNN of Zalando Research's multi-GPU Fashion-MNIST example, one model
shared by the towers.

`model`, `recipe`, `entry` (its registry entry). Scripts: train_fashion_mnist.py,
eval_fashion_mnist.py; data: `models.datasets.fashion_mnist`. This package itself holds what the
scripts' flags and the registry's `about` need, and imports no TensorFlow.
"""
from models import registry
from models.datasets import fashion_mnist as data

# Images per tower: the reference's batch per replica.
BATCH_SIZE = 512

ABOUT = registry.About(
    title='Fashion-MNIST (Keras)',
    description='the Keras CNN of the Fashion-MNIST multi-GPU example, one model shared by the '
                'towers (%s)' % data.DEFAULT_DATA_DIR,
    batch_size=BATCH_SIZE)
