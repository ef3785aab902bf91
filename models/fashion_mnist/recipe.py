"""How the Fashion-MNIST example trains its Keras model: Adam, learning rate 0.001.

The reference compiled the model with `tf.train.AdamOptimizer(learning_rate=0.001)` and a
constant rate; its batch of 512 is per replica, so the global batch grows with the towers.
"""
import numpy as np

from models.fashion_mnist import model
from towers.training.assembly import Recipe
from towers.compat import tf
from towers.replication.keras_models import SharedModel

LEARNING_RATE = 0.001


class FashionMnistRecipe(Recipe):
    """The reference's training of `model.build_model`, one Keras model shared by the towers.

    Attributes:
      shared_model: the `SharedModel` every tower calls; its `model` is the Keras model of the
        graph last assembled.
      keras_loss: the loss as Keras names it, for a Keras `fit` of the same model (the
        benchmark's comparison).
    """
    variables_shared_by_object = True
    keras_loss = 'categorical_crossentropy'

    def __init__(self, learning_rate=LEARNING_RATE):
        self._learning_rate = learning_rate
        self.shared_model = SharedModel(model.build_model)

    def learning_rate(self, global_step, num_towers):
        return self._learning_rate

    def optimizer(self, learning_rate):
        return tf.train.AdamOptimizer(learning_rate)

    def tower_fn(self, batch):
        return model.tower_fn(self.shared_model, batch)

    def validation_outputs(self, batch):
        """The predicted and true classes [b] of a batch of images and one-hot labels."""
        images, labels = batch
        return {'predicted': tf.argmax(self.shared_model(images, training=False), 1),
                'label': tf.argmax(labels, 1)}

    def validation_metrics(self, outputs):
        """The accuracy, as `eval_fashion_mnist.py` reports it."""
        return {'accuracy': float(np.mean(outputs['predicted'] == outputs['label']))}
