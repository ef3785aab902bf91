"""Running the project's scripts as a user does, for the tests of the scripts."""
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The training loop's line every --log_every_n_steps steps, as the tutorial printed it.
LOG_LINE = re.compile(r'^\S+ \S+: step (\d+), loss = \d+\.\d\d '
                      r'\(\d+\.\d examples/sec; \d+\.\d\d\d sec/batch\)$', re.MULTILINE)


def run_script(name, *args):
    """Runs scripts/`name` with `args` from the repository's root; returns the
    `subprocess.CompletedProcess`, its output captured as text."""
    return subprocess.run([sys.executable, os.path.join(REPO, 'scripts', name)] + list(args),
                          cwd=REPO, capture_output=True, text=True, timeout=600)
