"""Fashion-MNIST in its IDX files (MNIST's format).

The data-set interface (`models.datasets`): `locate_or_generate`, `training_input` (of a split
`reader.load_split` read), `evaluation_input` (the test split), `validation_input` (a split's
batches while training). Every header, size and label is
checked before the graph runs, naming the file.
"""
from towers import lazy

# The scripts' --data_dir when none is given (`synthetic` generates a set there), here so that
# reading the flags imports no TensorFlow.
DEFAULT_DATA_DIR = '/tmp/fashion_mnist_data'

# Imported when first used (`towers.lazy`).
__getattr__, __dir__ = lazy.exports(__name__, {
    'evaluation_input': 'models.datasets.fashion_mnist.reader',
    'load_split': 'models.datasets.fashion_mnist.reader',
    'training_input': 'models.datasets.fashion_mnist.reader',
    'validation_input': 'models.datasets.fashion_mnist.reader',
    'locate_or_generate': 'models.datasets.fashion_mnist.synthetic',
})

__all__ = ['DEFAULT_DATA_DIR', 'evaluation_input', 'load_split', 'locate_or_generate',
           'training_input', 'validation_input']
