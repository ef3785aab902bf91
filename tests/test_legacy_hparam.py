"""Specification of `tf.contrib.training.HParams` under the legacy runner: TensorFlow 1.x's
types, parsing and errors."""
import copy
import json

import pytest

from towers.legacy.contrib.hparam import HParams


def make():
    return HParams(learning_rate=0.1, layers=[64, 32], use_bn=True, name='net', steps=10)


def test_parse_converts_each_value_to_the_type_of_its_default():
    hparams = make().parse('learning_rate=1,layers=[128, 64,32],use_bn=false,name=big,steps=20')
    assert hparams.values() == {'learning_rate': 1.0, 'layers': [128, 64, 32],
                                'use_bn': False, 'name': 'big', 'steps': 20}
    assert type(hparams.learning_rate) is float and type(hparams.steps) is int


def test_parse_refuses_a_float_for_an_int_and_an_unknown_name():
    with pytest.raises(ValueError, match="Could not parse hparam 'steps' of type 'int' with "
                                         "value '2.5' in steps=2.5"):
        make().parse('steps=2.5')
    with pytest.raises(ValueError, match='Unknown hyperparameter type for depth'):
        make().parse('depth=3')


def test_parse_refuses_a_name_assigned_twice_and_a_malformed_string():
    with pytest.raises(ValueError, match="Multiple assignments to variable 'steps'"):
        make().parse('steps=1,steps=2')
    with pytest.raises(ValueError, match='Malformed hyperparameter value: =3'):
        make().parse('=3')


def test_set_hparam_casts_an_int_to_a_float_but_not_a_float_to_an_int_or_a_str():
    hparams = make()
    hparams.set_hparam('learning_rate', 2)
    assert hparams.learning_rate == 2.0 and type(hparams.learning_rate) is float
    with pytest.raises(ValueError, match="Could not cast hparam 'steps'"):
        hparams.set_hparam('steps', 1.5)
    with pytest.raises(ValueError, match="Could not cast hparam 'name'"):
        hparams.set_hparam('name', 3)
    with pytest.raises(ValueError, match="Could not cast hparam 'use_bn'"):
        hparams.set_hparam('use_bn', 1)


def test_set_hparam_wants_a_list_exactly_for_a_list_valued_one():
    with pytest.raises(ValueError, match='Must pass a list for multi-valued parameter: layers'):
        make().set_hparam('layers', 64)
    with pytest.raises(ValueError, match='Must not pass a list for single-valued parameter'):
        make().set_hparam('steps', [1])
    with pytest.raises(KeyError):
        make().set_hparam('depth', 1)


def test_add_hparam_refuses_a_taken_or_reserved_name():
    hparams = make()
    with pytest.raises(ValueError, match='Hyperparameter name is reserved: steps'):
        hparams.add_hparam('steps', 3)
    with pytest.raises(ValueError, match='Hyperparameter name is reserved: values'):
        hparams.add_hparam('values', 3)


def test_override_from_dict_and_parse_json_set_values_and_return_the_hparams():
    hparams = make().override_from_dict({'steps': 5}).parse_json('{"name": "small"}')
    assert (hparams.steps, hparams.name) == (5, 'small')


def test_to_json_leaves_callables_out_and_round_trips():
    hparams = make()
    hparams.add_hparam('activation', len)
    assert json.loads(hparams.to_json()) == {'learning_rate': 0.1, 'layers': [64, 32],
                                             'use_bn': True, 'name': 'net', 'steps': 10}
    assert make().parse_json(make().parse('steps=3').to_json()).steps == 3


def test_a_deep_copy_is_independent_of_the_original():
    hparams = make()
    copied = copy.deepcopy(hparams)
    copied.set_hparam('layers', [1])
    assert hparams.layers == [64, 32] and copied.layers == [1]
    assert 'layers' in copied and 'depth' not in copied


def test_get_gives_a_default_for_a_missing_name_and_checks_its_type():
    assert make().get('depth', 3) == 3 and make().get('steps', 7) == 10
    with pytest.raises(ValueError, match="Hparam 'steps' of type int is incompatible"):
        make().get('steps', 'ten')
