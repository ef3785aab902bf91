"""Running one side of a comparison so that what it writes stays its own.

Each side runs in a mount namespace of its own (`unshare`, as an unprivileged user may since
Linux 5.11) where '/tmp', '/var/tmp', the home folder and the working folder are overlays: the
side reads everything there as it is, and everything it writes there (a fixed output path such as
'/tmp/cifar10_train', a relative 'train_dir', a generated data set) lands in the side's own
folder ('<compare_dir>/<side>/written/<n>'), the real folders untouched. So the two sides never
see each other's checkpoints, and the files each side wrote are listed by walking its folders.
The side reaches the comparison's own folder through a descriptor opened before the mounts
('/proc/self/fd/N/...'), wherever that folder lies. As on any overlay an unprivileged user
mounts, a folder that existed before the run cannot be renamed (EXDEV, as across file systems);
new folders and all files can.
"""
import os
import re
import shlex
import subprocess
import sys

from towers.errors import TowersError
from towers.legacy.compare import probe

_NOT_LISTED = ('__pycache__',)
# A folder Python's `tempfile.mkdtemp()` names: 'tmp' and 8 random characters.
_TEMPORARY = re.compile(r'^tmp[a-z0-9_]{8}$')
_ISOLATED = 'isolated'


def last_line(text):
    """The last non-blank line of a process's output, for an error that quotes it."""
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1].strip() if lines else '(no output)'


def program_of(script):
    """The command line's words that name the program: [SCRIPT], or ['-m', MODULE] for
    `script` given as ('-m', MODULE)."""
    return list(script) if isinstance(script, tuple) else [script]


def tf1_command(python, script, argv):
    """The command of a program's run on TensorFlow 1.15, with the probe (`python`: TF 1.15's);
    `script`: its file, or ('-m', MODULE)."""
    return [python, os.path.abspath(probe.__file__)] + program_of(script) + list(argv)


def runner_command(script, argv, runner_options=()):
    """The command of a program's run under the runner (`towers-legacy`)."""
    return ([sys.executable, '-m', 'towers.legacy'] + list(runner_options) + program_of(script)
            + list(argv))


class Side(object):
    """One side's run.

    Args:
      name: 'tf1' or 'runner': the folder of its files under the comparison's folder.
      command: the command line (a list) it runs.
      environment: its environment variables (a dict).
    """

    def __init__(self, name, command, environment):
        self.name = name
        self.command = command
        self.environment = environment
        self.returncode = None
        self.written = []           # (real path, size, where it lies now) of each file it wrote
        self.output = ''

    def folder(self, root):
        return os.path.join(root, self.name)

    def last_line(self):
        return last_line(self.output)


def overlaid_folders(working_folder):
    """The folders a side's writes are kept apart in: '/tmp', '/var/tmp', the home folder and
    `working_folder`, without one inside another, as real paths."""
    folders = {os.path.realpath(folder)
               for folder in ('/tmp', '/var/tmp', os.path.expanduser('~'), working_folder)
               if os.path.isdir(folder)}
    return sorted(folder for folder in folders
                  if not any(folder.startswith(other + os.sep) for other in folders)
                  and folder != os.sep)


