"""The command `towers-legacy` (`python -m towers.legacy`): the runner (`towers.legacy.runner`),
started quietly. The filter of TensorFlow's C++ start-up lines (`towers.console`) must be in place
before TensorFlow's import, which the runner's own import makes."""
import sys

from towers import cli, console


def main(argv=None):
    """Starts a Horovod job's ranks (`towers.legacy.horovod.launch`), or compares a program
    with TensorFlow 1.15 (`towers.legacy.compare`), or filters TensorFlow's start-up lines,
    then runs `towers.legacy.runner.main(argv)`."""
    from towers.legacy import compare  # imports no TensorFlow
    from towers.legacy.horovod import launch  # imports no TensorFlow
    command = sys.argv[1:] if argv is None else argv
    if launch.is_command(command):
        cli.run(launch.main, command)
    if compare.is_command(command):
        cli.run(compare.main, command)
    console.filter_native_logs()
    from towers.legacy import runner  # imports TensorFlow (after the filter: see above)
    runner.main(argv)
