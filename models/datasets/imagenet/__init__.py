"""ImageNet (ILSVRC-2012) as TFRecord shards or list files.

The data-set interface (`models.datasets`): `locate_or_generate`, `training_input` and
`evaluation_input` (of a source `sources.open_source` or `open_split` opened; its batches as a
dataset, `validation_input`, also for validation while training), `naming_bad_input` (a record
that fails its in-graph check, or a corrupt shard).
"""
from models.datasets.imagenet.reader import (evaluation_input, naming_bad_input, training_input,
                                             validation_input)
from models.datasets.imagenet.sources import open_source
from models.datasets.imagenet.synthetic import DEFAULT_DATA_DIR, locate_or_generate, open_split

__all__ = ['DEFAULT_DATA_DIR', 'evaluation_input', 'locate_or_generate', 'naming_bad_input',
           'open_source', 'open_split', 'training_input', 'validation_input']
