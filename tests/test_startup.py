"""`--help` and a bad flag answer before TensorFlow is imported, for every script (towers.cli);
how fast, against TensorFlow's import, is `benchmark.py --startup`'s figure, not a test's."""
import glob
import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = sorted(glob.glob(os.path.join(REPO, 'scripts', '*.py')))

# Runs a script as `python script.py ARGS` does, then says whether TensorFlow was imported.
RUN_AND_REPORT = '''
import runpy, sys
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path[0] = __import__('os').path.dirname(script)
try:
    runpy.run_path(script, run_name='__main__')
finally:
    sys.stdout.write('\\nTENSORFLOW IMPORTED: %s\\n' % ('tensorflow' in sys.modules))
'''


def run(script, *args):
    return subprocess.run([sys.executable, '-c', RUN_AND_REPORT, script] + list(args),
                          cwd=REPO, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize('script', SCRIPTS, ids=os.path.basename)
def test_help_and_a_bad_flag_answer_without_importing_tensorflow(script):
    helped = run(script, '--help')
    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith('usage: ')
    assert '--verbose' in helped.stdout
    assert helped.stdout.endswith('TENSORFLOW IMPORTED: False\n'), helped.stdout[-300:]

    refused = run(script, '--no_such_flag')
    assert refused.returncode == 1
    # One line: the unknown flag, or a required flag missing (argparse says that first).
    assert refused.stderr.startswith('error: ') and refused.stderr.count('\n') == 1
    assert '--no_such_flag' in refused.stderr or 'required' in refused.stderr, refused.stderr
    assert refused.stdout.endswith('TENSORFLOW IMPORTED: False\n')


def test_the_startup_benchmark_reports_each_script_and_the_worst_against_the_target():
    from towers.benchmarks import startup
    from towers.benchmarks.measure import Ratio

    ratios = {'/x/train_a.py': Ratio(0.02, 0.01, 0.03), '/x/eval_b.py': Ratio(0.6, 0.5, 0.7)}
    seconds = {'/x/train_a.py': 0.08, '/x/eval_b.py': 2.4, 'import tensorflow': 4.0}
    lines = startup.report(ratios, seconds)
    assert lines[0].endswith('(4.00 s median), in turns:')
    assert lines[1].split() == ['eval_b.py', '0.600', '(quartiles', '0.500-0.700;', '2.40', 's)']
    assert lines[-1] == 'target: every script under 0.5: NOT met (worst eval_b.py, 0.600)'
    del ratios['/x/eval_b.py']
    assert startup.report(ratios, seconds)[-1].startswith('target: every script under 0.5: met')


def test_the_runner_writes_into_the_users_home_only_what_tf1_15_wrote(tmp_path):
    """TF 1.15's import wrote ~/.keras/keras.json; TensorFlow 2.21's imports Keras 3 and with it
    matplotlib, which writes its font cache and config: the runner keeps TensorFlow from doing
    so (and the environment's own TF_USE_LEGACY_KERAS is left as it is)."""
    home = tmp_path / 'home'
    home.mkdir()
    script = tmp_path / 'program.py'
    script.write_text('import sys\nimport tensorflow as tf\n'
                      'print(tf.reduce_sum(tf.ones([2])).eval(session=tf.Session()))\n'
                      'print("KERAS 3 IMPORTED: %s" % ("keras.src" in sys.modules))\n')
    environment = {key: value for key, value in os.environ.items()
                   if key not in ('TF_USE_LEGACY_KERAS', 'MPLCONFIGDIR', 'XDG_CACHE_HOME',
                                  'XDG_CONFIG_HOME', 'KERAS_HOME')}
    environment['HOME'] = str(home)
    done = subprocess.run([sys.executable, '-m', 'towers.legacy', str(script)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env=environment)
    assert done.returncode == 0, done.stderr[-2000:]
    assert '2.0\nKERAS 3 IMPORTED: False' in done.stdout
    written = sorted(os.path.relpath(os.path.join(parent, name), home)
                     for parent, _, names in os.walk(home) for name in names)
    assert written == [os.path.join('.keras', 'keras.json')]
