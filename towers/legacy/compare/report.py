"""What `towers-legacy --compare_tf1` finds: the two sides' scalar summaries step by step, their
final variables by name, the files each wrote, and the verdict.

Two numbers agree when |tf1 - runner| <= atol + rtol * |tf1| (NumPy's `isclose`). A scalar whose
tag ends in '/sec' or 'per_sec' (steps or examples a second) measures the machine, not the
program: it is listed, not compared.
"""
import os
import re
import struct

import numpy as np

from towers.legacy.compare import probe

_EVENTS = 'events.out.tfevents.'
_TIMING_TAG = re.compile(r'(/sec|per_sec(ond)?)$')
_EXPORT_TIME = re.compile(r'(/)\d{10}(/|$)')


def read_scalars(path):
    """step -> value per tag of the scalar summaries in the event file `path`: `simple_value`s
    and the one-number tensors of TensorBoard's scalars plugin; a later value for a step
    replaces an earlier one (as TensorBoard shows it)."""
    from tensorboard.compat.proto import event_pb2
    from tensorboard.util import tensor_util
    scalars = {}
    with open(path, 'rb') as f:
        while True:
            header = f.read(12)
            if len(header) < 12:
                break
            length = struct.unpack('<Q', header[:8])[0]
            data = f.read(length)
            f.read(4)
            if len(data) < length:
                break
            event = event_pb2.Event.FromString(data)
            for value in event.summary.value:
                kind = value.WhichOneof('value')
                if kind == 'simple_value':
                    number = float(value.simple_value)
                elif (kind == 'tensor'
                      and value.metadata.plugin_data.plugin_name == 'scalars'):
                    array = tensor_util.make_ndarray(value.tensor)
                    if array.size != 1:
                        continue
                    number = float(array.reshape(()))
                else:
                    continue
                scalars.setdefault(value.tag, {})[int(event.step)] = number
    return scalars


def side_scalars(written):
    """(folder, tag) -> {step: value} over the event files among `written` (a side's files)."""
    scalars = {}
    for real, _, now in written:
        if os.path.basename(real).startswith(_EVENTS):
            for tag, steps in read_scalars(now).items():
                scalars.setdefault((os.path.dirname(real), tag), {}).update(steps)
    return scalars


def _shown_tags(keys):
    """(folder, tag) -> the name a report gives it: the tag, with its folder when the summaries
    lie in several folders ('eval: accuracy'), relative to the folders' common parent."""
    folders = sorted({folder for folder, _ in keys})
    if len(folders) < 2:
        return {key: key[1] for key in keys}
    common = os.path.commonpath(folders)
    return {key: key[1] if key[0] == common else
            '%s: %s' % (os.path.relpath(key[0], common), key[1]) for key in keys}


def compare_scalars(tf1, runner, rtol, atol):
    """The report's 'scalars': per tag its steps, `max_abs_diff` and `first_differing_step`
    (None while equal), `tf1` and `runner` values there; plus tags on one side only, tags not
    compared, and the steps compared.

    Returns:
      (scalars dict, only_tf1 tags, only_runner tags, timing tags, number of steps compared).
    """
    names = _shown_tags(set(tf1) | set(runner))
    scalars, steps_seen, timing = {}, set(), []
    for key in sorted(set(tf1) & set(runner), key=names.get):
        if _TIMING_TAG.search(key[1]):
            timing.append(names[key])
            continue
        steps = sorted(set(tf1[key]) & set(runner[key]))
        a = np.array([tf1[key][step] for step in steps], dtype=np.float64)
        b = np.array([runner[key][step] for step in steps], dtype=np.float64)
        close = np.isclose(b, a, rtol=rtol, atol=atol, equal_nan=True)
        first = None if close.all() else int(np.argmin(close))
        entry = {'steps': len(steps),
                 'max_abs_diff': float(np.max(np.abs(a - b))) if steps else 0.0,
                 'first_differing_step': None if first is None else steps[first],
                 'steps_only_tf1': sorted(set(tf1[key]) - set(runner[key])),
                 'steps_only_runner': sorted(set(runner[key]) - set(tf1[key]))}
        if first is not None:
            entry.update(tf1=float(a[first]), runner=float(b[first]))
        scalars[names[key]] = entry
        steps_seen.update(steps)
    only = lambda one, other: sorted(names[key] for key in set(one) - set(other)
                                     if not _TIMING_TAG.search(key[1]))
    return scalars, only(tf1, runner), only(runner, tf1), timing, len(steps_seen)


def compare_variables(tf1, runner, rtol, atol):
    """The report's 'variables', of two dicts name -> final value."""
    common = sorted(set(tf1) & set(runner))
    report = {'compared': 0, 'max_abs_diff': 0.0, 'max_rel_diff': 0.0, 'worst': None,
              'differing': [], 'only_tf1': sorted(set(tf1) - set(runner)),
              'only_runner': sorted(set(runner) - set(tf1)), 'shape_or_dtype_differs': []}
    for name in common:
        a, b = tf1[name], runner[name]
        if a.shape != b.shape or a.dtype != b.dtype:
            report['shape_or_dtype_differs'].append(
                '%s: %s %s vs %s %s' % (name, a.dtype, list(a.shape), b.dtype, list(b.shape)))
            continue
        report['compared'] += 1
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        diff = float(np.max(np.abs(a64 - b64))) if a.size else 0.0
        scale = float(np.max(np.abs(a64))) if a.size else 0.0
        relative = diff / scale if scale else (0.0 if diff == 0 else float('inf'))
        if diff > report['max_abs_diff']:
            report['max_abs_diff'], report['worst'] = diff, name
        report['max_rel_diff'] = max(report['max_rel_diff'], relative)
        if not np.allclose(b64, a64, rtol=rtol, atol=atol, equal_nan=True):
            report['differing'].append(name)
    return report


