"""What `towers-legacy --compare_tf1` runs inside each side's process: on TensorFlow 1.15 (as
`python3.7 probe.py SCRIPT [FLAGS...]`) and under the runner on TensorFlow 2.21 (`install`).

The project's one module that runs inside TensorFlow 1.15: Python 3.7 code that imports nothing
of `towers` and only what both TensorFlows have. For the side it runs in it records:
- initial values: in each graph, at the end of the first `Session.run` after which all its
  global variables are initialized (before the first step), those of the variables no earlier
  graph held. Given the other side's (`INITIAL`), it loads them there by name first;
- final values: each variable's in the session holding it that ran last, when that closes (or
  the process exits);
- the seconds of each run of the training step (the run made most often with the same
  fetches), for `towers.benchmarks.tf1`.
It makes the draws alike: a random op that gives no seed of its own draws from a seed keyed by
its name scope and its rank among the random ops of that scope, `crc32('scope|rank')`, not from
TensorFlow's count of the graph's ops, which differs between the two (a graph without a seed
gets TensorFlow's default); and every `tf.data` shuffle keeps its first iteration's order
(`reshuffle_each_iteration=False`: TF 2 draws each iteration's seeds from those given, TF 1.15
used them for the first iteration, so only that order is alike).

The side writes into the folder `OUT`: 'initial.npz', 'final.npz' (values by position), 'probe.json'
(their names, the TensorFlow version, what was loaded, the seeds keyed, 'step_seconds'). Its jobs
in TF 1.15 (`main`) regress a port against its original: towers trained (`replay`), evaluation.
"""
import atexit
import functools
import json
import os
import runpy
import sys
import threading
import time
import weakref
import zlib

import numpy as np

OUT = 'TOWERS_COMPARE_OUT'
INITIAL = 'TOWERS_COMPARE_INITIAL'
_UNINITIALIZED_OP = 'towers_compare_uninitialized'


