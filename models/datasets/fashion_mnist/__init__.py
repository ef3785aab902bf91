"""Fashion-MNIST in its IDX files (MNIST's format).

The data-set interface (`models.datasets`): `locate_or_generate`, `training_input` (of a split
`reader.load_split` read), `evaluation_input` (the test split), `validation_input` (a split's
batches while training). Every header, size and label is
checked before the graph runs, naming the file.
"""
from models.datasets.fashion_mnist.reader import (evaluation_input, load_split, training_input,
                                                  validation_input)
from models.datasets.fashion_mnist.synthetic import DEFAULT_DATA_DIR, locate_or_generate

__all__ = ['DEFAULT_DATA_DIR', 'evaluation_input', 'load_split', 'locate_or_generate',
           'training_input', 'validation_input']
