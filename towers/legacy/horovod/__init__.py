"""Horovod for TF1 programs under the legacy runner, without Horovod: `horovod.tensorflow` (and
`horovod.tensorflow.keras`) as Horovod 0.16-0.28 gave them, on TensorFlow's own collectives.

    towers-legacy --np 2 train.py                          # two ranks on this machine
    towers-legacy horovodrun -np 2 -H localhost:2 python train.py
    towers-legacy mpirun -np 2 -bind-to none python train.py

`launch` starts one process per rank (`towers.cluster.launcher`'s machinery: a private network,
output prefixed by rank, the first failure ends the job); in each, `ranks` is the rank's place
and server, `collectives` Horovod's allreduce, allgather and broadcast as TensorFlow's
collective ops, `fusion` its tensor fusion, `optimizer` the `DistributedOptimizer`, broadcasts and
`BroadcastGlobalVariablesHook`, `keras` the tf.keras face, `api` the rest; `Namespace` serves
them at Horovod's import paths. Only the launch is imported without TensorFlow.
"""
import importlib

from towers.legacy.modules import ProxyModule, StubModule

ROOT = 'horovod'
# The public names of `horovod.tensorflow`: name -> module of this package holding it.
TENSORFLOW_NAMES = dict(
    [(name, 'api') for name in (
        'init', 'shutdown', 'is_initialized', 'size', 'rank', 'local_size', 'local_rank',
        'cross_size', 'cross_rank', 'is_homogeneous', 'size_op', 'local_size_op', 'rank_op',
        'local_rank_op', 'mpi_threads_supported', 'mpi_enabled', 'mpi_built', 'gloo_enabled',
        'gloo_built', 'nccl_built', 'ddl_built', 'ccl_built', 'cuda_built', 'rocm_built')]
    + [(name, 'collectives') for name in (
        'allreduce', 'allgather', 'broadcast', 'Compression', 'Average', 'Sum', 'Adasum', 'Min',
        'Max', 'Product')]
    + [('grouped_allreduce', 'fusion')]
    + [(name, 'optimizer') for name in (
        'DistributedOptimizer', 'broadcast_variables', 'broadcast_global_variables',
        'BroadcastGlobalVariablesHook')])
KERAS_NAMES = dict(
    [(name, 'api') for name in (
        'init', 'shutdown', 'is_initialized', 'size', 'rank', 'local_size', 'local_rank',
        'cross_size', 'cross_rank', 'mpi_threads_supported', 'mpi_enabled', 'mpi_built',
        'gloo_enabled', 'gloo_built', 'nccl_built', 'ddl_built', 'ccl_built', 'cuda_built',
        'rocm_built')]
    + [(name, 'collectives') for name in ('Compression', 'Average', 'Sum', 'Adasum')]
    + [(name, 'keras') for name in (
        'DistributedOptimizer', 'broadcast_global_variables', 'allreduce', 'allgather',
        'broadcast', 'load_model', 'callbacks')])
USAGE = 'horovod.tensorflow on TensorFlow collectives'


def _missing(attribute):
    return "towers-legacy's Horovod does not have it"


class _Names(dict):
    """name -> object, each imported from this package's module on first use."""

    def __init__(self, table):
        super().__init__()
        self._table = table

    def get(self, key, default=None):
        if key not in self._table:
            return default
        return getattr(importlib.import_module('%s.%s' % (__name__, self._table[key])), key)

    def __iter__(self):
        return iter(self._table)


class Namespace:
    """Horovod's modules for a script, recording their use in `usage`."""

    def __init__(self, usage):
        self._usage = usage
        self.tensorflow = self._proxy('horovod.tensorflow', [_Names(TENSORFLOW_NAMES)])
        self.tensorflow.keras = self._proxy('horovod.tensorflow.keras', [_Names(KERAS_NAMES)])
        self._modules = {'horovod.tensorflow': self.tensorflow,
                         'horovod.tensorflow.keras': self.tensorflow.keras}

    def _proxy(self, name, sources):
        module = ProxyModule(name, name, sources, self._usage, False, _missing)
        module.__path__ = []
        return module

    def resolve(self, fullname):
        """The module to import as `fullname`, or None outside `horovod`."""
        if fullname != ROOT and not fullname.startswith(ROOT + '.'):
            return None
        if fullname == ROOT:
            return self._proxy(ROOT, [{'tensorflow': self.tensorflow}])
        if fullname == 'horovod.tensorflow.keras.callbacks':
            return self._proxy(fullname, [importlib.import_module(__name__ + '.callbacks')])
        if fullname == 'horovod.tensorflow.compression':
            return self._proxy(fullname, [_Names({'Compression': 'collectives'})])
        return self._modules.get(fullname) or StubModule(fullname, fullname, [], self._usage,
                                                         False, _missing)
