"""Calling a program's `input_fn` and `model_fn` as TF 1.15's Estimator called them, and the
session-run hooks an Estimator adds to a training run.

`input_fn` is called with whichever of `mode`, `params`, `config` it takes and may return a
`tf.data.Dataset` (of `features` or `(features, labels)`) or `(features, labels)` or `features`,
which reach the `model_fn` as given (tensors, arrays or Python values, as TF 1.15 passed them);
`model_fn` with whichever of `features`, `labels`, `mode`, `params`, `config` it takes. What does
not fit stops the program with one line (`EstimatorError`) naming the function and what was
expected, where TF 1.x raised a `ValueError` from deep inside. `in_a_graph` runs each public
call of an Estimator in a graph of its own when the caller is eager (`--tf2`).
"""
import functools
import inspect
import time

from towers.compat import tf
from towers.legacy.estimator import distribute
from towers.legacy.estimator import spec as spec_lib
from towers.legacy.estimator.spec import EstimatorError, EstimatorSpec
from towers.training import hooks as hooks_lib
from towers.training import progress

# TF 1.x's `tensorflow.python.estimator.util.fn_args` (OpenNMT-tf v1 imported it), this
# module being that path's: TensorFlow's own, which that module re-exported.
fn_args = spec_lib.fn_args


def in_a_graph(method):
    """`method`, run in a graph of its own where the caller executes eagerly (a TF 2 program,
    `towers-legacy --tf2`), as TF 2's Estimator ran each call; a generator's graph stays the
    default while it yields, as TF 2's `predict` left it."""
    if inspect.isgeneratorfunction(method):
        @functools.wraps(method)
        def generating(*args, **kwargs):
            if not tf.executing_eagerly():
                return (yield from method(*args, **kwargs))
            with tf.Graph().as_default():
                return (yield from method(*args, **kwargs))
        return generating

    @functools.wraps(method)
    def running(*args, **kwargs):
        if not tf.executing_eagerly():
            return method(*args, **kwargs)
        with tf.Graph().as_default():
            return method(*args, **kwargs)
    return running


def arg_names(fn):
    """The names of the arguments `fn` takes (a function, a method, a callable object, a
    `functools.partial` less what it binds), and whether it takes **kwargs: what TF 1.x's
    `fn_args` read to choose what to pass."""
    if isinstance(fn, functools.partial):
        names, kwargs = arg_names(fn.func)
        bound = set(fn.keywords or ())
        return tuple(name for name in names[len(fn.args):] if name not in bound), kwargs
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return (), True
    names = tuple(p.name for p in parameters
                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))
    return names, any(p.kind == p.VAR_KEYWORD for p in parameters)


def _name(fn):
    return getattr(fn, '__name__', None) or type(fn).__name__


def call_input_fn(input_fn, mode, params, config, num_replicas=None):
    """Builds the input of `mode` in the default graph.

    Args:
      input_fn, mode, params, config: the program's `input_fn` and what it may take.
      num_replicas: None, or the replicas of a distribution strategy: each takes its own
        batch, the next element of the `Dataset` the `input_fn` must then return (as TF 1.x's
        Estimator gave each replica its own batch), and an `input_fn` taking `input_context`
        gets a `tf.distribute.InputContext` of them.

    Returns:
      (features, labels, hooks); with `num_replicas`, ([(features, labels) per replica],
      hooks): labels None when the input has none; hooks initialise a `Dataset`'s iterator in
      each new session.

    Raises:
      EstimatorError: `input_fn` returns a tuple or list of other than 2 elements; with
        `num_replicas`, no `Dataset`.
    """
    names, _ = arg_names(input_fn)
    given = {'mode': mode, 'params': params, 'config': config}
    if num_replicas is not None:
        given['input_context'] = distribute.input_context(num_replicas)
    with tf.device('/cpu:0'):
        result = input_fn(**{name: given[name] for name in names if name in given})
        hooks = []
        if isinstance(result, tf.compat.v2.data.Dataset):
            iterator = tf.data.make_initializable_iterator(result)
            hooks.append(_IteratorInitializerHook(iterator))
            elements = [iterator.get_next() for _ in range(num_replicas or 1)]
        elif num_replicas is not None:
            raise EstimatorError('the input_fn %s() returned a %s: with a distribution strategy '
                                 'it must return a tf.data.Dataset, whose next batch each '
                                 'replica takes' % (_name(input_fn), type(result).__name__))
        else:
            elements = [result]
    batches = [_features_and_labels(element, input_fn) for element in elements]
    if num_replicas is None:
        return batches[0] + (hooks,)
    return batches, hooks


