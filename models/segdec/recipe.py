"""How SegDecNet trains: plain gradient descent, and the paper's two-stage schedule.

The paper trains the segmentation net on the pixel loss first, then the decision net on the
class loss with the segmentation net frozen (batch norm included). Each stage is its own
graph: `SegDecRecipe(SegDecNet(frozen_segment=True), ...)` for the second.
"""
import math

from models.segdec import DECISION_EPOCHS, LEARN_RATE, SEGMENT_EPOCHS, TRAIN_MODES, model
from towers.errors import TowersError
from towers.evaluation.metrics import detection_metrics
from towers.training.assembly import Recipe


class SegDecRecipe(Recipe):
    """SegDecNet's three train ops ('total', 'segment', 'decision') at a fixed learning rate.

    Each op runs, before its update, tower 0's batch-norm updates of the variables it trains
    and no others.
    """
    objectives = model.OBJECTIVES

    def __init__(self, net, learning_rate=LEARN_RATE):
        """Args:
          net: a `model.SegDecNet`.
          learning_rate: of plain gradient descent, a float or a scalar tensor.
        """
        self.net = net
        self._learning_rate = learning_rate

    def learning_rate(self, global_step, num_towers):
        return self._learning_rate

    def tower_fn(self, batch):
        return self.net.tower_fn(batch)

    def validation_outputs(self, batch):
        """The defect scores and labels [b] of a batch of images [b, H, W, 1] and labels."""
        images, labels = batch
        return {'score': self.net(images, is_training=False)['score'], 'label': labels}

    def validation_metrics(self, outputs):
        """The average precision, as `eval_segdec.py` reports it."""
        return {'average_precision': detection_metrics(outputs['label'],
                                                       outputs['score'])['average_precision']}


def stages(train_mode, num_images, global_batch, epochs=None, max_steps=None,
           decision_epochs=DECISION_EPOCHS, decision_steps=None):
    """The stages of a training: (objective, steps) for each, in order.

    Args:
      train_mode: 'two_stage' (segment, then decision with the segmentation frozen), or the
        one objective to train ('segment', 'decision', 'total').
      num_images: images of the training split: one epoch.
      global_batch: images per step.
      epochs, max_steps: the length of the first (or only) stage, in epochs or steps; the
        defaults are `SEGMENT_EPOCHS` (`DECISION_EPOCHS` for 'decision').
      decision_epochs, decision_steps: the length of the decision stage of 'two_stage'.

    Returns:
      A list of (objective, steps).
    """
    if train_mode not in TRAIN_MODES:
        raise TowersError('unknown SegDecNet train mode %r; expected one of %s'
                          % (train_mode, ', '.join(TRAIN_MODES)))

    def stage(objective, stage_epochs, fixed_steps):
        return objective, fixed_steps or max(1, int(math.ceil(stage_epochs * num_images
                                                              / global_batch)))

    if train_mode == 'two_stage':
        return [stage('segment', epochs or SEGMENT_EPOCHS, max_steps),
                stage('decision', decision_epochs, decision_steps)]
    default_epochs = DECISION_EPOCHS if train_mode == 'decision' else SEGMENT_EPOCHS
    return [stage(train_mode, epochs or default_epochs, max_steps)]
