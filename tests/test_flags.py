"""Specification of the scripts' flags: absl's syntax, as the originals' `tf.app.flags` took it."""
import argparse

import pytest

from towers import flags
from towers.replication import registry as modes


def parser():
    result = flags.FlagParser()
    result.add_boolean('run_once', False, 'Whether to run eval only once.')
    result.add_boolean('sync_replicas', True, 'Synchronous updates.')
    result.add_argument('--max_steps', type=flags.positive_int, default=10)
    result.add_argument('--train_dir', default='/tmp/train')
    return result


@pytest.mark.parametrize('argv, run_once', [
    ([], False), (['--run_once'], True), (['--run_once=True'], True),
    (['--run_once=true'], True), (['--run_once=1'], True), (['--run_once=t'], True),
    (['--run_once=False'], False), (['--run_once=false'], False), (['--run_once=0'], False),
    (['--norun_once'], False), (['--run_once', 'False'], False), (['-run_once=True'], True)])
def test_booleans_take_every_spelling_absl_took(argv, run_once):
    assert parser().parse_args(argv).run_once is run_once


def test_a_boolean_that_defaults_to_true_is_turned_off_by_its_no_form():
    assert parser().parse_args([]).sync_replicas is True
    assert parser().parse_args(['--nosync_replicas']).sync_replicas is False


def test_single_dash_long_flags_are_read_as_double_dash():
    args = parser().parse_args(['-max_steps=5', '-train_dir', '/data/run'])
    assert (args.max_steps, args.train_dir) == (5, '/data/run')


def test_a_flagfile_gives_its_flags_in_place_with_comments_and_nested_files(tmp_path):
    inner = tmp_path / 'inner.flags'
    inner.write_text('--max_steps=7\n')
    outer = tmp_path / 'train.flags'
    outer.write_text('# a comment\n// another\n\n--run_once=True\n--flagfile=%s\n' % inner)
    args = parser().parse_args(['--flagfile=%s' % outer, '--train_dir', '/x'])
    assert (args.run_once, args.max_steps, args.train_dir) == (True, 7, '/x')
    # Flags after the file override it, as absl reads them in order.
    assert parser().parse_args(['--flagfile', str(outer), '--max_steps=3']).max_steps == 3


@pytest.mark.parametrize('argv, message', [
    (['--run_once=maybe'], r"argument --run_once: expected true or false, got 'maybe'"),
    (['--max_steps=0'], r'argument --max_steps: expected a number >= 1, got 0'),
    (['--learning_rate=0.1'], r'unrecognized arguments: --learning_rate=0.1'),
    (['--flagfile=/nonexistent/train.flags'],
     r'cannot read --flagfile /nonexistent/train.flags: No such file'),
])
def test_bad_flags_raise_one_error_naming_the_flag(argv, message):
    with pytest.raises(flags.FlagError, match=message):
        parser().parse_args(argv)


def test_a_flagfile_that_includes_itself_is_an_error(tmp_path):
    looping = tmp_path / 'loop.flags'
    looping.write_text('--flagfile=%s\n' % looping)
    with pytest.raises(flags.FlagError, match='includes itself'):
        parser().parse_args(['--flagfile=%s' % looping])


@pytest.mark.parametrize('parse, text, message', [
    (flags.positive_int, '0', 'expected a number >= 1, got 0'),
    (flags.non_negative_int, '-1', 'expected a number >= 0, got -1'),
    (flags.positive_int, 'two', "expected a whole number, got 'two'"),
    (flags.positive_float, '0', 'expected a number > 0, got 0'),
    (flags.host_list, 'localhost', "expected comma-separated host:port entries, got 'localhost'"),
])
def test_flag_types_refuse_values_out_of_range_saying_what_was_expected(parse, text, message):
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        parse(text)


def test_an_output_dir_may_exist_or_be_made_below_a_writable_directory(tmp_path):
    assert flags.output_dir(str(tmp_path)) == str(tmp_path)
    assert flags.output_dir(str(tmp_path / 'new' / 'run')) == str(tmp_path / 'new' / 'run')


def test_a_data_dir_may_be_missing_since_data_is_generated_there(tmp_path):
    assert flags.data_dir(str(tmp_path / 'cifar10_data')) == str(tmp_path / 'cifar10_data')


