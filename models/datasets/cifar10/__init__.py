"""CIFAR-10 in its binary format (`cifar-10-batches-bin`), as the TF1 tutorial reads it.

The data-set interface (`models.datasets`): `locate_or_generate`, `training_input` (the
tutorial's `distorted_inputs`), `evaluation_input` (the tutorial's `inputs`),
`validation_input` (the test set once, while training). A label byte out of
range is found before the graph runs, naming the file and record.
"""
from models.datasets.cifar10.reader import (distorted_inputs, evaluation_input, inputs,
                                            training_input, validation_input)
from models.datasets.cifar10.synthetic import DEFAULT_DATA_DIR, locate_or_generate

__all__ = ['DEFAULT_DATA_DIR', 'distorted_inputs', 'evaluation_input', 'inputs',
           'locate_or_generate', 'training_input', 'validation_input']
