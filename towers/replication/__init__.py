"""How the towers are built and updated: the replication modes and their wrappers.

`registry` names the variable updates, what each supports and the `Mode` of a training step;
each is a module behind one small interface: `parameter_server` (the classic towers,
`towers.build_towers`), `all_reduce` (tf_cnn_benchmarks' replicated mode) and `mirrored`
(`tf.distribute.MirroredStrategy`, compared by the benchmark). `tower` holds what they share
(one tower's build, objectives, shards). XLA and mixed precision (`precision`) wrap any of them,
in `modes` and nowhere else:

    optimizer = replication.wrap_optimizer(mode, optimizer)        # loss scaling
    replicated = replication.build(mode, tower_fn, inputs, devices, optimizer, objectives)

`keras_models` shares a Keras model between the towers.
"""
from towers import lazy
from towers.replication.registry import (MODES, PARAMETER_SERVER, REPLICATED, VARIABLE_UPDATES,
                                         Mode, check, get, unsupported)

__all__ = ['MODES', 'PARAMETER_SERVER', 'REPLICATED', 'VARIABLE_UPDATES', 'Mode', 'Replicated',
           'as_summarized', 'build', 'check', 'get', 'unsupported', 'wrap_optimizer']

# Imported when first used (`towers.lazy`): the registry, which the flags read, imports no
# TensorFlow.
__getattr__, __dir__ = lazy.exports(__name__, {
    'Replicated': 'towers.replication.tower', 'as_summarized': 'towers.replication.modes',
    'build': 'towers.replication.modes', 'wrap_optimizer': 'towers.replication.modes'})
