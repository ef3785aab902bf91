"""Keras models in towers: one `tf_keras` model, shared by object, called in every tower.

A slim model shares its variables between towers through `variable_scope` reuse: tower 0 makes
them with `tf.get_variable`, the others find them by name. A Keras model owns its variables, so
the towers share them by calling the same model object:

    shared = SharedModel(lambda: my_functional_model())   # configuration only
    def tower_fn(shard):                                   # a towers.Recipe's tower_fn
        images, labels = shard
        probabilities = shared(images, training=True)      # in tower i: tower i's ops
        tf.losses.softmax_cross_entropy(labels, ...)
        return {'probabilities': probabilities}

`call_in_tower(model, inputs, training)` is the call itself, for a model the caller holds;
`SharedModel` makes its model once per graph, in the first tower that calls it, so that the
towers' device function puts its variables on the parameter device.

What a tower does with a Keras model, as `build_towers` does with a slim one:
- variables: made once, on the parameter device (the device function of tower 0 sees their
  `VarHandleOp`s), read by every tower;
- batch norm: Keras keeps its moving-statistics updates in the model, not in the graph's
  `UPDATE_OPS` collection; each call adds the updates of its own inputs to `UPDATE_OPS` (named
  under the tower's name scope), so the towers' train op runs tower 0's, as for slim;
- regularization losses (the layers' `kernel_regularizer`, ...): added once per graph to the
  `REGULARIZATION_LOSSES` collection, where every tower counts them, as slim's; losses that
  depend on the inputs (activity regularizers) go to the tower's `losses` collection;
- frozen layers (`layer.trainable = False`, also when set after the variables were made): their
  variables are taken out of the graph's `TRAINABLE_VARIABLES`, so they get no gradient and
  no update, and their batch-norm statistics stay as they are.
"""
import weakref

from towers.compat import tf

# The graph each model has put its regularization losses into, so that a second tower (or a
# second call) does not count them twice.
_REGULARIZED_IN = weakref.WeakKeyDictionary()


def call_in_tower(model, inputs, training=True):
    """Calls a tf_keras model in the current tower.

    The model is built once, outside or in the first tower, and shared by object, not by
    `variable_scope` reuse. Its variables are created on the parameter device by the towers'
    device function on the first call (for a model built outside, where it was built); its
    batch-norm updates for these inputs are added to the `UPDATE_OPS` collection under the
    current name scope (so `build_towers` runs tower 0's, as for slim); its regularization
    losses are added once to the `REGULARIZATION_LOSSES` collection (so every tower counts them,
    as for slim); frozen (`trainable=False`) layers simply have no trainable variables.

    Args:
      model: a `keras.Model` (or layer) of `towers.compat.keras`.
      inputs: what the model takes: a tensor, e.g. images [B, H, W, C] of this tower's shard,
        or a structure of tensors.
      training: passed to the model: batch statistics and dropout when True.

    Returns:
      The model's outputs for `inputs`, e.g. class probabilities [B, classes].
    """
    outputs = model(inputs, training=training)
    flat_inputs = tf.nest.flatten(inputs)
    for update in model.get_updates_for(flat_inputs):
        tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, update)
    for loss in model.get_losses_for(flat_inputs):
        tf.add_to_collection(tf.GraphKeys.LOSSES, loss)
    graph = tf.get_default_graph()
    if _REGULARIZED_IN.get(model) is not graph:
        for loss in model.get_losses_for(None):
            tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, loss)
        _REGULARIZED_IN[model] = graph
    _untrain_frozen_variables(model)
    return outputs


def _untrain_frozen_variables(model):
    """Takes the variables of the model's frozen layers out of `TRAINABLE_VARIABLES`.

    Keras makes a layer's variables trainable when the layer is trainable at the time it builds;
    freezing it afterwards (as fine-tuning does) changes `model.trainable_weights` but not the
    graph's collection, which is what the towers' objectives differentiate.
    """
    trainable = tf.get_collection_ref(tf.GraphKeys.TRAINABLE_VARIABLES)
    frozen = {id(v) for v in model.non_trainable_weights}
    trainable[:] = [v for v in trainable if id(v) not in frozen]


class SharedModel:
    """A Keras model made on its first call in each graph and shared by every tower after it.

    Sonnet-style: the constructor holds only the function that makes the model; calling the
    object in a tower (tower 0 first) makes the model there, so that its variables land on the
    parameter device, and calls it with `call_in_tower`. The model is made outside the tower's
    name scope, so its variables are named as in a model made anywhere else
    (`conv2d/kernel`, not `tower_0/conv2d/kernel`) and a checkpoint restores into an evaluation
    model made by the same function.

    Attributes:
      model: the model of the newest graph, or None before the first call.
    """

    def __init__(self, build_fn):
        """Args:
          build_fn: a function of no arguments returning a new, built `keras.Model` (e.g. one
            made with the functional API).
        """
        self._build_fn = build_fn
        self._graph = None
        self.model = None

    def __call__(self, inputs, training=True):
        """`call_in_tower(model, inputs, training)`, making the model first in a new graph."""
        graph = tf.get_default_graph()
        if self._graph is not graph:
            # The device function of the tower stays in force; only the name scope is left.
            with graph.name_scope(None):
                self.model = self._build_fn()
            self._graph = graph
        return call_in_tower(self.model, inputs, training)