class Probe(object):
    """The patches of one side's process (`Session.run` and `close`, the op seeds, the
    shuffles), recording into the folder `out`; `initial`: None, or the other side's folder,
    whose initial values are loaded by name."""

    def __init__(self, out, initial=None):
        self._out = out
        self._initial = read_values(initial, 'initial') if initial else None
        self._checks = weakref.WeakKeyDictionary()     # graph -> (variables, op)
        self._last_runs = weakref.WeakKeyDictionary()   # session -> its last run's number
        self._runs = 0
        self._lock = threading.Lock()   # held while the probe runs a session itself
        self._record = _new_record()
        self._scope_counts = weakref.WeakKeyDictionary()   # graph -> {scope: count}
        self._started = weakref.WeakSet()   # graphs whose variables were all initialized
        self._first = {}          # name -> value when first found initialized, in any graph
        self._final = {}          # name -> (last run, value) of the session that ran it last
        self._times = {}          # what a run fetched (`_fetch_key`) -> its runs' seconds

    def install(self):
        """Patches `Session.run` and `close` and the op seeds for the rest of the process."""
        import tensorflow as tf
        from tensorflow.python.client import session as session_lib
        from tensorflow.python.framework import ops, random_seed
        self._tf, self._ops = tf, ops
        self._record['tensorflow'] = tf.__version__
        base = session_lib.BaseSession
        run, close, get_seed = base.run, base.close, random_seed.get_seed
        probe = self

        def probed_run(session, *args, **kwargs):
            start = time.perf_counter()
            result = run(session, *args, **kwargs)
            if not probe._lock.locked():
                fetches = args[0] if args else kwargs.get('fetches')
                probe._times.setdefault(_fetch_key(fetches), []).append(
                    time.perf_counter() - start)
                probe._runs += 1
                probe._last_runs[session] = probe._runs
                if session.graph not in probe._started:
                    probe._guarded(probe._after_run, session)
            return result

        def probed_close(session):
            if not probe._lock.locked() and not getattr(session, '_closed', True):
                probe._guarded(probe._take_final, session)
            probe._last_runs.pop(session, None)
            close(session)

        keyed_seed = functools.partial(self._seed, get_seed)
        base.run, base.close, random_seed.get_seed = probed_run, probed_close, keyed_seed
        self._fix_shuffles()
        atexit.register(self.finish)

    def _fix_shuffles(self):
        from tensorflow.python.data.ops import dataset_ops
        shuffle = dataset_ops.DatasetV2.shuffle
        probe = self

        def first_order_shuffle(dataset, buffer_size, seed=None, reshuffle_each_iteration=None,
                                *args, **kwargs):
            probe._record['shuffles_fixed'] += 1
            return shuffle(dataset, buffer_size, seed, False, *args, **kwargs)
        dataset_ops.DatasetV2.shuffle = first_order_shuffle

    def _guarded(self, function, session):
        if not self._lock.acquire(False):
            return
        try:
            function(session)
        finally:
            self._lock.release()

    def _seed(self, get_seed, op_seed):
        """TensorFlow's (seed, seed2) for a random op, with `op_seed` keyed by scope when the
        op gives none (see the module's docstring)."""
        if op_seed is not None or self._tf.executing_eagerly():
            return get_seed(op_seed)
        graph = self._ops.get_default_graph()
        scope = graph.get_name_scope()
        counts = self._scope_counts.setdefault(graph, {})
        counts[scope] = counts.get(scope, 0) + 1
        self._record['seeds_keyed'] += 1
        keyed = zlib.crc32(('%s|%d' % (scope, counts[scope])).encode('utf-8')) & 0x7fffffff
        return get_seed(keyed or 1)

    def _variables(self, graph):
        return [variable for variable in graph.get_collection('variables')
                if np.dtype(variable.dtype.base_dtype.as_numpy_dtype).kind in 'biuf']

    def _all_initialized(self, session, variables):
        """Whether all of `variables` (of `session.graph`) hold values: one check op per graph,
        made after the program's own ops (the graph unfinalized for it if need be)."""
        graph = session.graph
        known, check = self._checks.get(graph, ((), None))
        if known != tuple(variables):
            finalized = graph.finalized
            if finalized:
                graph._unsafe_unfinalize()
            with graph.as_default(), self._ops.name_scope(None):
                check = self._tf.compat.v1.report_uninitialized_variables(
                    variables, name=_UNINITIALIZED_OP)
            if finalized:
                graph.finalize()
            self._checks[graph] = (tuple(variables), check)
        return len(session.run(check)) == 0

    def _after_run(self, session):
        """At the first run after which all of a graph's variables hold values: loads the other
        side's initial values of the variables no earlier graph held, then records them."""
        variables = self._variables(session.graph)
        if not variables or not self._all_initialized(session, variables):
            return
        self._started.add(session.graph)
        new = [variable for variable in variables if variable.op.name not in self._first]
        if self._initial is not None:
            self._load(session, new)
        self._first.update(zip([variable.op.name for variable in new], session.run(new)))

    def _load(self, session, variables):
        """Loads the other side's initial values into `variables` by name, through each
        variable's initializer (no new ops)."""
        for variable in variables:
            name = variable.op.name
            value = self._initial.get(name)
            if value is None:
                self._record['not_loaded'].append(name)
            elif tuple(value.shape) != tuple(variable.shape.as_list()):
                self._record['shape_differs'].append(name)
            else:
                session.run(variable.initializer, {variable.initializer.inputs[1]: value})
                self._record['loaded'] += 1

    def _take_final(self, session):
        variables = self._variables(session.graph)
        if not variables:
            return
        try:
            values = session.run(variables)
        except self._tf.errors.OpError:
            return
        last_run = self._last_runs.get(session, 0)
        for name, value in zip([variable.op.name for variable in variables], values):
            if last_run >= self._final.get(name, (-1, None))[0]:
                self._final[name] = (last_run, value)

    def finish(self):
        """Takes the final values from the sessions still open, then writes the records."""
        for session in list(self._last_runs):
            if not getattr(session, '_closed', True):
                self._guarded(self._take_final, session)
        if self._times:
            self._record['step_seconds'] = max(self._times.values(), key=len)
        final = {name: value for name, (_, value) in self._final.items()}
        for kind, values in (('initial', self._first), ('final', final)):
            if values:
                self._record[kind + '_names'] = list(values)
                np.savez(os.path.join(self._out, kind + '.npz'), **{
                    'v%d' % index: np.asarray(value)
                    for index, value in enumerate(values.values())})
        with open(os.path.join(self._out, 'probe.json'), 'w') as f:
            json.dump(self._record, f, indent=1, sort_keys=True)


def _fetch_key(fetches):
    """What a run fetches, as a hashable value of names (the training step's: the most run)."""
    if isinstance(fetches, (list, tuple)):
        return tuple(_fetch_key(fetch) for fetch in fetches)
    if isinstance(fetches, dict):
        return tuple(sorted((str(key), _fetch_key(value)) for key, value in fetches.items()))
    return getattr(fetches, 'name', None) or type(fetches).__name__


def _new_record():
    return dict(tensorflow=None, loaded=0, not_loaded=[], shape_differs=[], seeds_keyed=0,
                shuffles_fixed=0, initial_names=[], final_names=[], step_seconds=[])


def read_record(folder):
    """The record ('probe.json') a side wrote into `folder`, or an empty one if it wrote none."""
    record, path = _new_record(), os.path.join(folder, 'probe.json')
    if os.path.isfile(path):
        with open(path) as f:
            record.update(json.load(f))
    return record