def compare_files(tf1_written, runner_written):
    """The report's 'files': the real paths each side wrote, and those only one side wrote
    (event files, named by time and host, count by folder)."""
    def names(written):
        return {_events_as_one(real) for real, _, _ in written}
    tf1, runner = names(tf1_written), names(runner_written)
    return {'tf1': sorted(real for real, _, _ in tf1_written),
            'runner': sorted(real for real, _, _ in runner_written),
            'only_tf1': sorted(tf1 - runner), 'only_runner': sorted(runner - tf1)}


def _events_as_one(real):
    """The path of a written file as both sides would name it: an event file's name (time
    and host) and an export's folder (its time, 10 digits) replaced by '*'."""
    shown = _EXPORT_TIME.sub(r'\1*\2', real)
    folder, name = os.path.split(shown)
    return os.path.join(folder, _EVENTS + '*') if name.startswith(_EVENTS) else shown


def build(tf1_side, runner_side, root, rtol, atol):
    """The whole report (a dict; see `towers.legacy.compare`) of two finished sides."""
    tf1_scalars, runner_scalars = (side_scalars(tf1_side.written),
                                   side_scalars(runner_side.written))
    scalars, only_tf1, only_runner, timing, steps = compare_scalars(
        tf1_scalars, runner_scalars, rtol, atol)
    tf1_final = probe.read_values(tf1_side.folder(root), 'final')
    runner_final = probe.read_values(runner_side.folder(root), 'final')
    variables = compare_variables(tf1_final, runner_final, rtol, atol)
    firsts = sorted((entry['first_differing_step'], tag) for tag, entry in scalars.items()
                    if entry['first_differing_step'] is not None)
    first = None
    if firsts:
        step, tag = firsts[0]
        first = {'step': step, 'tag': tag, 'tf1': scalars[tag]['tf1'],
                 'runner': scalars[tag]['runner']}
    reasons = []
    if runner_side.returncode != tf1_side.returncode:
        reasons.append('exit status %s on TF 1.15, %s under the runner'
                       % (tf1_side.returncode, runner_side.returncode))
    if first:
        reasons.append('scalar %s at step %d' % (first['tag'], first['step']))
    if only_tf1 or only_runner:
        reasons.append('scalars on one side only')
    if variables['differing']:
        reasons.append('%d variables' % len(variables['differing']))
    if variables['only_tf1'] or variables['only_runner'] or variables['shape_or_dtype_differs']:
        reasons.append('variable names, shapes or dtypes')
    return {'verdict': 'differ' if reasons else 'equal', 'differences': reasons,
            'tolerances': {'rtol': rtol, 'atol': atol}, 'steps_compared': steps,
            'first_difference': first, 'scalars': scalars, 'scalars_only_tf1': only_tf1,
            'scalars_only_runner': only_runner, 'timing_scalars_not_compared': timing,
            'variables': variables,
            'files': compare_files(tf1_side.written, runner_side.written),
            'exit_status': {'tf1': tf1_side.returncode, 'runner': runner_side.returncode}}


def lines(report):
    """The report as the lines the command prints."""
    out = []
    scalars = report['scalars']
    if scalars:
        width = max(len(tag) for tag in scalars) + 2
        out.append('%-*s %6s %14s  %s' % (width, 'scalar', 'steps', 'max |diff|',
                                          'first differing step'))
        for tag, entry in scalars.items():
            first = entry['first_differing_step']
            out.append('%-*s %6d %14.3g  %s' % (
                width, tag, entry['steps'], entry['max_abs_diff'],
                '-' if first is None else '%d (TF 1.15 %.7g, runner %.7g)'
                % (first, entry['tf1'], entry['runner'])))
    else:
        out.append('scalars: the program wrote no scalar summaries on either side')
    for side in ('tf1', 'runner'):
        if report['scalars_only_' + side]:
            out.append('scalars only %s: %s' % (_SIDE[side], ', '.join(
                report['scalars_only_' + side])))
    variables = report['variables']
    out.append('variables: %d compared, max |diff| %.3g (%s), max relative %.3g; %d only on '
               'TF 1.15, %d only under the runner, %d of another shape or dtype'
               % (variables['compared'], variables['max_abs_diff'], variables['worst'] or '-',
                  variables['max_rel_diff'], len(variables['only_tf1']),
                  len(variables['only_runner']), len(variables['shape_or_dtype_differs'])))
    for key in ('only_tf1', 'only_runner', 'shape_or_dtype_differs', 'differing'):
        if variables[key]:
            out.append('  %s: %s' % (key, ', '.join(variables[key][:8])
                                     + (' ...' if len(variables[key]) > 8 else '')))
    files = report['files']
    out.append('files written: %d on TF 1.15, %d under the runner'
               % (len(files['tf1']), len(files['runner'])))
    for side in ('tf1', 'runner'):
        for path in files['only_' + side]:
            out.append('  only %s: %s' % (_SIDE[side], path))
    tolerance = 'rtol %g, atol %g' % (report['tolerances']['rtol'],
                                      report['tolerances']['atol'])
    if report['verdict'] == 'equal':
        out.append('verdict: equal within %s (%d steps compared)'
                   % (tolerance, report['steps_compared']))
    else:
        out.append('verdict: differ (%s): %s' % (tolerance, '; '.join(report['differences'])))
    return out


_SIDE = {'tf1': 'on TF 1.15', 'runner': 'under the runner'}
