"""Specification of `towers-legacy --compare_tf1`: a TF1 program run on real TensorFlow 1.15.5 and
under the runner, from the same initial values, compared step by step (`towers.legacy.compare`)."""
import json
import os
import re
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LEGACY = os.path.join(REPO, 'tests', 'data', 'legacy')
PROGRAM = os.path.join(LEGACY, 'compare_program.py')


def compare(tmp_path, tf1_python, *args):
    """(exit status, stdout, stderr, report) of a comparison kept in tmp_path/compare."""
    report = tmp_path / 'report.json'
    result = subprocess.run(
        [sys.executable, '-m', 'towers.legacy', '--compare_tf1', '--tf1_python', tf1_python,
         '--compare_report', str(report), '--compare_dir', str(tmp_path / 'compare')]
        + list(args), cwd=tmp_path, capture_output=True, text=True, timeout=600)
    found = json.loads(report.read_text()) if report.exists() else None
    return result.returncode, result.stdout, result.stderr, found


def test_a_two_tower_program_with_dropout_and_a_shuffle_computes_the_same_on_tf1_15(
        tmp_path, tf1_python):
    train_dir = tmp_path / 'train'
    status, out, err, report = compare(tmp_path, tf1_python, PROGRAM,
                                       '--train_dir', str(train_dir))
    assert status == 0, out + err
    assert report['verdict'] == 'equal' and report['first_difference'] is None
    assert report['tensorflow']['tf1'] == '1.15.5'
    assert report['steps_compared'] == 12
    assert report['scalars']['loss']['steps'] == 12
    assert report['scalars']['loss']['max_abs_diff'] < 1e-5
    variables = report['variables']
    # The global step, 4 weights, their momentum and moving averages.
    assert variables['compared'] == 13 and variables['max_rel_diff'] < 1e-5
    assert variables['only_tf1'] == [] and variables['only_runner'] == []
    assert report['initial_values']['loaded'] == 13
    # Both wrote the program's fixed output folder, each into its own place, the real one
    # untouched.
    assert str(train_dir / 'model.ckpt-12.index') in report['files']['tf1']
    assert str(train_dir / 'model.ckpt-12.index') in report['files']['runner']
    assert not train_dir.exists()
    assert 'verdict: equal within rtol 0.0001, atol 1e-05 (12 steps compared)' in out


def test_a_changed_constant_is_caught_at_the_first_step_it_changes_and_its_tag(
        tmp_path, tf1_python):
    status, out, _, report = compare(tmp_path, tf1_python, PROGRAM, '--train_dir',
                                     str(tmp_path / 'train'), '--differ_at_step', '5')
    assert status == 1
    # The learning rate changes at step 5: the loss of step 6 is the first to part.
    assert report['verdict'] == 'differ'
    assert report['first_difference']['step'] == 6
    assert report['first_difference']['tag'] == 'loss'
    assert report['scalars']['loss']['first_differing_step'] == 6
    assert report['variables']['differing']
    assert 'verdict: differ' in out and 'scalar loss at step 6' in out


def info_lines(output_log):
    """The `INFO:tensorflow:` lines of a side's output, its numbers and paths masked (TF 1.15
    wrote a SavedModel in a `temp-b'<time>'` folder, the runner in another)."""
    with open(output_log) as f:
        return [re.sub(r'(?<!\w)/\S*', 'PATH', re.sub(r'\d+(\.\d+)?(e-?\d+)?', 'N', line))
                for line in f.read().splitlines() if line.startswith('INFO:tensorflow:')]


def test_an_estimator_program_writes_what_tf1_15_wrote(tmp_path, tf1_python):
    model_dir = tmp_path / 'model'
    status, out, err, report = compare(
        tmp_path, tf1_python, os.path.join(LEGACY, 'estimator_program.py'),
        '--model_dir', str(model_dir), '--max_steps', '20', '--save_checkpoints_steps', '5')
    assert status == 0, out + err
    # Summaries at the global steps TF 1.15 wrote them, evaluations at each checkpoint, the
    # same files (no timing.json of the runner's), the same variables.
    assert report['scalars']['loss']['steps'] == 1
    assert report['scalars']['eval: accuracy']['steps'] == 4
    assert report['files']['only_tf1'] == [] and report['files']['only_runner'] == []
    assert report['variables']['compared'] == 15
    assert report['variables']['max_rel_diff'] < 1e-5
    # And logs what TF 1.15 logged: its INFO lines in the same order and words (the config
    # dict, `Create CheckpointSaverHook.`, the evaluations' times and local_init_op lines,
    # train_and_evaluate's, the SavedModels' assets), the runner's progress lines aside.
    tf1_lines, runner_lines = (info_lines(tmp_path / 'compare' / side / 'output.log')
                               for side in ('tf1', 'runner'))
    assert len(tf1_lines) > 100 and runner_lines == tf1_lines


