"""Specification of atomic writes (a reader finds the old output or the whole new one) and of
reading the JSON files that flags name."""
import json
import os

import pytest

from towers import TowersError
from towers.files import (read_json, write_directory_atomically, write_file_atomically,
                          write_json)


def test_file_appears_whole_and_keeps_its_extension_while_written(tmp_path):
    path = tmp_path / 'results.json'
    seen = []

    def write(temporary):
        seen.append(os.path.splitext(temporary)[1])
        with open(temporary, 'w') as f:
            f.write('{}')

    write_file_atomically(str(path), write)
    assert path.read_text() == '{}' and seen == ['.json']
    assert os.listdir(tmp_path) == ['results.json']


def test_failed_file_write_leaves_the_previous_file_and_no_temporary(tmp_path):
    path = tmp_path / 'chart.png'
    path.write_text('previous')

    def fail(temporary):
        with open(temporary, 'w') as f:
            f.write('half')
        raise RuntimeError('disk full')

    with pytest.raises(RuntimeError):
        write_file_atomically(str(path), fail)
    assert path.read_text() == 'previous'
    assert os.listdir(tmp_path) == ['chart.png']


def fill(content):
    def write(staging):
        with open(os.path.join(staging, 'data.bin'), 'w') as f:
            f.write(content)
    return write


def test_directory_appears_whole_in_a_new_parent(tmp_path):
    path = tmp_path / 'parent' / 'set'
    assert write_directory_atomically(str(path), fill('first'))
    assert (path / 'data.bin').read_text() == 'first'
    assert os.listdir(tmp_path / 'parent') == ['set']


def test_directory_another_process_wrote_first_is_kept_and_the_staging_removed(tmp_path):
    path = tmp_path / 'set'
    write_directory_atomically(str(path), fill('first'))
    assert not write_directory_atomically(str(path), fill('second'))
    assert (path / 'data.bin').read_text() == 'first'
    assert os.listdir(tmp_path) == ['set']


def test_failed_directory_write_leaves_nothing(tmp_path):
    def fail(staging):
        fill('half')(staging)
        raise OSError('disk full')

    with pytest.raises(OSError, match='disk full'):
        write_directory_atomically(str(tmp_path / 'set'), fail)
    assert os.listdir(tmp_path) == []


def test_json_is_written_whole_indented_with_sorted_keys_and_a_final_newline(tmp_path):
    path = tmp_path / 'results.json'
    write_json(str(path), {'b': [1], 'average_precision': 0.5})
    assert json.loads(path.read_text()) == {'average_precision': 0.5, 'b': [1]}
    assert path.read_text() == '{\n  "average_precision": 0.5,\n  "b": [\n    1\n  ]\n}\n'
    assert os.listdir(tmp_path) == ['results.json']


def test_json_file_named_by_a_flag_is_read(tmp_path):
    path = tmp_path / 'golden.json'
    path.write_text('{"runs": {"1": 2}}')
    assert read_json(str(path), '--golden') == {'runs': {'1': 2}}


def test_missing_json_file_is_an_error_naming_flag_and_file(tmp_path):
    path = str(tmp_path / 'missing.json')
    with pytest.raises(TowersError, match=r'cannot read --golden .*missing\.json: No such file'):
        read_json(path, '--golden')


def test_file_that_is_not_json_is_an_error_naming_flag_and_file(tmp_path):
    path = tmp_path / 'broken.json'
    path.write_text('{"runs": ')
    with pytest.raises(TowersError, match=r'--eval_golden .*broken\.json is not JSON'):
        read_json(str(path), '--eval_golden')
