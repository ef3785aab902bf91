"""A folder of JPEGs, one subfolder per class (OCT2017's layout).

The data-set interface (`models.datasets`): `locate_or_generate`, `training_input`,
`evaluation_input` and `validation_input` (of a split `reader.list_split` listed), `naming_bad_input` (a JPEG damaged
between its markers, which only the decode finds).
"""
from models.datasets.image_folder.reader import (evaluation_input, list_split, naming_bad_input,
                                                 training_input, validation_input)
from models.datasets.image_folder.synthetic import DEFAULT_DATA_DIR, locate_or_generate

__all__ = ['DEFAULT_DATA_DIR', 'evaluation_input', 'list_split', 'locate_or_generate',
           'naming_bad_input', 'training_input', 'validation_input']
