"""cifar10: the TF1 multi-GPU tutorial's CIFAR-10 network (TF 1.13), ported and regressed.

`model` (the tutorial's `inference`, `loss`, `tower_loss`, variable names), `recipe` (its
schedule, optimizer and moving averages), `regression` (its figures against the original's),
`entry` (its registry entry). Scripts: train_cifar10_multi_gpu.py, cifar10_eval.py,
regress_cifar10.py; data: `models.datasets.cifar10`. This package itself holds what the scripts'
flags and the registry's `about` need, and imports no TensorFlow.
"""
from models import registry
from models.datasets import cifar10 as data

# The tutorial's images per tower (its --batch_size).
BATCH_SIZE = 128

ABOUT = registry.About(
    title='CIFAR-10',
    description='the TF1 tutorial\'s CIFAR-10 network on 24x24 crops (%s)' % data.DEFAULT_DATA_DIR,
    batch_size=BATCH_SIZE)
