"""`tf.keras.estimator.model_to_estimator`: an Estimator of a compiled Keras model, as TF
1.13-1.15 made it (tf-keras's own raises NotImplementedError: it needs `tensorflow-estimator`).

    model.compile(tf.train.AdamOptimizer(0.001), 'categorical_crossentropy', ['accuracy'])
    estimator = tf.keras.estimator.model_to_estimator(model, model_dir='/tmp/model')
    estimator.train(lambda: ({'images': images}, labels), steps=100)   # or images alone

The `model_fn` clones the model in each graph (its layers' names kept, so its variables are
named `<layer>/kernel`, ... as the model's weights, and a checkpoint restores into the model
built anywhere else), on the features keyed by the model's input names (one tensor for a model
of one input) and the labels keyed by its output names (or one tensor). It compiles the clone
on the labels as the model was compiled, for the loss (the compiled loss with its weights, plus
the layers' regularization losses) and the metrics (TF 1.x's names: 'accuracy' and 'acc' are
'acc', '<output>_acc' for a model of several outputs). A TRAIN step differentiates the loss and
applies the gradients with the optimizer given to `compile` (a `tf.train` one, or a copy of the
Keras one for each graph) in one `apply_gradients`, runs the batch-norm updates with it and
then increments the global step. The predictions are keyed by the output names, and are the
`serving_default` signature of `export_saved_model`.

The model's weights at the time of the call are written to `model_dir/keras/keras_model.ckpt`
(unless a checkpoint is there already), which warm-starts a new model: `model.ckpt-0` holds
them all, batch-norm statistics too. A Keras optimizer counts its steps in the global step and
keeps its slots under 'training/<name>/', as TF 1.15's and 2.15's did.

Checkpoints are name-based (`checkpoint_format='saver'`, TF 1.x's default and
`tf.compat.v1.keras.estimator`'s) or object-based ('checkpoint', `model_to_estimator_v2`'s
default: TF 2's `tf.keras.estimator.model_to_estimator`), in which every checkpoint, the first
one too, keys the model's weights and its optimizer's slots and hyperparameters by their place in
the model's object graph ('layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE', ...; the
global step as 'estimator_global_step'), as TF 2.15 wrote them, so that the Keras model's
`load_weights` reads them and either side resumes the other's `model_dir`. Sample weights in
the features are not provided.
"""
import os
import re
import tempfile
import warnings

from towers.compat import internal, keras, tf
from towers.legacy.estimator import export
from towers.legacy.estimator.estimator import Estimator, EstimatorV2
from towers.legacy.estimator.run_config import RunConfig
from towers.legacy.estimator.spec import SERVING_KEY, EstimatorError, EstimatorSpec, ModeKeys
from towers.legacy.estimator.warm_start import WarmStartSettings

KERAS_DIR = 'keras'
KERAS_CHECKPOINT = 'keras_model.ckpt'


