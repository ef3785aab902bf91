"""ImageNet (ILSVRC-2012) as TFRecord shards or list files.

The data-set interface (`models.datasets`): `locate_or_generate`, `training_input` and
`evaluation_input` (of a source `sources.open_source` or `open_split` opened; its batches as a
dataset, `validation_input`, also for validation while training), `naming_bad_input` (a record
that fails its in-graph check, or a corrupt shard).
"""
from towers import lazy

# The scripts' --data_dir when none is given (`synthetic` generates a set there), here so that
# reading the flags imports no TensorFlow.
DEFAULT_DATA_DIR = '/tmp/imagenet_data'

# Imported when first used (`towers.lazy`).
__getattr__, __dir__ = lazy.exports(__name__, {
    'evaluation_input': 'models.datasets.imagenet.reader',
    'naming_bad_input': 'models.datasets.imagenet.reader',
    'training_input': 'models.datasets.imagenet.reader',
    'validation_input': 'models.datasets.imagenet.reader',
    'open_source': 'models.datasets.imagenet.sources',
    'locate_or_generate': 'models.datasets.imagenet.synthetic',
    'open_split': 'models.datasets.imagenet.synthetic',
})

__all__ = ['DEFAULT_DATA_DIR', 'evaluation_input', 'locate_or_generate', 'naming_bad_input',
           'open_source', 'open_split', 'training_input', 'validation_input']
