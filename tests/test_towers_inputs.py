"""Specification of naming the input a pipeline failed on."""
import pytest

import towers
from towers import datasets as inputs
from towers.compat import tf


def parse_number(text):
    return tf.strings.to_number(text, tf.int32)


def test_the_first_input_the_op_fails_on_is_named_with_tensorflows_cause():
    assert inputs.first_failing(['1', '2', 'three', 'four'], parse_number) == (
        'three', 'StringToNumberOp could not correctly convert string: three')
    assert inputs.first_failing(['1', '2'], parse_number) is None


def test_a_pipelines_failure_becomes_one_error_naming_the_input():
    values = ['1', '2', 'x3']
    dataset = tf.data.Dataset.from_tensor_slices(values).map(parse_number).batch(3)
    batch = tf.data.make_one_shot_iterator(dataset).get_next()
    with pytest.raises(towers.TowersError, match=r'^bad number x3: StringToNumberOp'):
        with inputs.naming_failed_input(values, parse_number, lambda err: True,
                                        lambda value, cause: 'bad number %s: %s' % (value,
                                                                                     cause)):
            with tf.Session() as session:
                session.run(batch)
