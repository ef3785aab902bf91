"""`tf.contrib.learn.datasets.base` (also `tensorflow.contrib.learn.python.learn.datasets.base`):
TF 1.x's small data-set helpers, offline.

`maybe_download(filename, work_directory, source_url)` returns the path of a file that is
already in `work_directory`; TF 1.x downloaded a missing one, this never downloads (tower
machines often have no network) and stops with one line naming the file, the folder and where
to fetch it. `load_csv_with_header` and `load_csv_without_header` read TF 1.x's CSV data sets
(the Iris tutorial's) into a `Dataset(data, target)`.
"""
import collections
import csv
import os

import numpy as np

from towers.compat import tf
from towers.legacy.modules import LegacyError

Dataset = collections.namedtuple('Dataset', ['data', 'target'])
Datasets = collections.namedtuple('Datasets', ['train', 'validation', 'test'])


def maybe_download(filename, work_directory, source_url):
    """The path `work_directory/filename`, which must exist (`work_directory` is made if
    missing, as TF 1.x made it).

    Raises:
      LegacyError: the file is not there.
    """
    if not tf.gfile.Exists(work_directory):
        tf.gfile.MakeDirs(work_directory)
    path = os.path.join(work_directory, filename)
    if not tf.gfile.Exists(path):
        raise LegacyError('%s is not in %s: towers-legacy never downloads; fetch it from %s '
                          'into that folder' % (filename, work_directory, source_url))
    return path


def load_csv_with_header(filename, target_dtype, features_dtype, target_column=-1):
    """A `Dataset` from a CSV file whose first row is 'n_samples,n_features,...': data
    [n_samples, n_features] of `features_dtype`, target [n_samples] of `target_dtype`."""
    with tf.gfile.Open(filename) as f:
        rows = csv.reader(f)
        header = next(rows)
        n_samples, n_features = int(header[0]), int(header[1])
        data = np.zeros((n_samples, n_features), dtype=features_dtype)
        target = np.zeros((n_samples,), dtype=target_dtype)
        for i, row in enumerate(rows):
            target[i] = np.asarray(row.pop(target_column), dtype=target_dtype)
            data[i] = np.asarray(row, dtype=features_dtype)
    return Dataset(data=data, target=target)


def load_csv_without_header(filename, target_dtype, features_dtype, target_column=-1):
    """A `Dataset` from a CSV file of rows only (no header row)."""
    with tf.gfile.Open(filename) as f:
        rows = [row for row in csv.reader(f) if row]
    target = np.array([row.pop(target_column) for row in rows], dtype=target_dtype)
    return Dataset(data=np.array(rows, dtype=features_dtype), target=target)