def _features_and_labels(result, input_fn):
    if isinstance(result, (tuple, list)):
        if len(result) != 2:
            raise EstimatorError('the input_fn %s() returned a %s of %d elements: expected '
                                 '(features, labels) as a len 2 tuple, a Dataset of them, or '
                                 'features alone'
                                 % (_name(input_fn), type(result).__name__, len(result)))
        features, labels = result
    else:
        features, labels = result, None
    return features, labels


MODEL_FN_ARGS = ('features', 'labels', 'mode', 'params', 'config', 'self')


def check_model_fn(model_fn, params):
    """Raises `EstimatorError` where TF 1.15 refused a `model_fn`: none given, it takes no
    `features`, no `params` though params are given, or arguments an Estimator does not
    give."""
    if model_fn is None:
        raise EstimatorError('model_fn must be provided to Estimator: a function (features, '
                             'labels, mode, params, config) -> tf.estimator.EstimatorSpec')
    names, _ = arg_names(model_fn)
    _check_features(model_fn, names)
    if params is not None and 'params' not in names:
        raise EstimatorError('model_fn %s() does not include params argument, but params are '
                             'given to the Estimator: %r' % (_name(model_fn), params))
    unexpected = [name for name in names if name not in MODEL_FN_ARGS]
    if unexpected:
        raise EstimatorError('model_fn %s() has following not expected args: %s (an Estimator '
                             'gives %s)' % (_name(model_fn), ', '.join(unexpected),
                                            ', '.join(MODEL_FN_ARGS[:-1])))


def _check_features(model_fn, names):
    if 'features' not in names:
        raise EstimatorError('model_fn %s() must include features argument; it takes (%s)'
                             % (_name(model_fn), ', '.join(names)))


def call_model_fn(model_fn, features, labels, mode, params, config):
    """Calls `model_fn` for `mode` with the arguments it takes.

    Returns:
      Its `EstimatorSpec`.

    Raises:
      EstimatorError: it does not take `features`; it takes no `labels` but the input has
        them; it returns something other than an `EstimatorSpec`.
    """
    names, _ = arg_names(model_fn)
    names = tuple(name for name in names if name != 'self')
    _check_features(model_fn, names)
    if 'labels' not in names and labels is not None:
        raise EstimatorError('model_fn does not take labels (%s() takes (%s)), but input_fn '
                             'returns labels' % (_name(model_fn), ', '.join(names)))
    given = {'features': features, 'labels': labels, 'mode': mode, 'params': params,
             'config': config}
    tf.logging.info('Calling model_fn.')
    spec = model_fn(**{name: given[name] for name in names if name in given})
    tf.logging.info('Done calling model_fn.')
    if not isinstance(spec, EstimatorSpec):
        raise EstimatorError('model_fn should return an EstimatorSpec: %s() returned %s'
                             % (_name(model_fn), type(spec).__name__))
    return spec


def log_checkpoint_hook(config, hooks):
    """Logs the `Create CheckpointSaverHook.` of TF 1.15's training, which made that hook when
    `config` saves checkpoints on a cadence and none of `hooks` is one (the loop here saves
    with a hook of its own)."""
    if ((config.save_checkpoints_secs or config.save_checkpoints_steps)
            and not any(isinstance(hook, tf.train.CheckpointSaverHook) for hook in hooks)):
        tf.logging.info('Create CheckpointSaverHook.')