def test_a_replicate_model_fn_program_is_equal_and_its_checkpoint_shards_are_listed(
        tmp_path, tf1_python):
    model_dir = tmp_path / 'model'
    status, out, err, report = compare(
        tmp_path, tf1_python, os.path.join(LEGACY, 'replicate_program.py'),
        '--model_dir', str(model_dir), '--train_steps', '20')
    assert status == 0, out + err
    assert report['variables']['compared'] == 15
    assert str(model_dir / 'model.ckpt-20.data-00000-of-00002') in report['files']['only_tf1']


def test_a_keras_model_through_model_to_estimator_on_mirrored_strategy_is_equal(
        tmp_path, tf1_python):
    status, out, err, report = compare(
        tmp_path, tf1_python, os.path.join(LEGACY, 'keras_estimator_program.py'),
        '--model_dir', str(tmp_path / 'model'), '--steps', '10', '--num_gpus', '1')
    assert status == 0, out + err
    # Adam's training/beta1_power and training/beta2_power among them, as TF 1.15 named them.
    assert report['variables']['compared'] == 33
    assert report['variables']['only_tf1'] == [] and report['variables']['only_runner'] == []
    assert report['scalars']['eval: acc']['max_abs_diff'] == 0


def run_alone(command, cwd):
    """Runs one side by itself (TF 1.15's Python without the TF2_BEHAVIOR TensorFlow 2 set)."""
    environment = {k: v for k, v in os.environ.items() if k != 'TF2_BEHAVIOR'}
    result = subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_tower_checkpoint_resumes_under_the_runner_as_on_tf1_15_and_the_reverse(
        tmp_path, tf1_python):
    """Each writes 6 steps; both sides resume from that checkpoint (step, momentum, moving
    averages) to step 12 and must agree."""
    for writer in (tf1_python, sys.executable):
        folder = tmp_path / os.path.basename(os.path.dirname(os.path.dirname(writer)))
        folder.mkdir()
        train_dir = folder / 'train'
        command = [writer] if writer == tf1_python else [writer, '-m', 'towers.legacy']
        run_alone(command + [PROGRAM, '--train_dir', str(train_dir), '--max_steps', '6'],
                  folder)
        status, out, err, report = compare(folder, tf1_python, PROGRAM,
                                           '--train_dir', str(train_dir), '--max_steps', '12')
        assert status == 0, out + err
        assert report['scalars']['loss']['steps'] == 6
        assert report['scalars']['loss']['max_abs_diff'] < 1e-5
        assert report['variables']['compared'] == 13
        assert report['variables']['max_rel_diff'] < 1e-5


def test_an_estimator_model_dir_resumes_under_the_runner_as_on_tf1_15_and_the_reverse(
        tmp_path, tf1_python):
    program = os.path.join(LEGACY, 'estimator_program.py')
    for writer in (tf1_python, sys.executable):
        folder = tmp_path / os.path.basename(os.path.dirname(os.path.dirname(writer)))
        folder.mkdir()
        model_dir = folder / 'model'
        command = [writer] if writer == tf1_python else [writer, '-m', 'towers.legacy']
        run_alone(command + [program, '--model_dir', str(model_dir), '--max_steps', '10',
                             '--save_checkpoints_steps', '10'], folder)
        status, out, err, report = compare(folder, tf1_python, program,
                                           '--model_dir', str(model_dir), '--max_steps', '20',
                                           '--save_checkpoints_steps', '10')
        assert status == 0, out + err
        assert report['variables']['compared'] == 15
        assert report['variables']['max_rel_diff'] < 1e-5
        assert report['scalars']['eval: accuracy']['steps'] == 1


def test_a_program_that_fails_on_tf1_15_is_not_compared(tmp_path, tf1_python):
    script = tmp_path / 'fails.py'
    script.write_text('import sys\nimport tensorflow as tf\nsys.exit("no data at %s" % 3)\n')
    status, out, err, report = compare(tmp_path, tf1_python, str(script))
    assert status == 2 and report is None
    lines = err.strip().splitlines()
    assert lines[-1].startswith('error: %s failed on TensorFlow 1.15 (exit status 1)' % script)
    assert 'no data at 3' in lines[-1]


def test_without_a_python_3_7_the_comparison_says_how_to_get_one(tmp_path):
    status, out, err, report = compare(tmp_path, sys.executable, PROGRAM)
    assert status == 2 and report is None and out == ''
    assert err.strip().splitlines() == [
        'error: --tf1_python %s is not a Python 3.7 that runs (TensorFlow 1.15 needs one): '
        'install one (e.g. `pyenv install 3.7.16`) and give it with --tf1_python PATH or '
        'TOWERS_TF1_PYTHON' % sys.executable]
    assert not (tmp_path / 'compare').exists()


