"""How the reference trains the VGG16 transfer model: Adam at a fixed learning rate on the mean
cross entropy of each tower's images; no schedule, no weight decay, no moving averages."""
import numpy as np

from models.image_folder import LEARNING_RATE
from towers.training.assembly import Recipe
from towers.compat import tf

# Keras' Adam, which the reference used: epsilon 1e-7 (and `LEARNING_RATE`).
ADAM_EPSILON = 1e-7


class Vgg16TransferRecipe(Recipe):
    """The training of a `models.image_folder.model.Vgg16Transfer`.

    Attributes:
      network: the `Vgg16Transfer`.
      rate: Adam's learning rate.
    """
    variables_shared_by_object = True

    def __init__(self, network, rate=LEARNING_RATE):
        self.network = network
        self.rate = rate

    def learning_rate(self, global_step, num_towers):
        return self.rate

    def optimizer(self, learning_rate):
        return tf.train.AdamOptimizer(learning_rate, epsilon=ADAM_EPSILON)

    def tower_fn(self, batch):
        return self.network.tower_fn(batch)

    def initial_values(self):
        return self.network.initial_values()

    def validation_outputs(self, batch):
        """The predicted and true classes [b] of a batch of images and labels."""
        images, labels = batch
        return {'predicted': tf.argmax(self.network(images, training=False), 1,
                                        output_type=tf.int32),
                'label': labels}

    def validation_metrics(self, outputs):
        """The accuracy, as `eval_image_folder.py` reports it."""
        return {'accuracy': float(np.mean(outputs['predicted'] == outputs['label']))}
