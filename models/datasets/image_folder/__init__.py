"""A folder of JPEGs, one subfolder per class (OCT2017's layout).

The data-set interface (`models.datasets`): `locate_or_generate`, `training_input`,
`evaluation_input` and `validation_input` (of a split `reader.list_split` listed), `naming_bad_input` (a JPEG damaged
between its markers, which only the decode finds).
"""
from towers import lazy

# The defaults of the scripts' flags are here, so that reading the flags imports no TensorFlow;
# `reader` and `synthetic` use them.

# Where the scripts look for a folder set when no --data_dir is given, and generate one.
DEFAULT_DATA_DIR = '/tmp/image_folder_data'
SPLITS = ('train', 'test')

# Imported when first used (`towers.lazy`).
__getattr__, __dir__ = lazy.exports(__name__, {
    'evaluation_input': 'models.datasets.image_folder.reader',
    'list_split': 'models.datasets.image_folder.reader',
    'naming_bad_input': 'models.datasets.image_folder.reader',
    'training_input': 'models.datasets.image_folder.reader',
    'validation_input': 'models.datasets.image_folder.reader',
    'locate_or_generate': 'models.datasets.image_folder.synthetic',
})

__all__ = ['DEFAULT_DATA_DIR', 'evaluation_input', 'list_split', 'locate_or_generate',
           'naming_bad_input', 'training_input', 'validation_input']
