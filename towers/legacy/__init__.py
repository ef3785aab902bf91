"""Running a user's TF1-era program unchanged on TensorFlow 2.16-2.21, and importing it.

    python -m towers.legacy [--legacy_devices N] path/to/script.py [the script's own flags]
    towers-legacy ...                                   # the same, as an installed command
    towers-legacy --check path/to/script.py             # what it uses, without running it

    originals = legacy.import_originals('path/to/original', ['model', 'train'], '--original_dir')
    towers-legacy export --meta_graph model.ckpt-N.meta --inputs NAME:TENSOR \
        --outputs NAME:TENSOR --export_dir OUT          # a checkpoint as a SavedModel (`export`)

`runner` is the command; `shim` what `import tensorflow` (or `tensorflow.compat.v1`) gives the
script (`towers.compat.tf` itself, with `tf.contrib`, `tf.app`, `tf.flags`, `tf.logging`,
`tf.gfile`); `contrib` the parts of `tf.contrib` provided, from one table (`contrib.pieces`);
`examples`, `input_data` and `mnist` TF 1.x's `tensorflow.examples.tutorials.mnist`;
`numpy_aliases` NumPy's removed names; `scipy_misc` `scipy.misc`'s image functions;
`libraries` scikit-learn's, matplotlib's and py-cpuinfo's 2019 behaviour; `estimator` TF 1.15's
`tf.estimator`, on this project's loop; `devices` the mapping of `--legacy_devices` (and the
GPUs a script counts); `program` the reading of a script and `check` the static report of
`--check`; `modules` the module objects and errors. This package and `towers.compat` are the
only code that touches `sys.modules`; the shim lasts for the rest of the process.
"""
from towers import lazy

# Imported when first used (`towers.lazy`): `towers-legacy` filters TensorFlow's start-up lines
# before anything imports it (`towers.legacy.entry`).
__getattr__, __dir__ = lazy.exports(__name__, {
    'LegacyError': 'towers.legacy.modules', 'RemovedAttributeError': 'towers.legacy.modules',
    'RemovedModuleError': 'towers.legacy.modules', 'Usage': 'towers.legacy.modules',
    'import_originals': 'towers.legacy.shim', 'install': 'towers.legacy.shim'})

__all__ = ['LegacyError', 'RemovedAttributeError', 'RemovedModuleError', 'Usage',
           'import_originals', 'install']
