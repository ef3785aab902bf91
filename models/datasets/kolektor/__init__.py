"""KolektorSDD as it ships (item folders `kos01`..`kos50` of parts and masks).

The data-set interface (`models.datasets`): `locate_or_generate`, `training_input` (of a split
`reader.load_split` read), `evaluation_input` (a subset, read whole), `validation_input` (its
batches while training). Every image and mask is
read before the graph runs, a bad one named.
"""
import os

from towers import lazy

# The defaults of the scripts' flags are here, so that reading the flags imports no TensorFlow;
# `reader` and `synthetic` use them.

# Where the scripts look for KolektorSDD when no --data_dir is given, and generate a set: the
# repository's git-ignored data folder.
_REPOSITORY = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..', '..'))
DEFAULT_DATA_DIR = os.path.join(_REPOSITORY, 'data', 'kolektor')
# Side of the square the masks are dilated with before downsampling; 1 turns dilation off.
DILATE = 5
SPLITS = ('common', 'fold1', 'fold2', 'fold3')
SUBSETS = ('train', 'test')
# The generated set: items, parts per item, image size and the fraction of defective parts.
NUM_ITEMS = 50
PARTS_PER_ITEM = 8
IMAGE_HEIGHT = 640
IMAGE_WIDTH = 256
DEFECT_FRACTION = 0.15

# Imported when first used (`towers.lazy`).
__getattr__, __dir__ = lazy.exports(__name__, {
    'reader': 'models.datasets.kolektor.reader',
    'evaluation_input': 'models.datasets.kolektor.reader',
    'load_split': 'models.datasets.kolektor.reader',
    'training_input': 'models.datasets.kolektor.reader',
    'validation_input': 'models.datasets.kolektor.reader',
    'locate_or_generate': 'models.datasets.kolektor.synthetic',
})

__all__ = ['DEFAULT_DATA_DIR', 'evaluation_input', 'load_split', 'locate_or_generate', 'reader',
           'training_input', 'validation_input']