def read_values(folder, kind):
    """name -> value of the records `kind` ('initial' or 'final') in `folder`; {} if none."""
    names = read_record(folder)[kind + '_names']
    if not names:
        return {}
    with np.load(os.path.join(folder, kind + '.npz')) as values:
        return {name: values['v%d' % index] for index, name in enumerate(names)}


def install_from_environment():
    """Installs the probe when the environment names its folder (`OUT`); else nothing."""
    if os.environ.get(OUT):
        Probe(os.environ[OUT], os.environ.get(INITIAL) or None).install()


def _import_originals(folder, names):
    """`towers.legacy.shim.import_originals` for TF 1.15: the original's modules by name, from
    `folder`, imported and their absl flags parsed with no command-line arguments."""
    import importlib
    import tensorflow as tf
    sys.path.insert(0, folder)
    argv, sys.argv = sys.argv, sys.argv[:1]
    try:
        modules = {name: importlib.import_module(name) for name in names}
    finally:
        sys.argv = argv
    if not tf.app.flags.FLAGS.is_parsed():
        tf.app.flags.FLAGS(sys.argv[:1])
    return modules


def _job(spec, cpus):
    """(tf, the function 'module.name' of the original's modules or 'tf.name', the batches, a
    config of `cpus` CPU devices, one thread per pool) of a `replay` or `evaluate` job."""
    import tensorflow as tf
    config = tf.ConfigProto(device_count={'CPU': cpus, 'GPU': 0},
                            intra_op_parallelism_threads=1, inter_op_parallelism_threads=1)
    modules = _import_originals(spec['original_dir'], spec['modules'])

    def function(dotted):
        module, name = dotted.split('.', 1)
        return functools.reduce(getattr, name.split('.'), modules.get(module, tf))
    return tf, function, np.load(spec['batches']), config


def _placeholders(tf, batches, names=('images', 'labels')):
    """The placeholders of one batch of `batches`, one per input name."""
    return [tf.placeholder(tf.as_dtype(batches[name + '_0'].dtype), batches[name + '_0'].shape)
            for name in names]


def replay(spec):
    """Trains an original's towers as the TF1 multi-GPU tutorials' `train()` did, from given
    values on given batches: `num_towers` CPU devices, one thread per pool; a float32 global step;
    gradient descent at `exponential_decay` of 'learning_rate' ('initial', 'decay_steps',
    'decay_factor'; staircase); in `tf.device(device_fn('/cpu:i'))` and scope '<tower_name>_i'
    the original's 'tower_loss' of the i-th shard of 'inputs' ('images', 'labels' by default)
    and `compute_gradients` of each of 'objectives' (name -> [index in what `tower_loss` gives,
    part of its variables' names]; by default all of one loss); 'average_gradients' on '/cpu:0';
    an `ExponentialMovingAverage('moving_average_decay')` too if given. Each objective starts at
    'initial' (.npz) and runs 'steps' steps of 'batches' ('<input>_<step>'); 'checkpoint' (or
    None) saved last. To 'out': the 'tower_losses_per_step', 'step0_averaged_grad_l2_norms',
    'final_abs_sums' (per 'objectives' when given), 'tensorflow'."""
    towers, rate = spec['num_towers'], spec['learning_rate']
    tf, function, batches, config = _job(spec, towers)
    tower_loss, average_gradients = map(function, (spec['tower_loss'], spec['average_gradients']))
    device_fn = function(spec['device_fn']) if spec.get('device_fn') else (lambda device: device)
    objectives = spec.get('objectives') or {'train': [None, '']}
    names, initial = spec.get('inputs', ['images', 'labels']), np.load(spec['initial'])
    with tf.Graph().as_default():
        inputs = _placeholders(tf, batches, names)
        global_step = tf.get_variable('global_step', [], initializer=tf.constant_initializer(0),
                                      trainable=False)
        optimizer = tf.train.GradientDescentOptimizer(tf.train.exponential_decay(
            rate['initial'], global_step, rate['decay_steps'], rate['decay_factor'],
            staircase=True))
        losses, tower_grads = [], []
        with tf.variable_scope(tf.get_variable_scope()):
            for i, shard in enumerate(zip(*[tf.split(tensor, towers) for tensor in inputs])):
                with tf.device(device_fn('/cpu:%d' % i)), \
                        tf.name_scope('%s_%d' % (spec['tower_name'], i)) as scope:
                    losses.append(tower_loss(scope, *shard))
                    tf.get_variable_scope().reuse_variables()
                    tower_grads.append({name: optimizer.compute_gradients(
                        losses[-1] if index is None else losses[-1][index],
                        [v for v in tf.trainable_variables() if part in v.name])
                        for name, (index, part) in objectives.items()})
        with tf.device('/cpu:0'):
            grads = {name: average_gradients([each[name] for each in tower_grads])
                     for name in objectives}
        train = {name: optimizer.apply_gradients(pairs, global_step=global_step)
                 for name, pairs in grads.items()}
        if spec.get('moving_average_decay'):
            apply_averages = tf.train.ExponentialMovingAverage(
                spec['moving_average_decay'], global_step).apply(tf.trainable_variables())
            train = {name: tf.group(update, apply_averages) for name, update in train.items()}
        runs = {}
        with tf.Session(config=config) as session:
            for name in objectives:
                session.run(tf.global_variables_initializer())
                for variable in tf.global_variables():
                    if variable is not global_step:
                        variable.load(initial[variable.op.name], session)
                run = runs[name] = {'tower_losses_per_step': []}
                for step in range(spec['steps']):
                    done = session.run({'train': train[name], 'losses': losses, 'grads': {
                        var.op.name: grad for grad, var in grads[name]} if step == 0 else {}},
                        {tensor: batches['%s_%d' % (input_name, step)]
                         for tensor, input_name in zip(inputs, names)})
                    run['tower_losses_per_step'].append(
                        [np.asarray(loss, float).tolist() for loss in done['losses']])
                    if step == 0:
                        run['step0_averaged_grad_l2_norms'] = {key: float(np.linalg.norm(
                            value)) for key, value in done['grads'].items()}
                run['final_abs_sums'] = {var.op.name: float(np.abs(value).sum()) for var, value
                                         in zip(tf.global_variables(),
                                                session.run(tf.global_variables()))}
            if spec.get('checkpoint'):
                tf.train.Saver(tf.global_variables()).save(session, spec['checkpoint'],
                                                           write_meta_graph=False)
    with open(spec['out'], 'w') as f:
        json.dump(dict({'objectives': runs} if spec.get('objectives') else runs['train'],
                       tensorflow=tf.__version__), f)


