"""`tf.keras.datasets` from the Keras cache, never downloaded, under the legacy runner.

tf-keras's loaders (`tf.keras.datasets.mnist.load_data(path)`, `cifar10`, `imdb`, ...) call
`get_file`, which keeps the file in the Keras cache (`<cache_dir or ~/.keras>/<cache_subdir>/`,
or `/tmp/.keras/...` when that folder is not writable) and downloads it when it is missing or
its hash differs from the published one: a Horovod program's `load_data('MNIST-data-%d' % rank)`
would download a copy per rank, and a generated file of the same format would be replaced.
`install` makes every loader read the file that is in the cache instead:

- a file whose hash is not the published one is read anyway, with one warning per file;
- a missing file raises `LegacyError`, naming where Keras looks for it and where it comes from;
- a `.tar.gz` archive the loader extracts (CIFAR) may be absent when its extracted folder is
  there.
"""
import functools
import importlib
import logging
import os
import pkgutil
from urllib.parse import urlsplit

from towers.legacy.modules import LegacyError

USAGE = 'tf.keras.datasets from the Keras cache, never downloaded'
DATASETS = 'tf_keras.src.datasets'
DATA_UTILS = 'tf_keras.src.utils.data_utils'

log = logging.getLogger(__name__)
_installed = []
_warned = set()


def install(usage):
    """Makes each module of tf-keras's datasets read its files with `cached_get_file`, for the
    rest of the process (once); each use is recorded in `usage` (a `Usage`)."""
    if _installed:
        return
    datasets = importlib.import_module(DATASETS)
    keras_get_file = importlib.import_module(DATA_UTILS).get_file

    @functools.wraps(cached_get_file)
    def get_file(*args, **kwargs):
        usage.add(USAGE)
        return cached_get_file(*args, **kwargs)
    for info in pkgutil.iter_modules(datasets.__path__):
        module = importlib.import_module('%s.%s' % (DATASETS, info.name))
        if getattr(module, 'get_file', None) is keras_get_file:
            module.get_file = get_file
    _installed.append(usage)


def cache_paths(fname, origin, untar=False, cache_subdir='datasets', cache_dir=None):
    """Where tf-keras's `get_file` keeps a file, as it computes it.

    Returns:
      (the file's path, the folder it is extracted to with `untar`, else None).
    """
    base = os.path.expanduser(cache_dir or os.path.join('~', '.keras'))
    if not os.access(base, os.W_OK):
        base = os.path.join('/tmp', '.keras')
    name = os.fspath(fname) if fname else os.path.basename(urlsplit(origin).path)
    if not untar:
        return os.path.join(base, cache_subdir, name), None
    if name.endswith('.tar.gz'):
        name = name[:-len('.tar.gz')]
    folder = os.path.join(base, cache_subdir, name)
    return folder + '.tar.gz', folder


def cached_get_file(fname=None, origin=None, untar=False, md5_hash=None, file_hash=None,
                    cache_subdir='datasets', hash_algorithm='auto', extract=False,
                    archive_format='auto', cache_dir=None):
    """tf-keras's `get_file` (same arguments) for a file that is in the cache: the path of the
    file, or of its extracted folder with `untar`; extracted as Keras extracts it.

    Raises:
      LegacyError: the file is not in the cache.
    """
    data_utils = importlib.import_module(DATA_UTILS)
    path, folder = cache_paths(fname, origin, untar, cache_subdir, cache_dir)
    if not os.path.exists(path):
        if folder is not None and os.path.isdir(folder):
            return folder
        raise LegacyError('tf.keras.datasets: %s is not in the Keras cache (it comes from %s); '
                          'towers-legacy does not download: put the file there'
                          % (path, origin))
    if md5_hash is not None and file_hash is None:
        file_hash, hash_algorithm = md5_hash, 'md5'
    if (file_hash is not None and path not in _warned
            and not data_utils.validate_file(path, file_hash, algorithm=hash_algorithm)):
        _warned.add(path)
        log.warning('tf.keras.datasets: %s is not the published file (its hash is not %s); '
                    'reading it as it is', path, file_hash)
    return data_utils.get_file(fname, origin, untar=untar, cache_subdir=cache_subdir,
                               extract=extract, archive_format=archive_format,
                               cache_dir=cache_dir)
