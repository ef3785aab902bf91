"""Image/mask pairs in a plain folder: one `images/` + `masks/` folder (a fixed fraction held out
for testing) or `train/` and `test/` folders of them.

The data-set interface (`models.datasets`): `locate_or_generate`, `training_input` (of a split
`reader.load_split` read), `evaluation_input` (the test subset) and `validation_input` (its batches while training). Every pair is read before the
graph runs, a bad one named.
"""
from models.datasets.segmentation_folder.reader import (evaluation_input, load_split,
                                                        training_input, validation_input)
from models.datasets.segmentation_folder.synthetic import DEFAULT_DATA_DIR, locate_or_generate

__all__ = ['DEFAULT_DATA_DIR', 'evaluation_input', 'load_split', 'locate_or_generate',
           'training_input', 'validation_input']