def evaluate(spec):
    """Runs a network of an original's functions, restored from 'checkpoint', on one CPU, one
    thread per pool: 'calls' in order, each [outputs, 'module.function' or 'tf.name', argument
    names (of 'inputs' or earlier outputs), keyword arguments]; the variables are restored, or
    their 'moving_average_decay' averages when given (as the TF1 tutorials evaluated). Writes
    'tensorflow' and 'outputs' (per batch of 'batches', the 'fetch' outputs) to 'out'."""
    tf, function, batches, config = _job(spec, 1)
    count = len([name for name in batches.files if name.startswith(spec['inputs'][0] + '_')])
    with tf.Graph().as_default():
        inputs = _placeholders(tf, batches, spec['inputs'])
        tensors = dict(zip(spec['inputs'], inputs))
        for outputs, dotted, arguments, keywords in spec['calls']:
            made = function(dotted)(*[tensors[name] for name in arguments], **keywords)
            tensors.update(zip(outputs, made if len(outputs) > 1 else [made]))
        decay = spec.get('moving_average_decay')
        saver = tf.train.Saver(tf.train.ExponentialMovingAverage(decay).variables_to_restore()
                               if decay else None)
        with tf.Session(config=config) as session:
            saver.restore(session, spec['checkpoint'])
            found = [session.run({name: tensors[name] for name in spec['fetch']}, {
                tensor: batches['%s_%d' % (name, index)]
                for name, tensor in zip(spec['inputs'], inputs)}) for index in range(count)]
    with open(spec['out'], 'w') as f:
        json.dump({'tensorflow': tf.__version__, 'outputs': [
            {name: value.tolist() for name, value in each.items()} for each in found]}, f)


_JOBS = {'--replay': replay, '--evaluate': evaluate}


def main(argv):
    """`probe.py SCRIPT [FLAGS...]` (`-m MODULE [FLAGS...]`): the program run as `python SCRIPT`
    would, with the probe installed; `--replay SPEC.json`, `--evaluate SPEC.json`: those jobs."""
    if argv[:1] and argv[0] in _JOBS:
        with open(argv[1]) as f:
            return _JOBS[argv[0]](json.load(f))
    module = argv[1] if argv[0] == '-m' else None
    sys.argv = list(argv[1:] if module else argv)
    sys.path[0] = os.getcwd() if module else os.path.dirname(os.path.abspath(sys.argv[0]))
    install_from_environment()
    if module:
        return runpy.run_module(module, run_name='__main__', alter_sys=True)
    runpy.run_path(os.path.abspath(sys.argv[0]), run_name='__main__')


if __name__ == '__main__':
    main(sys.argv[1:])
