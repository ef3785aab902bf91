"""The command `towers-legacy` (`python -m towers.legacy`): the runner (`towers.legacy.runner`),
started quietly. The filter of TensorFlow's C++ start-up lines (`towers.console`) must be in place
before TensorFlow's import, which the runner's own import makes."""
import os
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
    # `tf.keras` is Keras 2 under the runner (`towers.legacy.shim`); said before TensorFlow's
    # import, it also keeps TensorFlow from importing Keras 3, and with it matplotlib, which
    # writes its font cache into the user's home (TF 1.15 did neither): about 1 s of start.
    os.environ.setdefault('TF_USE_LEGACY_KERAS', '1')
    from towers.legacy import runner  # imports TensorFlow (after the filter: see above)
    runner.main(argv)
