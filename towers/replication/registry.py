"""How a training step is built and updated: the variable update, XLA and the precision.

tf_cnn_benchmarks offers several ways to run the same model (`--variable_update`, `--xla`,
`--use_fp16`) and says which wins where; a `Mode` is this project's choice among them, taken by
`towers.assemble` and `towers.fit` and given on every training script's command line
(`towers.flags.add_mode_flags`):

    towers.fit(recipe, input_fn, setup, role, train_dir, max_steps, examples_per_step,
               mode=towers.Mode(variable_update='replicated', xla=True))

This module holds no TensorFlow: the flags read it without importing TensorFlow.
"""
import collections

from towers.errors import TowersError

PARAMETER_SERVER = 'parameter_server'
REPLICATED = 'replicated'
VARIABLE_UPDATES = (PARAMETER_SERVER, REPLICATED)


class Mode(collections.namedtuple('Mode', ['variable_update', 'xla', 'mixed_precision'])):
    """The way the towers are built and updated.

    Attributes:
      variable_update: 'parameter_server' (`towers.build_towers`: the variables on the
        parameter device, the towers' gradients averaged there, one update) or 'replicated'
        (`towers.replication.all_reduce`: a copy of the variables on every tower device, the gradients
        all-reduced, every copy updated); checkpoints hold the same names in both.
      xla: compile each tower (its forward and backward passes) with XLA, through `jit_scope`.
      mixed_precision: each tower computes in float16 from float32 master weights, with
        dynamic loss scaling (`towers.replication.precision`).
    """
    __slots__ = ()

    def __new__(cls, variable_update=PARAMETER_SERVER, xla=False, mixed_precision=False):
        if variable_update not in VARIABLE_UPDATES:
            raise TowersError('unknown variable update %r; expected one of %s'
                             % (variable_update, ', '.join(VARIABLE_UPDATES)))
        return super().__new__(cls, variable_update, bool(xla), bool(mixed_precision))

    def describe(self):
        """One line, e.g. 'replicated, XLA, mixed precision'."""
        return ', '.join([self.variable_update] + (['XLA'] if self.xla else [])
                         + (['mixed precision'] if self.mixed_precision else []))


def check_in_one_process(variable_update):
    """Refuses a variable update that cannot train in a cluster (called for a cluster's tasks).

    Raises:
      TowersError: `variable_update` is 'replicated', whose copies live on one process's
        devices; a cluster keeps the variables on its parameter servers.
    """
    if variable_update == REPLICATED:
        raise TowersError('--variable_update %s trains in one process; a cluster keeps the '
                          'variables on its parameter servers (--variable_update %s)'
                          % (REPLICATED, PARAMETER_SERVER))
