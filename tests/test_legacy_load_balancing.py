"""Specification of `tf.contrib.training.GreedyLoadBalancingStrategy` and `byte_size_load_fn`:
each variable goes to the parameter device least loaded so far, a variable's load its bytes."""
import pytest

from towers.compat import tf
from towers.legacy.contrib import load_balancing


def placed(strategy, shapes, resource=False):
    with tf.device(tf.train.replica_device_setter(ps_tasks=2, ps_strategy=strategy)):
        return [tf.get_variable('v%d' % i, shape, use_resource=resource).device
                for i, shape in enumerate(shapes)]


def test_each_variable_goes_to_the_least_loaded_task_lowest_index_first():
    strategy = load_balancing.GreedyLoadBalancingStrategy(2, load_balancing.byte_size_load_fn)
    assert placed(strategy, [[100], [10], [10], [200]]) == [
        '/job:ps/task:0', '/job:ps/task:1', '/job:ps/task:1', '/job:ps/task:1']


def test_resource_variables_are_balanced_by_their_bytes_too():
    strategy = load_balancing.GreedyLoadBalancingStrategy(2, load_balancing.byte_size_load_fn)
    assert placed(strategy, [[8, 8], [4], [4]], resource=True) == [
        '/job:ps/task:0', '/job:ps/task:1', '/job:ps/task:1']


def test_byte_size_is_elements_times_the_dtype_size():
    variable = tf.get_variable('w', [3, 5], tf.float64)
    assert load_balancing.byte_size_load_fn(variable.op) == 3 * 5 * 8
    assert load_balancing.byte_size_load_fn(tf.zeros([4], tf.int32).op) == 16


def test_byte_size_of_an_op_of_unknown_shape_is_an_error():
    unknown = tf.placeholder(tf.float32, [None, 3])
    with pytest.raises(ValueError, match='shape of op .* is not fully defined'):
        load_balancing.byte_size_load_fn(unknown.op)
