"""TF 1.15's names at TensorFlow's private module paths that TF 2.x moved, back where TF1 code
read them.

Code of 2017-2019 imported TensorFlow's own modules (`from tensorflow.python.ops import
control_flow_ops`, `from tensorflow.python.framework import ops`): libraries, tests, and
programs that copied TensorFlow's idioms. TensorFlow 2.x split those modules; the name still
exists, in another module, with the same behaviour: `control_flow_ops.cond` is `cond.cond`,
`ops.Tensor` is `tensor.Tensor`, `variables.VariableV1` is `variable_v1.VariableV1`. The
feature-column module of TF 1 (`feature_column.feature_column`) kept its old columns under
private names (`_numeric_column`): its public names of TF 1.15 (`numeric_column`) gave those.

`install` adds each such name to its TF 1.15 module where that module lacks it (once).
"""
from towers.compat import internal

# TF 1.15's module (below tensorflow.python) -> {its name: (TF 2.21's module, name there)}.
MOVED = {
    'framework.ops': {
        'Tensor': ('framework.tensor', 'Tensor'),
        'IndexedSlices': ('framework.indexed_slices', 'IndexedSlices'),
        'SparseTensor': ('framework.sparse_tensor', 'SparseTensor'),
        'TensorShape': ('framework.tensor_shape', 'TensorShape'),
        'register_tensor_conversion_function': (
            'framework.tensor_conversion_registry', 'register_tensor_conversion_function')},
    'ops.control_flow_ops': {
        'cond': ('ops.cond', 'cond'), 'case': ('ops.control_flow_case', 'case'),
        'while_loop': ('ops.while_loop', 'while_loop'),
        'Assert': ('ops.control_flow_assert', 'Assert')},
    'ops.variables': {'VariableV1': ('ops.variable_v1', 'VariableV1')},
    'saved_model.utils_impl': {
        'get_variables_path': ('saved_model.path_helpers', 'get_variables_path'),
        'get_variables_dir': ('saved_model.path_helpers', 'get_variables_dir'),
        'get_assets_dir': ('saved_model.path_helpers', 'get_assets_dir')},
    'saved_model.loader_impl': {'_parse_saved_model': ('saved_model.loader_impl',
                                                       'parse_saved_model')},
    'feature_column.feature_column': {
        name: ('feature_column.feature_column', '_' + name) for name in (
            'numeric_column', 'bucketized_column', 'categorical_column_with_hash_bucket',
            'categorical_column_with_vocabulary_file', 'categorical_column_with_vocabulary_list',
            'categorical_column_with_identity', 'weighted_categorical_column', 'crossed_column',
            'embedding_column', 'indicator_column')},
}

_installed = []


def install():
    """Adds the names of `MOVED` to TensorFlow's modules that lack them (once)."""
    if _installed:
        return
    for path, names in MOVED.items():
        module = internal(path)
        for name, (source, source_name) in names.items():
            if not hasattr(module, name):
                setattr(module, name, getattr(internal(source), source_name))
    _installed.append(True)
