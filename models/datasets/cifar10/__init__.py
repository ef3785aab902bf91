"""CIFAR-10 in its binary format (`cifar-10-batches-bin`), as the TF1 tutorial reads it.

The data-set interface (`models.datasets`): `locate_or_generate`, `training_input` (the
tutorial's `distorted_inputs`), `evaluation_input` (the tutorial's `inputs`),
`validation_input` (the test set once, while training). A label byte out of
range is found before the graph runs, naming the file and record.
"""
from towers import lazy

# The defaults of the scripts' flags are here, so that reading the flags imports no TensorFlow;
# `synthetic` uses them.

# The tutorial's --data_dir when none is given.
DEFAULT_DATA_DIR = '/tmp/cifar10_data'
# The generated set: images in each of its six files, and the seed of its patterns and images.
RECORDS_PER_FILE = 2000
SEED = 0

# Imported when first used (`towers.lazy`).
__getattr__, __dir__ = lazy.exports(__name__, {
    'distorted_inputs': 'models.datasets.cifar10.reader',
    'evaluation_input': 'models.datasets.cifar10.reader',
    'inputs': 'models.datasets.cifar10.reader',
    'training_input': 'models.datasets.cifar10.reader',
    'validation_input': 'models.datasets.cifar10.reader',
    'locate_or_generate': 'models.datasets.cifar10.synthetic',
})

__all__ = ['DEFAULT_DATA_DIR', 'distorted_inputs', 'evaluation_input', 'inputs',
           'locate_or_generate', 'training_input', 'validation_input']
