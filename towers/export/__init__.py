"""A way out of TF1: a trained network written as a SavedModel that plain TensorFlow 2 loads and
serves, and, where the network is a Keras model, its Keras weights and a TF2 checkpoint.

    serving = registry.serving('cifar10').serving(checkpoint)     # what the model serves
    signature = export.save(serving, checkpoint, '/tmp/cifar10_export')
    # in any TensorFlow 2 program, no towers:
    predict = tf.saved_model.load('/tmp/cifar10_export').signatures['serving_default']
    outputs = predict(images=tf.constant(uint8_images))        # {'probabilities', 'classes'}

`saved_model` writes it: a `Serving` (a model's inference graph from the user's placeholders,
what to restore) restored from a checkpoint through `towers.evaluation.Restored`, then written
with TensorFlow's SavedModel builder under one `serving_default` signature, in a directory that
appears whole or not at all. It knows no model: each model says what it serves in its
`models/<name>/serving.py`, and `towers.legacy.export` serves any TF1 program's graph.
`keras_weights.py` is the small process of plain TensorFlow 2 that writes a Keras model's
`.weights.h5` (Keras writes them from eager variables only).
"""
from towers.export.saved_model import Serving, Signature, classified, save

__all__ = ['Serving', 'Signature', 'classified', 'save']
