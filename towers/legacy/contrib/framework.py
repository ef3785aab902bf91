"""`tf.contrib.framework` of TF 1.15 beyond tf-slim's variable and `arg_scope` helpers: its
`nest` (TensorFlow's, with TF 1.x's names `is_sequence` and `is_sequence_or_composite`), the
name-scope and tensor checks, `smart_cond`, the orthogonal convolution initializers,
`RecordInput`, `get_placeholders`, `reduce_sum_n`, `with_shape`; each TensorFlow 2's own function
where TensorFlow still has it.

`install` gives `tensorflow.python.util.nest` back `is_sequence`, the name TF 1.x's code (and
programs importing that module) called; TensorFlow 2.x renamed it `is_nested`.
"""
import types

from towers.compat import internal as _internal, tf


framework_ops = _internal('framework.ops')
smart_cond_lib = _internal('framework.smart_cond')
sparse_tensor = _internal('framework.sparse_tensor')
tensor_spec = _internal('framework.tensor_spec')
check_ops = _internal('ops.check_ops')
data_flow_ops = _internal('ops.data_flow_ops')
init_ops = _internal('ops.init_ops')
deprecation = _internal('util.deprecation')
tf_nest = _internal('util.nest')

_TF1_NEST_NAMES = {'is_sequence': tf_nest.is_nested,
                   'is_sequence_or_composite': tf_nest.is_nested_or_composite}


def install():
    """Gives TensorFlow's `nest` module TF 1.x's names it lacks (`is_sequence`)."""
    for name, function in _TF1_NEST_NAMES.items():
        if not hasattr(tf_nest, name):
            setattr(tf_nest, name, function)


def _nest_module():
    module = types.ModuleType('tensorflow.contrib.framework.nest')
    module.__dict__.update({name: value for name, value in vars(tf_nest).items()
                            if not name.startswith('_') and callable(value)})
    module.__dict__.update(_TF1_NEST_NAMES)
    return module


nest = _nest_module()


def get_name_scope():
    """The name scope of the default graph where it is called ('tower_0/conv1'; '' at top)."""
    return tf.get_default_graph().get_name_scope()


def get_placeholders(graph):
    """The output tensors of every `Placeholder` op of `graph`, in the graph's op order."""
    return [op.outputs[0] for op in graph.get_operations() if op.type == 'Placeholder']


def reduce_sum_n(tensors, name=None):
    """The elementwise sum of a list of tensors of one shape and dtype (the one tensor itself
    when the list holds one)."""
    tensors = [tf.convert_to_tensor(t) for t in tensors]
    if not tensors:
        raise ValueError('No tensors provided.')
    with tf.name_scope(name, 'reduce_sum_n', tensors) as scope:
        if len(tensors) == 1:
            return tf.identity(tensors[0], name=scope)
        return tf.add_n(tensors, name=scope)


def with_shape(expected_shape, tensor):
    """`tensor`, with the static check (and, for an unknown dimension, an assertion run with
    it) that its shape is `expected_shape` (a list or a 1-D integer tensor)."""
    tensor = tf.convert_to_tensor(tensor)
    if isinstance(expected_shape, (list, tuple)):
        if not tensor.shape.is_compatible_with(expected_shape):
            raise ValueError('Invalid shape for tensor %s, expected %s, got %s.'
                             % (tensor.name, expected_shape, tensor.shape))
        if tensor.shape.is_fully_defined():
            return tensor
    actual = tf.shape(tensor)
    expected = tf.cast(tf.convert_to_tensor(expected_shape), actual.dtype)
    check = tf.assert_equal(actual, expected, message='Wrong shape for %s' % tensor.name)
    with tf.control_dependencies([check]):
        return tf.identity(tensor)


def with_same_shape(expected_tensor, tensor):
    """`tensor`, checked to have the shape of `expected_tensor` (see `with_shape`)."""
    expected = tf.convert_to_tensor(expected_tensor)
    shape = (expected.shape.as_list() if expected.shape.is_fully_defined()
             else tf.shape(expected))
    return with_shape(shape, tensor)


def assert_scalar_int(tensor, name=None):
    """`tensor`, checked to be a scalar of an integer dtype (a `ValueError` otherwise)."""
    with tf.name_scope(name, 'assert_scalar_int', [tensor]) as scope:
        tensor = tf.convert_to_tensor(tensor)
        if not tensor.dtype.base_dtype.is_integer:
            raise ValueError('Expected integer type for %s, got %s.' % (tensor.name,
                                                                       tensor.dtype))
        return check_ops.assert_scalar(tensor, name=scope)


def remove_squeezable_dimensions(predictions, labels, name=None):
    """`(predictions, labels)` with a last dimension of size 1 squeezed from the one whose rank
    is the other's plus one (TF 1.x's contrib form: `tf.compat.v1`'s confusion_matrix helper)."""
    return _internal('ops.confusion_matrix').remove_squeezable_dimensions(labels, predictions, name=name)[::-1]


NAMES = {
    'nest': nest, 'get_name_scope': get_name_scope, 'get_placeholders': get_placeholders,
    'reduce_sum_n': reduce_sum_n, 'with_shape': with_shape, 'with_same_shape': with_same_shape,
    'assert_scalar_int': assert_scalar_int,
    'remove_squeezable_dimensions': remove_squeezable_dimensions,
    'assert_scalar': check_ops.assert_scalar,
    'assert_same_float_dtype': check_ops.assert_same_float_dtype,
    'convert_to_tensor_or_sparse_tensor': sparse_tensor.convert_to_tensor_or_sparse_tensor,
    'get_graph_from_inputs': getattr(framework_ops, '_get_graph_from_inputs'),
    'is_numeric_tensor': tf.is_numeric_tensor, 'is_non_decreasing': tf.is_non_decreasing,
    'is_strictly_increasing': tf.is_strictly_increasing,
    'prepend_name_scope': framework_ops.prepend_name_scope,
    'strip_name_scope': framework_ops.strip_name_scope,
    'smart_cond': smart_cond_lib.smart_cond, 'smart_case': smart_cond_lib.smart_case,
    'smart_constant_value': smart_cond_lib.smart_constant_value,
    'TensorSpec': tensor_spec.TensorSpec, 'BoundedTensorSpec': tensor_spec.BoundedTensorSpec,
    'RecordInput': data_flow_ops.RecordInput, 'py_func': tf.py_func,
    'deprecated': deprecation.deprecated, 'deprecated_args': deprecation.deprecated_args,
    'deprecated_arg_values': deprecation.deprecated_arg_values,
    'convolutional_delta_orthogonal': init_ops.convolutional_delta_orthogonal,
    'convolutional_orthogonal_1d': init_ops.convolutional_orthogonal_1d,
    'convolutional_orthogonal_2d': init_ops.convolutional_orthogonal_2d,
    'convolutional_orthogonal_3d': init_ops.convolutional_orthogonal_3d,
}
