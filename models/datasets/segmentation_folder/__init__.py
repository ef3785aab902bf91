"""Image/mask pairs in a plain folder: one `images/` + `masks/` folder (a fixed fraction held out
for testing) or `train/` and `test/` folders of them.

The data-set interface (`models.datasets`): `locate_or_generate`, `training_input` (of a split
`reader.load_split` read), `evaluation_input` (the test subset) and `validation_input` (its batches while training). Every pair is read before the
graph runs, a bad one named.
"""
from towers import lazy

# The defaults of the scripts' flags are here, so that reading the flags imports no TensorFlow;
# `reader` and `synthetic` use them.

# Where the scripts look for a folder set when no --data_dir is given, and generate one.
DEFAULT_DATA_DIR = '/tmp/segmentation_data'
# Of one folder of pairs, the fraction held out for testing.
TEST_FRACTION = 0.2

# Imported when first used (`towers.lazy`).
__getattr__, __dir__ = lazy.exports(__name__, {
    'evaluation_input': 'models.datasets.segmentation_folder.reader',
    'load_split': 'models.datasets.segmentation_folder.reader',
    'training_input': 'models.datasets.segmentation_folder.reader',
    'validation_input': 'models.datasets.segmentation_folder.reader',
    'locate_or_generate': 'models.datasets.segmentation_folder.synthetic',
})

__all__ = ['DEFAULT_DATA_DIR', 'evaluation_input', 'load_split', 'locate_or_generate',
           'training_input', 'validation_input']
