"""Specification of what the scripts share: flag types and reading files named by flags."""
import argparse

import pytest

from towers import TowersError, cli


def test_json_file_named_by_a_flag_is_read(tmp_path):
    path = tmp_path / 'golden.json'
    path.write_text('{"runs": {"1": 2}}')
    assert cli.read_json(str(path), '--golden') == {'runs': {'1': 2}}


def test_missing_json_file_is_an_error_naming_flag_and_file(tmp_path):
    path = str(tmp_path / 'missing.json')
    with pytest.raises(TowersError, match=r'cannot read --golden .*missing\.json: No such file'):
        cli.read_json(path, '--golden')


def test_file_that_is_not_json_is_an_error_naming_flag_and_file(tmp_path):
    path = tmp_path / 'broken.json'
    path.write_text('{"runs": ')
    with pytest.raises(TowersError, match=r'--eval_golden .*broken\.json is not JSON'):
        cli.read_json(str(path), '--eval_golden')


@pytest.mark.parametrize('parse, text, message', [
    (cli.positive_int, '0', 'expected a number >= 1, got 0'),
    (cli.non_negative_int, '-1', 'expected a number >= 0, got -1'),
    (cli.positive_int, 'two', "expected a whole number, got 'two'"),
    (cli.positive_float, '0', 'expected a number > 0, got 0'),
])
def test_flag_types_refuse_values_out_of_range_saying_what_was_expected(parse, text, message):
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        parse(text)