def model_to_estimator(keras_model=None, keras_model_path=None, custom_objects=None,
                       model_dir=None, config=None, checkpoint_format='saver',
                       metric_names_map=None, export_outputs=None, estimator_class=Estimator):
    """An `Estimator` that trains, evaluates, predicts with and exports a compiled Keras model.

    Args:
      keras_model: a compiled functional or Sequential `tf.keras.Model`; or None, with
        `keras_model_path`.
      keras_model_path: a Keras model saved by `model.save` (HDF5 or SavedModel), compiled.
      custom_objects: dict name -> class or function, for cloning or loading the model.
      model_dir: where the checkpoints go; `config.model_dir` or a new temporary folder when
        not given.
      config: a `RunConfig`.
      checkpoint_format: 'saver' (name-based checkpoints, TF 1.x's default) or 'checkpoint'
        (object-based, TF 2's default).
      metric_names_map: the compiled metrics' names -> the evaluation's names for them (all
        of them), as TF 2.15 took it.
      export_outputs: output name -> an `ExportOutput` class, a signature of that output
        beside 'serving_default'.
      estimator_class: `Estimator`, or `EstimatorV2` (TF 2's `model_to_estimator_v2`).

    Returns:
      An `estimator_class` whose first checkpoint holds the model's weights.

    Raises:
      EstimatorError: neither or both of `keras_model` and `keras_model_path`; the model is
        not compiled, or is subclassed; the file does not load; `checkpoint_format` is
        neither 'saver' nor 'checkpoint'; an output in `export_outputs` the model lacks.
    """
    if (keras_model is None) == (keras_model_path is None):
        raise EstimatorError('model_to_estimator needs either keras_model (a compiled '
                             'tf.keras.Model) or keras_model_path (a file of one), not %s'
                             % ('both' if keras_model is not None else 'neither'))
    if checkpoint_format not in ('saver', 'checkpoint'):
        raise EstimatorError("model_to_estimator(checkpoint_format=%r): expected 'saver' "
                             "(name-based checkpoints) or 'checkpoint' (object-based)"
                             % (checkpoint_format,))
    if keras_model is None:
        tf.logging.info('Loading models from %s', keras_model_path)
        keras_model = _load(keras_model_path, custom_objects)
    else:
        tf.logging.info('Using the Keras model provided.')
    if not isinstance(keras_model, keras.Model):
        raise EstimatorError('model_to_estimator(keras_model=...) got %s: expected a compiled '
                             'tf.keras.Model' % type(keras_model).__name__)
    if getattr(keras_model, 'optimizer', None) is None:
        raise EstimatorError('the Keras model %r is not compiled: compile it with '
                             'model.compile(optimizer, loss, metrics) before '
                             'model_to_estimator' % keras_model.name)
    if not getattr(keras_model, '_is_graph_network', False):
        raise EstimatorError('the Keras model %r is subclassed from tf.keras.Model: '
                             "model_to_estimator clones a model by its layers' configuration, "
                             'expected a functional or Sequential model' % keras_model.name)
    config = RunConfig() if config is None else config
    model_dir = model_dir or getattr(config, 'model_dir', None)
    if not model_dir:
        model_dir = tempfile.mkdtemp()
        tf.logging.warning('Using temporary folder as model directory: %s', model_dir)
    network = KerasModelFn(keras_model, custom_objects, checkpoint_format == 'checkpoint',
                           metric_names_map, export_outputs)
    # As TF 1.15: the Keras model's values when its session initialized any, else the clone's
    # own initial values, drawn with the RunConfig's seed (Keras's session left alone).
    # A TF 2 program's model (`--tf2`) is built eagerly: its values are there, as in TF 2.15.
    weights = (keras_model.get_weights() if tf.executing_eagerly() or any(
        getattr(weight, '_keras_initialized', False) for weight in keras_model.weights)
        else None)
    with tf.Graph().as_default() as graph:
        tf.set_random_seed(config.tf_random_seed)
        if network.object_checkpoints:
            # TF 2.15's: a training clone's, its optimizer's slots and the global step too.
            clone = network.clone(None, None, ModeKeys.TRAIN)
            network.train_op(clone, clone.total_loss)
            saver = object_saver(clone, sharded=False)
            initializer = tf.global_variables_initializer()
        else:
            clone = network.clone(None, None, ModeKeys.PREDICT)
            saver = tf.train.Saver(clone.weights)
            initializer = tf.variables_initializer(clone.weights)
    path = os.path.join(model_dir, KERAS_DIR, KERAS_CHECKPOINT)
    # Each weight by its exact name, batch-norm statistics too (a regular expression string
    # would warm-start the trainable variables only).
    settings = WarmStartSettings(path, ['^%s:' % re.escape(weight.op.name)
                                        for weight in clone.weights])
    estimator = estimator_class(network, model_dir=model_dir, config=config,
                                warm_start_from=settings if config.is_chief else None)
    if config.is_chief and not tf.train.latest_checkpoint(os.path.dirname(path)):
        tf.gfile.MakeDirs(os.path.dirname(path))
        with tf.Session(graph=graph) as session:
            session.run(initializer)
            for weight, value in zip(clone.weights, weights or ()):
                weight.load(value, session)
            saver.save(session, path)
    return estimator


