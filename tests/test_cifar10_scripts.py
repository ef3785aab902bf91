"""The CIFAR-10 scripts end to end on tiny settings: make data, train on 2 towers, evaluate."""
import os
import re
import runpy

import pytest

from checkpoint_bytes import differing
from models.datasets.cifar10 import synthetic as cifar10_synthetic
from script_runs import (DETERMINISTIC, LOG_LINE, REPO, copy_with_damaged_newest, environment,
                         evaluation_events, run_in_process, run_script, skipped_line)
from towers.compat import tf


def train(data_dir, train_dir, max_steps, *flags, run=run_script, **options):
    return run('train_cifar10_multi_gpu.py', '--num_gpus', '2', '--batch_size', '8',
               '--max_steps', str(max_steps), '--data_dir', data_dir, '--train_dir', train_dir,
               *flags, **options)


@pytest.fixture(scope='module')
def data_dir(tmp_path_factory):
    path = str(tmp_path_factory.mktemp('cifar10_data'))
    result = run_script('make_cifar10_data.py', '--data_dir', path, '--records_per_file', '40')
    assert result.returncode == 0, result.stderr
    assert 'wrote 200 training and 40 test records' in result.stderr
    return path


@pytest.fixture(scope='module')
def trained(data_dir, tmp_path_factory):
    train_dir = str(tmp_path_factory.mktemp('cifar10_train'))
    # The original's absl spellings of its booleans; TensorFlow's log level left to the
    # project (a level the user exported shows what it lets through, towers.console).
    return train_dir, train(data_dir, train_dir, 20, '--log_device_placement=False',
                            '--nouse_fp16', '--eval_every_steps', '20', *DETERMINISTIC,
                            env=environment(TF_CPP_MIN_LOG_LEVEL=None))


@pytest.fixture(scope='module')
def resumed(data_dir, tmp_path_factory):
    """The trained run's command stopped at step 10 (--max_steps reached), then run to 20."""
    train_dir = str(tmp_path_factory.mktemp('cifar10_resumed'))
    results = [train(data_dir, train_dir, steps, *DETERMINISTIC) for steps in (10, 20)]
    assert all(result.returncode == 0 for result in results), results[-1].stderr
    return train_dir


def test_training_on_two_towers_logs_the_tutorials_line_and_writes_a_checkpoint(trained):
    train_dir, result = trained
    assert result.returncode == 0, result.stderr
    assert [int(step) for step in LOG_LINE.findall(result.stdout)] == [0, 10]
    progress = re.findall(r'^progress: (\d+/20) steps \(\d+%\), [\d.]+ steps/sec, '
                          r'\d+:\d\d:\d\d left$', result.stdout, re.MULTILINE)
    assert progress == ['11/20', '20/20'], result.stdout
    assert '2 towers on 2 virtual CPU devices' in result.stderr
    # A quiet start (towers.console): none of TensorFlow's C++ start-up lines, no CUDA error.
    assert not re.search(r'absl::InitializeLog|^[IWE]\d{4} |cuInit|CUDA', result.stderr,
                         re.MULTILINE), result.stderr
    assert 'using the GENERATED CIFAR-10-format data set' in result.stderr
    assert os.path.exists(os.path.join(train_dir, 'model.ckpt-20.index'))
    assert any(name.startswith('events.out.tfevents') for name in os.listdir(train_dir))
    # Validation: the moving averages of the weights on the 40 test records.
    assert re.search(r'^\S+ \S+: step 20, validation precision_at_1 = [01]\.\d{4} '
                     r'\(40 examples, ', result.stdout, re.MULTILINE), result.stdout


def test_the_run_writes_its_flags_as_a_flagfile_that_reruns_it(trained):
    train_dir, _ = trained
    with open(os.path.join(train_dir, 'flags.txt')) as f:
        lines = f.read().splitlines()
    assert lines[1] == '# --flagfile=%s' % os.path.join(train_dir, 'flags.txt')
    assert {'--num_gpus=2', '--max_steps=20', '--train_dir=%s' % train_dir} <= set(lines)
    script = runpy.run_path(os.path.join(REPO, 'scripts', 'train_cifar10_multi_gpu.py'))
    rerun = script['_parse_args'](['--flagfile=%s' % os.path.join(train_dir, 'flags.txt')])
    assert (rerun.num_gpus, rerun.max_steps, rerun.train_dir) == (2, 20, train_dir)


def test_training_resumes_from_the_newest_checkpoint(data_dir, trained):
    train_dir, _ = trained
    result = train(data_dir, train_dir, max_steps=21)
    assert result.returncode == 0, result.stderr
    assert 'resuming from step 20' in result.stderr
    assert LOG_LINE.findall(result.stdout) == ['20']


