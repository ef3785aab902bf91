"""The command `towers-legacy` (`python -m towers.legacy`): the runner (`towers.legacy.runner`),
started quietly. The filter of TensorFlow's C++ start-up lines (`towers.console`) must be in place
before TensorFlow's import, which the runner's own import makes."""
from towers import console


def main(argv=None):
    """Filters TensorFlow's start-up lines, then runs `towers.legacy.runner.main(argv)`."""
    console.filter_native_logs()
    from towers.legacy import runner  # imports TensorFlow (after the filter: see above)
    runner.main(argv)
