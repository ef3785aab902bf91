"""How fast a script answers `--help`, against importing TensorFlow (`benchmark.py --startup`).

Every script reads its flags before it imports TensorFlow (`towers.cli`), so `--help` and a bad
flag answer at once. Measured in turns, each a fresh process: a round times
`python -c "import tensorflow"`, then `python scripts/X.py --help` of every script, and the next
round's import closes it; a script's ratio in a round is its time over the mean of the two
imports around it. The figure is the rounds' median ratio, with its quartiles
(`measure.rounds_ratio`). The target is well under 0.5.
"""
import glob
import os
import subprocess
import sys
import time

import numpy as np

from towers.benchmarks import measure

TARGET = 0.5
IMPORT_TENSORFLOW = ('-c', 'import tensorflow')


def scripts(directory):
    """The scripts of `directory` (every `*.py`), sorted."""
    return sorted(glob.glob(os.path.join(directory, '*.py')))


def _seconds(arguments):
    start = time.perf_counter()
    subprocess.run([sys.executable] + list(arguments), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def measure_help(paths, repeats):
    """Each script's `--help` time over TensorFlow's import time, in `repeats` rounds.

    Returns:
      (ratios, seconds): script path -> `measure.Ratio`, and the median seconds of
      'import tensorflow' and of each script's `--help`.
    """
    imports = [_seconds(IMPORT_TENSORFLOW)]
    helps = {path: [] for path in paths}
    for _ in range(repeats):
        for path in paths:
            helps[path].append(_seconds((path, '--help')))
        imports.append(_seconds(IMPORT_TENSORFLOW))
    around = [(before + after) / 2 for before, after in zip(imports, imports[1:])]
    ratios = {path: measure.rounds_ratio([t / i for t, i in zip(times, around)])
              for path, times in helps.items()}
    seconds = {path: float(np.median(times)) for path, times in helps.items()}
    seconds['import tensorflow'] = float(np.median(imports))
    return ratios, seconds


def report(ratios, seconds):
    """The benchmark's lines: a script a line, then the worst against the target."""
    lines = ['`--help` time over `python -c "import tensorflow"` (%.2f s median), in turns:'
             % seconds['import tensorflow']]
    for path, ratio in sorted(ratios.items()):
        lines.append('  %-34s %.3f (quartiles %.3f-%.3f; %.2f s)'
                     % (os.path.basename(path), ratio.median, ratio.low, ratio.high,
                        seconds[path]))
    worst = max(ratios.items(), key=lambda item: item[1].median)
    lines.append('target: every script under %.1f: %s (worst %s, %.3f)'
                 % (TARGET, 'met' if worst[1].median < TARGET else 'NOT met',
                    os.path.basename(worst[0]), worst[1].median))
    return lines
