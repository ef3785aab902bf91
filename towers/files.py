"""Writing outputs so that no reader, and no later run, ever finds half of one; reading the
JSON files that flags name."""
import json
import os
import shutil
import tempfile

from towers.errors import TowersError

# Where in its `train_dir` a training's chief writes the step timing of a run
# (`towers.training.loop`), which evaluations read for the training's batch.
TIMING_FILE = 'timing.json'


def write_file_atomically(path, write):
    """Calls `write(temporary_path)` for a file beside `path`, then renames it to `path`.

    The temporary file keeps `path`'s extension, so writers that choose a format by it (e.g.
    matplotlib's `savefig`) still do. If `write` fails, `path` is as it was before.

    Args:
      path: the file to create or replace; its directory must exist.
      write: a function that writes the whole file at the path it is given.

    Raises:
      OSError: from `write` (e.g. a full disk), naming `path` (a failed write names no file).
    """
    folder, name = os.path.split(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix='.' + name + '.',
                                         suffix=os.path.splitext(name)[1], dir=folder)
    os.close(handle)
    try:
        write(temporary)
        os.replace(temporary, path)
    except OSError as err:
        os.remove(temporary)
        raise OSError(err.errno, err.strerror or str(err), path) from err
    except BaseException:
        os.remove(temporary)
        raise


def write_directory_atomically(path, write):
    """Calls `write(staging_dir)` for a new directory beside `path`, then renames it to `path`.

    Meant for deterministic contents that several processes may write at once (the workers of a
    cluster generating the same data set): when another process renamed its directory into place
    first, this one's is deleted and theirs kept. If `write` fails, nothing is left behind.

    Args:
      path: the directory to create; it must not exist yet. Its parent is created if missing.
      write: a function that fills the (existing, empty) directory it is given.

    Returns:
      True when this call's directory is the one now at `path`.
    """
    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix='.' + os.path.basename(path) + '.', dir=parent)
    try:
        write(staging)
        os.rename(staging, path)
        return True
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not os.path.isdir(path):
            raise
        return False
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def write_json(path, value):
    """Writes `value` to `path` as JSON, indented, keys sorted, with a final newline, atomically.

    Args:
      path: the file to create or replace; its directory must exist.
      value: a JSON-serialisable value (dicts, lists, strings, numbers, bools, None).
    """
    def write(temporary):
        with open(temporary, 'w') as f:
            json.dump(value, f, indent=2, sort_keys=True)
            f.write('\n')
    write_file_atomically(path, write)


def read_json(path, flag):
    """Returns the JSON value in the file `path`, given with `flag`.

    Raises:
      TowersError: naming the flag and the file, when it cannot be read or is not JSON.
    """
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as err:
        raise TowersError('cannot read %s %s: %s' % (flag, path, err.strerror))
    except ValueError as err:
        raise TowersError('%s %s is not JSON: %s' % (flag, path, err))