def test_a_whole_environment_is_used_as_it_is_and_a_half_made_one_is_not(tmp_path, tf1_python):
    """What `tf1.python` finds in its cache: an environment whose marker was written last (it
    is renamed into place whole) serves without installing; one without it is not taken."""
    from towers.legacy.compare import tf1
    whole, half = tmp_path / 'whole', tmp_path / 'half'
    for folder in (whole, half):
        (folder / 'bin').mkdir(parents=True)
        (folder / 'bin' / 'python').write_text('')
    (whole / 'towers-tf1.json').write_text('{}')
    assert tf1.made_in(str(whole)) == str(whole / 'bin' / 'python')
    assert tf1.made_in(str(half)) is None
    # The Python 3.7 found serves itself when it has TensorFlow 1.15, else the cache's does.
    base = tf1.find_python()
    own = (tf1._tensorflow_of(base) or '').startswith('1.15')
    assert tf1.python(base, cache=str(whole)) == (base if own else str(whole / 'bin' / 'python'))


def test_rates_of_the_machine_are_listed_not_compared_and_one_sided_tags_are_named():
    from towers.legacy.compare import report
    tf1 = {('/t', 'loss'): {0: 1.0, 1: 0.5}, ('/t', 'global_step/sec'): {1: 10.0}}
    runner = {('/t', 'loss'): {0: 1.0, 1: 0.500001}, ('/t', 'global_step/sec'): {1: 20.0},
              ('/t/eval', 'accuracy'): {2: 0.5}}
    scalars, only_tf1, only_runner, timing, steps = report.compare_scalars(tf1, runner,
                                                                           1e-4, 1e-5)
    assert scalars['loss']['first_differing_step'] is None and steps == 2
    assert timing == ['global_step/sec']
    assert only_tf1 == [] and only_runner == ['eval: accuracy']


def test_temporary_folders_pair_up_in_the_order_they_were_made(tmp_path):
    """An Estimator without a model_dir writes into `tempfile.mkdtemp()`, named at random on
    each side: the report names each such folder by the order it was made."""
    from towers.legacy.compare import sides
    written = []
    for real, seconds in (('/tmp/tmpq2_xk9ab/model.ckpt-0.index', 200),
                          ('/tmp/tmpq2_xk9ab/eval/events', 300),
                          ('/tmp/tmp0abcdefg/checkpoint', 100), ('/tmp/kept/tmpfile', 50)):
        now = tmp_path / real.lstrip('/').replace('/', '_')
        now.write_text('x')
        os.utime(now, (seconds, seconds))
        written.append((real, 1, str(now)))
    assert [real for real, _, _ in sides._temporaries_named(written)] == [
        '/tmp/kept/tmpfile', '/tmp/tmp*1/checkpoint', '/tmp/tmp*2/eval/events',
        '/tmp/tmp*2/model.ckpt-0.index']


PACKAGE = {
    '__init__.py': '',
    'model.py': """import tensorflow as tf


def loss(x):
    w = tf.get_variable('w', [3, 1])
    return tf.reduce_mean(tf.square(tf.matmul(x, w) - 1.0))
""",
    'train.py': """import argparse

import tensorflow as tf

from . import model

parser = argparse.ArgumentParser()
parser.add_argument('--train_dir')
args = parser.parse_args()
loss = model.loss(tf.random_normal([4, 3]))
train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
writer = tf.summary.FileWriter(args.train_dir)
with tf.Session() as session:
    session.run(tf.global_variables_initializer())
    for step in range(5):
        value, _ = session.run([loss, train])
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag='loss', simple_value=value)]),
                           step)
writer.close()
"""}


def test_a_module_run_with_m_and_its_relative_imports_is_compared(tmp_path, tf1_python):
    for name, text in PACKAGE.items():
        (tmp_path / 'pkg').mkdir(exist_ok=True)
        (tmp_path / 'pkg' / name).write_text(text)
    status, out, err, report = compare(tmp_path, tf1_python, '-m', 'pkg.train', '--train_dir',
                                       str(tmp_path / 'train'))
    assert status == 0, out + err
    assert report['script'] == '-m pkg.train'
    assert report['steps_compared'] == 5 and report['variables']['compared'] == 1


def test_a_module_not_in_the_working_folder_is_one_line(tmp_path, monkeypatch):
    from towers.flags import FlagError
    from towers.legacy import compare
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FlagError, match=r'^cannot compare -m nmt.nmt: no nmt.py or '
                                        r'nmt/__init__.py in the working folder'):
        compare.parse(['--compare_tf1', '-m', 'nmt.nmt'])
    with pytest.raises(FlagError, match=r'^-m needs the module to compare'):
        compare.parse(['--compare_tf1', '-m'])
