"""`python -m towers.legacy [--legacy_devices N] script.py [flags]`: see `towers.legacy.runner`."""
from towers.legacy.entry import main

main()