def _load(path, custom_objects):
    """The Keras model saved at `path`, as `keras.models.load_model` loads it."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise EstimatorError('model_to_estimator(keras_model_path=%r): no such file: expected '
                             'a Keras model saved by model.save (HDF5 or SavedModel)' % path)
    try:
        return keras.models.load_model(path, custom_objects=custom_objects)
    except (OSError, ValueError, ImportError) as err:
        raise EstimatorError('model_to_estimator(keras_model_path=%r) cannot load it as a '
                             'Keras model: %s' % (path, str(err).split('\n')[0]))


class KerasModelFn:
    """The `model_fn` (features, labels, mode) -> `EstimatorSpec` of a compiled Keras model.

    Holds only the model, its custom objects and its optimizer's configuration; each call
    clones the model into the current graph.
    """

    def __init__(self, keras_model, custom_objects=None, object_checkpoints=False,
                 metric_names_map=None, export_outputs=None):
        self._model = keras_model
        self._custom_objects = dict(custom_objects or {})
        self.object_checkpoints = object_checkpoints
        self._metric_names = metric_names_map
        self._export_outputs = dict(export_outputs or {})
        unknown = sorted(set(self._export_outputs) - set(keras_model.output_names))
        if unknown:
            raise EstimatorError('model_to_estimator(export_outputs=...) names %s: expected '
                                 "outputs of the Keras model (%s)" % (
                                     ', '.join(map(repr, unknown)),
                                     ', '.join(keras_model.output_names)))
        self._compile_args = keras_model._get_compile_args()
        self._compile_args.pop('optimizer', None)  # a TF 2 model's has it; the clone's own
        optimizer = keras_model.optimizer
        # tf-keras wraps a `tf.train` optimizer given to `compile` (in `optimizer.optimizer`);
        # that one is used in every graph, as TF 1.x used it. A Keras optimizer's variables
        # belong to one graph: a new one is made from its configuration in each, which is
        # read now, in the model's own graph, as TF 1.x read it.
        if isinstance(optimizer, keras.optimizers.Optimizer):
            # TF 2.11+'s optimizers have no graph mode: TF 2.15's Estimator took the legacy
            # optimizer of the same configuration instead, and said so.
            tf.logging.warning('You are using `tf.keras.optimizers.experimental.Optimizer` in '
                               'TF estimator, which only supports `tf.keras.optimizers.legacy.'
                               'Optimizer`. Automatically converting your optimizer to '
                               '`tf.keras.optimizers.legacy.Optimizer`.')
            optimizer = keras_model.optimizer = (
                keras.__internal__.optimizers.convert_to_legacy_optimizer(optimizer))
        self._tf_optimizer = getattr(optimizer, 'optimizer', None)
        if not isinstance(self._tf_optimizer, tf.train.Optimizer):
            self._tf_optimizer = None
            try:
                self._optimizer_config = optimizer.get_config()
            except (NotImplementedError, AttributeError) as err:
                raise EstimatorError('the Keras model %r is compiled with the optimizer %s, '
                                     'whose get_config fails (%s): expected a tf.train or '
                                     'tf.keras optimizer' % (keras_model.name,
                                                             type(optimizer).__name__, err))

    def __call__(self, features, labels, mode):
        clone = self.clone(features, labels, mode)
        predictions = dict(zip(self._model.output_names, clone.outputs))
        export_outputs = {SERVING_KEY: export.PredictOutput(predictions)}
        export_outputs.update((name, output_class(predictions[name]))
                              for name, output_class in self._export_outputs.items())
        parts = dict(predictions=predictions, export_outputs=export_outputs)
        if mode != ModeKeys.PREDICT:
            parts['loss'] = clone.total_loss
        if mode == ModeKeys.EVAL:
            parts['eval_metric_ops'] = _metric_ops(clone, self._metric_names)
        elif mode == ModeKeys.TRAIN:
            parts['train_op'] = self.train_op(clone, clone.total_loss)
        if self.object_checkpoints:
            parts['scaffold'] = tf.train.Scaffold(saver=object_saver(clone))
        return EstimatorSpec(mode, **parts)

    def clone(self, features, labels, mode):
        """The model cloned into the default graph on `features` (new placeholders when None),
        in training mode (dropout, batch statistics) for TRAIN, compiled on `labels` (new
        placeholders when None) but for PREDICT."""
        inputs = None if features is None else [
            keras.Input(tensor=tensor, name=name) for name, tensor in zip(
                self._model.input_names,
                _ordered(features, self._model.input_names, 'features', 'input'))]
        if mode != ModeKeys.PREDICT and labels is not None:
            targets = _ordered(labels, self._model.output_names, 'labels', 'output')
        elif mode != ModeKeys.PREDICT:
            targets = None
        with keras.utils.custom_object_scope(self._custom_objects), warnings.catch_warnings():
            # The learning phase is deprecated for layers called by hand; a clone's layers are
            # called by `clone_model`, which passes no `training`.
            warnings.simplefilter('ignore', UserWarning)
            with keras.backend.learning_phase_scope(int(mode == ModeKeys.TRAIN)):
                clone = keras.models.clone_model(self._model, input_tensors=inputs)
                if mode != ModeKeys.PREDICT:
                    clone.compile(optimizer=self._compile_optimizer(), target_tensors=targets,
                                  **self._compile_args)
        return clone

    def _compile_optimizer(self):
        """The optimizer of the clone's `compile`: the model's own kind, for this graph,
        counting its steps in the global step (TF 1.15's and 2.15's `optimizer_iterations`)."""
        optimizer = self._model.optimizer
        if self._tf_optimizer is not None:
            return type(optimizer)(self._tf_optimizer,
                                   iterations=tf.train.get_or_create_global_step())
        optimizer = type(optimizer).from_config(self._optimizer_config)
        optimizer.iterations = tf.train.get_or_create_global_step()
        return optimizer

    def train_op(self, clone, loss):
        """One step: the gradients of `loss` applied in one `apply_gradients` of the compiled
        optimizer, with the model's batch-norm updates (also in `UPDATE_OPS`), the global step
        incremented by it (a Keras optimizer) or after it."""
        variables = clone.trainable_weights
        gradients = tf.gradients(loss, variables)
        pairs = [(gradient, variable) for gradient, variable in zip(gradients, variables)
                 if gradient is not None]
        if not pairs:
            raise EstimatorError('the loss of the Keras model %r depends on none of its '
                                 'trainable weights' % self._model.name)
        # TF 1.15's and 2.15's Keras applied it in the scope 'training': 'training/beta1_power',
        # 'training/Adam/dense/kernel/m'.
        with tf.name_scope('training'):
            if self._tf_optimizer is not None:
                apply_gradients = self._tf_optimizer.apply_gradients(pairs)
            else:
                apply_gradients = clone.optimizer.apply_gradients(pairs)
        updates = list(clone.updates)
        for update in updates:
            tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, update)
        with tf.control_dependencies([apply_gradients] + updates):
            if self._tf_optimizer is None:
                return tf.no_op()
            return tf.assign_add(tf.train.get_or_create_global_step(), 1).op


def object_saver(clone, sharded=True):
    """A saver of `clone`'s object graph, the global step tracked as 'estimator_global_step':
    its variables keyed by their paths, with the graph itself, as TF 2's object-based
    checkpoints (TF 2.15's model_to_estimator wrote its Estimator's sharded)."""
    clone._track_trackable(tf.train.get_or_create_global_step(), 'estimator_global_step')
    view = internal('checkpoint.graph_view').ObjectGraphView(clone)
    return tf.train.Saver(var_list=view.frozen_saveable_objects(), sharded=sharded)


def _metric_ops(clone, names=None):
    """The compiled metrics of `clone` as name (or `names[name]`) -> (value, update op), their
    variables made local (Keras puts them in no collection), so that evaluation initialises
    them.

    Raises:
      EstimatorError: `names` given without each compiled metric, or with others.
    """
    metrics = clone._compile_metric_functions
    if names:
        found = {metric.name for metric in metrics}
        if set(names) != found:
            raise EstimatorError(
                'model_to_estimator(metric_names_map=...) has the keys %s: expected the Keras '
                "model's compiled metrics %s" % (sorted(names), sorted(found)))
    metric_ops = {}
    for metric in metrics:
        for variable in metric.variables:
            tf.add_to_collection(tf.GraphKeys.LOCAL_VARIABLES, variable)
        name = names[metric.name] if names else metric.name
        metric_ops[name] = (metric.result(), tf.group(*metric.updates))
    return metric_ops


def _ordered(values, names, what, kind):
    """`values` (a dict keyed by `names`, a list, or one tensor) as a list in `names`' order.

    Raises:
      EstimatorError: a key of `names` is missing from the dict (an extra key is left
        unused, as TF 1.x left it); a list or tensor of another count than `names`.
    """
    if values is None:
        raise EstimatorError('the input_fn gave no %s: the Keras model needs them for its '
                             '%ss %s' % (what, kind, ', '.join(names)))
    if isinstance(values, dict):
        if set(values) == {'features', 'sample_weights'} and 'features' not in names:
            raise EstimatorError("features {'features': ..., 'sample_weights': ...}: sample "
                                 "weights are not provided by towers-legacy's "
                                 'model_to_estimator')
        missing = [name for name in names if name not in values]
        if missing:
            raise EstimatorError(
                "the input_fn's %s have the keys %s: expected the Keras model's %s names %s "
                '(missing %s)' % (what, ', '.join(repr(key) for key in sorted(values)), kind,
                                  ', '.join(repr(name) for name in names),
                                  ', '.join(repr(name) for name in missing)))
        return [values[name] for name in names]
    values = list(values) if isinstance(values, (list, tuple)) else [values]
    if len(values) != len(names):
        raise EstimatorError("the input_fn gave %d tensor(s) as %s: the Keras model has %d %ss "
                             '(%s); give a dict keyed by their names'
                             % (len(values), what, len(names), kind, ', '.join(names)))
    return values


def model_to_estimator_v2(keras_model=None, keras_model_path=None, custom_objects=None,
                          model_dir=None, config=None, checkpoint_format='checkpoint',
                          metric_names_map=None, export_outputs=None):
    """TF 2's `tf.keras.estimator.model_to_estimator`: object-based checkpoints by default, an
    `EstimatorV2`; otherwise `model_to_estimator`."""
    return model_to_estimator(keras_model, keras_model_path, custom_objects, model_dir, config,
                              checkpoint_format, metric_names_map, export_outputs, EstimatorV2)