def run(side, root, working_folder):
    """Runs `side` in its namespace, its output kept in '<root>/<side>/output.log'; fills
    `side.returncode`, `side.output` and `side.written`.

    Args:
      side: a `Side`; its environment may name '{root}' for the path by which the side reaches
        `root` (e.g. its probe's folder).
      root: the comparison's folder (it exists).
      working_folder: the folder the side starts in.

    Raises:
      TowersError: the namespace or its overlays could not be made (the reason quoted).
    """
    folders = overlaid_folders(working_folder)
    for folder in folders + [root]:
        if ',' in folder or ':' in folder:
            raise TowersError('cannot keep the runs apart in %s: an overlay cannot take a folder '
                              'whose path holds "," or ":"' % folder)
    descriptor = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        own = os.path.join('/proc/self/fd/%d' % descriptor, side.name)
        os.makedirs(side.folder(root), exist_ok=True)
        mounts = []
        # An overlay's folders are found when it is mounted: the one over the folder holding
        # `root` goes last, so that none is found through another overlay.
        for index, folder in sorted(enumerate(folders),
                                    key=lambda pair: root.startswith(pair[1] + os.sep)):
            upper, work = (os.path.join(side.folder(root), part, str(index))
                           for part in ('written', 'work'))
            os.makedirs(upper, exist_ok=True)
            os.makedirs(work, exist_ok=True)
            mounts.append('mount -t overlay overlay -o userxattr,lowerdir=%s,upperdir=%s,'
                          'workdir=%s %s'
                          % tuple(shlex.quote(path) for path in (folder, upper, work, folder)))
        script = ' && '.join(mounts + ['cd %s' % shlex.quote(working_folder),
                                       ': > %s' % shlex.quote(os.path.join(own, _ISOLATED))])
        script = '{ %s; } || exit 1; exec "$@"' % script
        environment = {key: value.replace('{root}', os.path.dirname(own))
                       for key, value in side.environment.items()}
        log_path = os.path.join(side.folder(root), 'output.log')
        with open(log_path, 'w') as log:
            done = subprocess.run(
                ['unshare', '--user', '--map-root-user', '--mount', '--propagation', 'private',
                 'sh', '-c', script, 'sh'] + list(side.command),
                stdout=log, stderr=subprocess.STDOUT, env=environment, pass_fds=(descriptor,),
                cwd=working_folder)
    except FileNotFoundError as err:
        raise TowersError('cannot keep the runs apart: %s is not installed (util-linux)'
                          % err.filename)
    finally:
        os.close(descriptor)
    with open(log_path, errors='replace') as log:
        side.output = log.read()
    if not os.path.isfile(os.path.join(side.folder(root), _ISOLATED)):
        raise TowersError('cannot keep the runs apart (a user and mount namespace with overlays '
                          'of %s, Linux 5.11 or later): %s' % (', '.join(folders),
                                                               side.last_line()))
    side.returncode = done.returncode
    side.written = _temporaries_named(_written(side.folder(root), folders))


def _written(folder, overlaid):
    """(real path, size in bytes, path now) of each file under the side's 'written/<n>' folders,
    sorted, where 'written/<n>' stands for `overlaid[n]`; Python's byte-code caches left out."""
    found = []
    for index, real in enumerate(overlaid):
        top = os.path.join(folder, 'written', str(index))
        for parent, names, files in os.walk(top):
            names[:] = [name for name in names if name not in _NOT_LISTED]
            for name in files:
                path = os.path.join(parent, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    found.append((os.path.join(real, os.path.relpath(path, top)),
                                  os.path.getsize(path), path))
    return sorted(found)


def _temporaries_named(written):
    """`written` with each folder a `tempfile.mkdtemp()` named at random (an Estimator's
    model_dir when it is given none) named 'tmp*<n>' instead: n = 1 for the folder whose first
    file was written first, and so on, so that the two sides' temporary folders pair up in the
    order they were made."""
    folders = [_temporary_folder(real) for real, _, _ in written]
    firsts = {}
    for folder, (_, _, now) in zip(folders, written):
        if folder:
            firsts[folder] = min(firsts.get(folder, float('inf')), os.path.getmtime(now))
    names = {folder: os.path.join(os.path.dirname(folder), 'tmp*%d' % (rank + 1))
             for rank, folder in enumerate(sorted(firsts, key=lambda f: (firsts[f], f)))}
    return sorted((names[folder] + real[len(folder):] if folder else real, size, now)
                  for folder, (real, size, now) in zip(folders, written))


def _temporary_folder(real):
    """The path of the first `tempfile.mkdtemp()` folder on the path `real`, or None."""
    parts = real.split(os.sep)
    index = next((i for i, part in enumerate(parts) if _TEMPORARY.match(part)), None)
    return None if index is None else os.sep.join(parts[:index + 1])