def batch_size(features):
    """The static batch size of `features` (the first dimension of its first tensor), or
    None when it is not known."""
    for tensor in _leaves(features):
        if tf.is_tensor(tensor) and tensor.shape.ndims:
            return tf.compat.dimension_value(tensor.shape[0])
    return None


def _leaves(value):
    """The values of a nest of dicts, lists and tuples, in their order (dict keys of mixed
    types, str and int, which `tf.nest` cannot sort, as TF 1.15 allowed them)."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


class _IteratorInitializerHook(tf.train.SessionRunHook):
    """Initialises a `Dataset`'s iterator in each session made."""

    def __init__(self, iterator):
        self._iterator = iterator

    def begin(self):
        self._initializer = self._iterator.initializer

    def after_create_session(self, session, coord):
        session.run(self._initializer)


class LossLoggingHook(hooks_lib.StepHook):
    """TF 1.x's `loss = 0.693, step = 1` line, through `tf.logging` at INFO, after the first
    step and every `every_n_steps` steps after it, with the seconds since the last one; with
    resource variables (TF 2 behaviour, `--tf2`) the step before it, `step = 0`, as TF read a
    resource global step."""

    def __init__(self, steps_done, loss, every_n_steps):
        super().__init__(steps_done, loss=loss)
        self._every = every_n_steps
        self._shown = -1 if tf.resource_variables_enabled() else 0
        self._logged = None

    def after_run(self, run_context, run_values):
        step = hooks_lib.read_steps_done(run_values)
        if self._logged is not None and step - self._logged[0] < self._every:
            return
        now = time.time()
        line = 'loss = %s, step = %d' % (run_values.results['loss'], step + self._shown)
        if self._logged is not None:
            line += ' (%.3f sec)' % (now - self._logged[1])
        tf.logging.info(line)
        self._logged = (step, now)


class StepRateHook(hooks_lib.StepHook):
    """TF 1.x's `global_step/sec: 12.3` line (and TF 1.15 TPUEstimator's `examples/sec: 394`
    after it, given a `batch_size`) every `every_n_steps` steps, or every `every_n_secs`
    seconds, also written as summaries to `writer` (None: not written)."""

    def __init__(self, steps_done, every_n_steps, writer, batch_size=None, every_n_secs=None):
        super().__init__(steps_done)
        self._every_n_steps = every_n_steps
        self._every_n_secs = every_n_secs
        self._writer = writer
        self._batch_size = batch_size
        self._last = None

    def after_run(self, run_context, run_values):
        step = hooks_lib.read_steps_done(run_values)
        now = time.time()
        if self._last is None:
            self._last = (step, now)
            return
        steps, secs = step - self._last[0], now - self._last[1]
        if steps <= 0 or (self._every_n_steps is not None and steps < self._every_n_steps) or (
                self._every_n_secs is not None and secs < self._every_n_secs):
            return
        summary = progress.rate_summary(steps / max(secs, 1e-9), self._batch_size)
        for value in summary.value:
            tf.logging.info('%s: %g', value.tag, value.simple_value)
        if self._writer is not None:
            self._writer.add_summary(summary, step)
        self._last = (step, now)


class GraphWriterHook(tf.train.SessionRunHook):
    """Writes the graph as `graph.pbtxt` into the model directory once the session exists, as
    TF 1.x's checkpoint hook did."""

    def __init__(self, model_dir):
        self._model_dir = model_dir

    def after_create_session(self, session, coord):
        tf.train.write_graph(session.graph.as_graph_def(add_shapes=True), self._model_dir,
                             'graph.pbtxt')


class FinalLossHook(tf.train.SessionRunHook):
    """Keeps the loss of the last step run (`Loss for final step: ...`)."""

    def __init__(self, loss):
        self._loss = loss
        self.loss = None

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(self._loss)

    def after_run(self, run_context, run_values):
        self.loss = run_values.results
