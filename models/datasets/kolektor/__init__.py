"""KolektorSDD as it ships (item folders `kos01`..`kos50` of parts and masks).

The data-set interface (`models.datasets`): `locate_or_generate`, `training_input` (of a split
`reader.load_split` read), `evaluation_input` (a subset, read whole), `validation_input` (its
batches while training). Every image and mask is
read before the graph runs, a bad one named.
"""
from models.datasets.kolektor import reader
from models.datasets.kolektor.reader import (evaluation_input, load_split, training_input,
                                             validation_input)
from models.datasets.kolektor.synthetic import DEFAULT_DATA_DIR, locate_or_generate

__all__ = ['DEFAULT_DATA_DIR', 'evaluation_input', 'load_split', 'locate_or_generate', 'reader',
           'training_input', 'validation_input']
