"""Runs the `tf.contrib` cases of this folder and writes what each computed, unchanged on
TensorFlow 1.15 and under towers-legacy: tests/test_legacy_contrib_tf1.py compares the two.

    python run_cases.py OUT [CASE ...]        (CASE: a module's name without `case_`, e.g. crf)

Each `case_<piece>.py` has `CASES`, a dict name -> a function that builds a graph (a fresh one,
graph seed 1) and returns a dict of fetches: tensors whose values are recorded, and optionally
'train_op' (run `TRAIN_STEPS` times between two records) and 'post' (a function of the recorded
values -> more values, for a piece's NumPy functions such as `viterbi_decode`). Every variable
is given the same values on both sides, drawn from its name, before the first record. Written to
OUT/<piece>.<name>.npz: 'before/<fetch>', 'after/<fetch>' (with a train_op), 'var/<variable>'
(final values) and 'names' (the variables' names and shapes, so that names are compared too).
"""
import glob
import importlib.util
import os
import sys
import zlib

import numpy as np
import tensorflow as tf

TRAIN_STEPS = 3
HERE = os.path.dirname(os.path.abspath(__file__))


def value_for(variable):
    """The value of `variable` on both sides: drawn from its name's CRC, scaled to 0.5."""
    shape = variable.shape.as_list()
    rng = np.random.RandomState(zlib.crc32(variable.op.name.encode('utf-8')))
    dtype = variable.dtype.base_dtype.as_numpy_dtype
    if variable.dtype.base_dtype.is_integer or variable.dtype.base_dtype == tf.bool:
        return None
    return (0.5 * rng.standard_normal(shape)).astype(dtype)


def record(session, fetches, prefix):
    tensors = {name: fetch for name, fetch in fetches.items() if name not in ('train_op', 'post')}
    values = session.run(tensors)
    if 'post' in fetches:
        values.update(fetches['post'](values))
    return {'%s/%s' % (prefix, name): np.asarray(value) for name, value in values.items()}


def run_case(build, out_file):
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(1)
        fetches = build()
        variables = sorted(tf.global_variables(), key=lambda v: v.op.name)
        with tf.Session(graph=graph) as session:
            session.run([tf.global_variables_initializer(), tf.local_variables_initializer(),
                         tf.tables_initializer()])
            for variable in variables:
                value = value_for(variable)
                if value is not None:
                    variable.load(value, session)
            arrays = record(session, fetches, 'before')
            if 'train_op' in fetches:
                for _ in range(TRAIN_STEPS):
                    session.run(fetches['train_op'])
                arrays.update(record(session, fetches, 'after'))
            for variable in variables:
                arrays['var/' + variable.op.name] = session.run(variable)
    arrays['names'] = np.array(sorted('%s %s' % (v.op.name, v.shape.as_list())
                                      for v in variables))
    np.savez(out_file, **arrays)


def main(out, wanted):
    os.makedirs(out, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(HERE, 'case_*.py'))):
        piece = os.path.basename(path)[len('case_'):-len('.py')]
        if wanted and piece not in wanted:
            continue
        spec = importlib.util.spec_from_file_location('case_' + piece, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name, build in sorted(module.CASES.items()):
            run_case(build, os.path.join(out, '%s.%s.npz' % (piece, name)))
            print('case %s.%s done' % (piece, name))


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2:])
