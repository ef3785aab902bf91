"""The comparison's steps: TF 1.15's run, the runner's from TF 1.15's initial values, the report
(see `towers.legacy.compare`)."""
import os
import sys
import tempfile

from towers import files
from towers.errors import TowersError
from towers.legacy.compare import EXIT_DIFFER, EXIT_EQUAL, probe, report, sides, tf1

_PROBE_FOLDER = '{root}/%s'


def _environment(side_name, initial_from=None):
    """The side's environment: `tf1.environment()`, with the probe's folders (reached through
    the comparison's descriptor, '{root}') in place of any the caller had."""
    environment = {key: value for key, value in tf1.environment().items()
                   if key not in (probe.OUT, probe.INITIAL)}
    environment[probe.OUT] = _PROBE_FOLDER % side_name
    if initial_from:
        environment[probe.INITIAL] = _PROBE_FOLDER % initial_from
    return environment


def _folder(given):
    """The comparison's folder: `given` (new or empty), else a new one in the temporary
    folder."""
    if not given:
        return os.path.realpath(tempfile.mkdtemp(prefix='towers-compare-'))
    if os.path.isdir(given) and os.listdir(given):
        raise TowersError('--compare_dir %s is not empty: give a new or empty folder' % given)
    os.makedirs(given, exist_ok=True)
    return os.path.realpath(given)


def compare(options, script, script_argv, runner_options):
    """Runs both sides and reports; returns the exit status (see `towers.legacy.compare`).

    Raises:
      TowersError: no comparison (no Python 3.7, the sides cannot be kept apart, the program
        failed on TF 1.15 or left nothing to compare).
    """
    python = tf1.python(options.tf1_python)
    root = _folder(options.compare_dir)
    working = os.getcwd()
    program = ' '.join(sides.program_of(script))
    shown = ' '.join([program] + list(script_argv))
    tf1_side = sides.Side('tf1', sides.tf1_command(python, script, script_argv),
                          _environment('tf1'))
    runner_side = sides.Side('runner',
                             sides.runner_command(script, script_argv, runner_options),
                             _environment('runner', initial_from='tf1'))
    print('towers-legacy --compare_tf1: %s on TensorFlow %s (%s) ...'
          % (shown, tf1.VERSION, python), file=sys.stderr, flush=True)
    sides.run(tf1_side, root, working)
    tf1_record = probe.read_record(tf1_side.folder(root))
    if tf1_side.returncode != 0:
        raise TowersError('%s failed on TensorFlow 1.15 (exit status %d), nothing to compare: '
                          '%s (its output: %s)' % (program, tf1_side.returncode,
                                                   tf1_side.last_line(),
                                                   os.path.join(tf1_side.folder(root),
                                                                'output.log')))
    print('towers-legacy --compare_tf1: %s under the runner, from the %d variables TF 1.15 '
          'initialized ...' % (shown, len(tf1_record['initial_names'])),
          file=sys.stderr, flush=True)
    sides.run(runner_side, root, working)
    runner_record = probe.read_record(runner_side.folder(root))
    found = report.build(tf1_side, runner_side, root, options.compare_rtol,
                         options.compare_atol)
    if not found['scalars'] and not found['variables']['compared'] and not (
            found['variables']['only_tf1'] or found['variables']['only_runner']):
        raise TowersError('%s left nothing to compare: no scalar summaries and no variables on '
                          'either side (their output: %s)' % (program, root))
    found.update(script=program, flags=list(script_argv), compare_dir=root,
                 tensorflow={'tf1': tf1_record['tensorflow'],
                             'runner': runner_record['tensorflow']},
                 initial_values={'loaded': runner_record['loaded'],
                                 'not_in_tf1': runner_record['not_loaded'],
                                 'shape_differs': runner_record['shape_differs']},
                 seeds_keyed={'tf1': tf1_record['seeds_keyed'],
                              'runner': runner_record['seeds_keyed']},
                 shuffles_fixed={'tf1': tf1_record['shuffles_fixed'],
                                 'runner': runner_record['shuffles_fixed']})
    path = options.compare_report or os.path.join(root, 'report.json')
    files.write_json(path, found)
    print('TensorFlow %s and towers-legacy on TensorFlow %s, %s: %d variables loaded from '
          'TF 1.15\'s initial values' % (tf1_record['tensorflow'], runner_record['tensorflow'],
                                          shown, runner_record['loaded']))
    if runner_side.returncode:
        print('the runner\'s run failed (exit status %d): %s'
              % (runner_side.returncode, runner_side.last_line()))
    for line in report.lines(found):
        print(line)
    print('report: %s; both runs\' files and output: %s' % (path, root))
    return EXIT_EQUAL if found['verdict'] == 'equal' else EXIT_DIFFER