def test_ten_steps_then_resumed_to_twenty_train_the_bytes_of_twenty_in_one_run(trained,
                                                                             resumed):
    train_dir, _ = trained
    assert differing(os.path.join(resumed, 'model.ckpt-20'),
                     os.path.join(train_dir, 'model.ckpt-20')) == []


def test_another_seed_trains_other_values(data_dir, resumed, tmp_path):
    result = train(data_dir, str(tmp_path), 10, '--deterministic', '--seed', '2')
    assert result.returncode == 0, result.stderr
    assert 'conv1/weights' in differing(os.path.join(resumed, 'model.ckpt-10'),
                                        str(tmp_path / 'model.ckpt-10'))


def test_evaluation_reports_precision_of_the_trained_checkpoint(data_dir, trained, tmp_path):
    train_dir, _ = trained
    eval_dir = str(tmp_path / 'eval')
    result = run_script('cifar10_eval.py', '--checkpoint_dir', train_dir, '--data_dir',
                        data_dir, '--eval_dir', eval_dir, '--run_once=True', '--num_examples',
                        '40', '--batch_size', '20', '--use_fp16=false')
    assert result.returncode == 0, result.stderr
    printed = re.search(r'^\S+ \S+: precision @ 1 = ([01]\.\d\d\d)$', result.stdout,
                        re.MULTILINE)
    assert printed, result.stdout
    assert any(name.startswith('events.out.tfevents') for name in os.listdir(eval_dir))
    assert re.search(r'^progress: evaluation 2/2 batches \(100%\)', result.stderr, re.MULTILINE)
    # The training's `eval` run holds the evaluation and, at the same step, the validation.
    events = evaluation_events(train_dir)
    step = int(tf.train.latest_checkpoint(train_dir).rsplit('-', 1)[1])
    assert events['precision_at_1'][0] == step
    assert round(events['precision_at_1'][1], 3) == float(printed.group(1))
    assert 'validation/precision_at_1' in events


def test_evaluation_without_a_checkpoint_directory_is_an_error(tmp_path):
    missing = str(tmp_path / 'no_train_dir')
    result = run_in_process('cifar10_eval.py', '--checkpoint_dir', missing, '--run_once',
                            '--eval_dir', str(tmp_path / 'eval'))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        'error: argument --checkpoint_dir: expected an existing directory, but %s does not '
        'exist' % missing)
    assert 'Traceback' not in result.stderr


def test_evaluating_a_checkpoint_of_another_model_is_an_error_naming_what_it_lacks(
        data_dir, tmp_path):
    tf.get_variable('other_model/weights', [2])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        prefix = tf.train.Saver().save(sess, str(tmp_path / 'model.ckpt'), global_step=5)
    result = run_in_process('cifar10_eval.py', '--checkpoint_dir', str(tmp_path), '--data_dir',
                            data_dir, '--run_once', '--eval_dir', str(tmp_path / 'eval'))
    assert result.returncode == 1
    assert ('error: checkpoint %s is not one of the CIFAR-10 model: it lacks '
            'conv1/biases/ExponentialMovingAverage' % prefix) in result.stderr


def test_a_bad_flag_value_is_one_error_line_naming_the_flag(tmp_path):
    result = run_in_process('cifar10_eval.py', '--run_once=perhaps', '--eval_dir',
                            str(tmp_path / 'eval'))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "error: argument --run_once: expected true or false, got 'perhaps'")
    assert 'Traceback' not in result.stderr


def test_training_on_a_truncated_data_file_is_an_error_naming_it(tmp_path):
    batches_dir = tmp_path / cifar10_synthetic.GENERATED_DIR
    cifar10_synthetic.generate(str(batches_dir), records_per_file=5)
    path = batches_dir / 'data_batch_2.bin'
    path.write_bytes(path.read_bytes()[:-1])
    result = train(str(tmp_path), str(tmp_path / 'train'), max_steps=1, run=run_in_process)
    assert result.returncode == 1
    assert 'truncated CIFAR-10 file %s' % path in result.stderr
    assert 'Traceback' not in result.stderr


def test_evaluation_skips_a_damaged_newest_checkpoint_with_a_line_naming_it(data_dir, trained,
                                                                           tmp_path):
    train_dir, _ = trained
    good, damaged = copy_with_damaged_newest(train_dir, str(tmp_path / 'train'))
    result = run_script('cifar10_eval.py', '--checkpoint_dir', str(tmp_path / 'train'),
                        '--data_dir', data_dir, '--eval_dir', str(tmp_path / 'eval'),
                        '--run_once', '--num_examples', '20', '--batch_size', '20')
    assert result.returncode == 0, result.stderr
    assert skipped_line(damaged).search(result.stderr), result.stderr
    assert re.search(r'precision @ 1 = [01]\.\d{3}$', result.stdout, re.MULTILINE)
