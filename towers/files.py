"""Writing outputs so that no reader, and no later run, ever finds half of one."""
import os
import shutil
import tempfile


def write_file_atomically(path, write):
    """Calls `write(temporary_path)` for a file beside `path`, then renames it to `path`.

    The temporary file keeps `path`'s extension, so writers that choose a format by it (e.g.
    matplotlib's `savefig`) still do. If `write` fails, `path` is as it was before.

    Args:
      path: the file to create or replace; its directory must exist.
      write: a function that writes the whole file at the path it is given.
    """
    folder, name = os.path.split(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix='.' + name + '.',
                                         suffix=os.path.splitext(name)[1], dir=folder)
    os.close(handle)
    try:
        write(temporary)
        os.replace(temporary, path)
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
