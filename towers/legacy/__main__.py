"""`python -m towers.legacy [--legacy_devices N] script.py [flags]`: see `towers.legacy.runner`."""
from towers.legacy.runner import main

main()