@pytest.mark.parametrize('parse, make, message', [
    (flags.output_dir, 'file', 'expected a directory, but {path} is a file'),
    (flags.output_dir, 'file/below', 'expected a directory, but {parent} is a file'),
    (flags.data_dir, 'file', 'expected a directory, but {path} is a file'),
    (flags.input_dir, 'file', 'expected a directory, but {path} is a file'),
    (flags.input_dir, 'missing', 'expected an existing directory, but {path} does not exist'),
    (flags.checkpoint_prefix, 'folder', 'expected a checkpoint prefix such as '
                                        '{path}/model.ckpt-<step>, but {path} is a directory'),
    (flags.checkpoint_prefix, 'missing', 'expected a checkpoint prefix, but there is no '
                                         '{path}.index'),
])
def test_path_flags_refuse_the_wrong_kind_of_thing_naming_it(tmp_path, parse, make, message):
    parent = tmp_path / 'thing'
    path = parent / 'below' if make == 'file/below' else parent
    if make.startswith('file'):
        parent.write_text('')
    elif make == 'folder':
        parent.mkdir()
    with pytest.raises(argparse.ArgumentTypeError) as raised:
        parse(str(path))
    assert str(raised.value) == message.format(path=path, parent=parent)


def test_checkpoint_flags_give_the_training_loop_its_intervals():
    parser = flags.FlagParser()
    flags.add_checkpoint_flags(parser, save_checkpoint_steps=200)
    assert flags.checkpoint_options(parser.parse_args([])) == {
        'save_checkpoint_secs': 600.0, 'save_checkpoint_steps': 200}
    assert flags.checkpoint_options(parser.parse_args(['--save_checkpoint_secs=30'])) == {
        'save_checkpoint_secs': 30.0, 'save_checkpoint_steps': 200}


def test_training_flags_give_fit_the_mode_cadence_validation_seed_and_determinism():
    parser = flags.FlagParser()
    flags.add_training_flags(parser)
    args = parser.parse_args(['--variable_update', 'replicated', '--xla', '--use_fp16',
                              '--save_checkpoint_steps=5', '--eval_every_steps', '50',
                              '--seed', '3', '--deterministic'])
    options = flags.fit_options(args)
    assert options == {'mode': modes.Mode(modes.REPLICATED, xla=True, mixed_precision=True),
                       'save_checkpoint_secs': 600.0, 'save_checkpoint_steps': 5,
                       'eval_every_steps': 50, 'seed': 3, 'deterministic': True,
                       'flag_lines': args.flag_lines}
    defaults = flags.fit_options(parser.parse_args([]))
    assert defaults['mode'] == modes.Mode() and defaults['eval_every_steps'] == 0
    assert defaults['seed'] is None and defaults['deterministic'] is False


def test_a_fixed_input_order_gives_way_to_the_seed_or_determinism():
    parser = flags.FlagParser()
    flags.add_training_flags(parser)
    assert flags.input_seed(parser.parse_args([])) == 0
    assert flags.input_seed(parser.parse_args(['--seed', '4'])) is None
    assert flags.input_seed(parser.parse_args(['--deterministic'])) is None


def test_a_scripts_own_use_fp16_keeps_its_meaning_beside_mixed_precision():
    parser = flags.FlagParser()
    parser.add_boolean('use_fp16', False, 'Train the model using fp16.')   # the tutorial's
    flags.add_training_flags(parser, use_fp16=False)
    args = parser.parse_args(['--use_fp16'])
    assert args.use_fp16 and flags.mode_from_flags(args) == modes.Mode()
    assert flags.mode_from_flags(parser.parse_args(['--mixed_precision'])).mixed_precision


def test_training_flags_without_a_cluster_take_no_cluster_flag():
    parser = flags.FlagParser()
    flags.add_training_flags(parser, cluster=False)
    with pytest.raises(flags.FlagError, match='job_name'):
        parser.parse_args(['--job_name', 'worker'])


def test_an_abbreviated_flag_is_refused_as_absl_refuses_it():
    full = flags.FlagParser()
    flags.add_device_flags(full)
    with pytest.raises(flags.FlagError, match='unrecognized arguments: --num_gpu 2'):
        full.parse_args(['--num_gpu', '2'])


def test_the_flag_lines_are_a_flagfile_that_gives_the_same_values(tmp_path):
    full = flags.FlagParser()
    full.add_boolean('run_once', False, 'Whether to run eval only once.')
    full.add_argument('--max_steps', type=flags.positive_int, default=10)
    flags.add_training_flags(full)
    args = full.parse_args(['--max_steps', '7', '--norun_once', '--ps_hosts', 'a:1,b:2',
                            '--job_name', 'worker', '--worker_hosts=c:3', '--seed', '5'])
    assert '--max_steps=7' in args.flag_lines and '--sync_replicas=true' in args.flag_lines
    assert '--ps_hosts=a:1,b:2' in args.flag_lines
    flag_file = tmp_path / 'flags.txt'
    flag_file.write_text('\n'.join(['# a comment'] + args.flag_lines) + '\n')
    assert vars(full.parse_args(['--flagfile=%s' % flag_file])) == vars(args)
