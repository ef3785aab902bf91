"""How the reference trains each segmentation model: Adam at a fixed learning rate of 1e-3.

The reference is TF 2 Keras code, whose Adam adds epsilon 1e-7 to the denominator (TF 1's
`AdamOptimizer` defaults to 1e-8); the Keras value is kept.
"""
from models.side_by_side import LEARNING_RATE, model
from towers.compat import tf
from towers.evaluation.metrics import segmentation_metrics
from towers.training.assembly import Recipe

ADAM_EPSILON = 1e-7


class SegmentationRecipe(Recipe):
    """Trains a `model.SegmentationNet` on its binary cross entropy with Adam."""

    def __init__(self, net, learning_rate=LEARNING_RATE):
        """Args:
          net: a `model.SegmentationNet`.
          learning_rate: Adam's learning rate, a float.
        """
        self.net = net
        self._learning_rate = learning_rate

    def learning_rate(self, global_step, num_towers):
        return self._learning_rate

    def optimizer(self, learning_rate):
        return tf.train.AdamOptimizer(learning_rate, epsilon=ADAM_EPSILON)

    def tower_fn(self, batch):
        return self.net.tower_fn(batch)

    def validation_outputs(self, batch):
        """The predicted and true masks [b, H, W] of a batch as `training_input` gives it."""
        images, masks = batch
        return {'mask': self.net(images, is_training=False)['mask'][..., 0],
                'truth': masks[..., 0]}

    def validation_metrics(self, outputs):
        """IoU over every pixel of the split, as `eval_side_by_side.py` reports it."""
        return {'iou': segmentation_metrics(outputs['truth'], outputs['mask'])['iou']}


def side_by_side(names, learning_rate=LEARNING_RATE):
    """The models `names` (of `architectures.names()`) as `towers.training.side_by_side` takes them:
    a list of (name, `SegmentationRecipe`)."""
    return [(name, SegmentationRecipe(model.SegmentationNet(name), learning_rate))
            for name in names]
