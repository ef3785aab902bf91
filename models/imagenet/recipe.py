"""How the reference (Apm5's ImageNet_Tensorflow2.0) trains ResNet-50 on ImageNet, on towers.

SGD with momentum 0.9; the learning rate 0.05 for a global batch of 128 (scaled linearly with
the global batch unless given), rising linearly from 0 over the first epoch, then following a
cosine down to `alpha` times its peak at the end of the last of 50 epochs. An epoch is
`examples_per_epoch // global batch` steps (10,009 for ImageNet at 128, as the reference counts
them), and the schedule is a function of the global step alone, so a run resumed from a
checkpoint continues it exactly. The loss (label smoothing, kernels' L2) is `model.ResNet`'s.
"""
import collections
import math

import numpy as np

from models.imagenet import (BASE_BATCH, BASE_LEARNING_RATE, COSINE_ALPHA, EPOCHS, MOMENTUM,
                             WARMUP_EPOCHS)
from towers.training.assembly import Recipe
from towers.compat import tf
from towers.errors import TowersError


class Schedule(collections.namedtuple('Schedule', ['peak', 'warmup_steps', 'total_steps',
                                                   'alpha'])):
    """Linear warmup, then cosine decay.

    Attributes:
      peak: the learning rate at the end of the warmup.
      warmup_steps: steps of the warmup: the rate at step s < warmup_steps is
        peak * s / warmup_steps.
      total_steps: where the cosine ends: at step s >= warmup_steps the rate is
        peak * ((1 - alpha) * (1 + cos(pi * p)) / 2 + alpha), with
        p = min(s - warmup_steps, d) / d and d = total_steps - warmup_steps (at least 1).
      alpha: the final rate as a fraction of the peak.
    """
    __slots__ = ()

    @classmethod
    def from_epochs(cls, examples_per_epoch, global_batch, epochs=EPOCHS,
                    warmup_epochs=WARMUP_EPOCHS, alpha=COSINE_ALPHA, learning_rate=None):
        """The schedule of `epochs` epochs of `examples_per_epoch` at `global_batch` per step.

        Args:
          examples_per_epoch: examples of the training split.
          global_batch: examples per step, over every tower (and synchronous worker).
          epochs, warmup_epochs: lengths in epochs (fractions allowed).
          alpha: the final rate as a fraction of the peak.
          learning_rate: the peak; BASE_LEARNING_RATE * global_batch / BASE_BATCH by default.

        Raises:
          TowersError: the global batch is larger than an epoch.
        """
        steps_per_epoch = examples_per_epoch // global_batch
        if not steps_per_epoch:
            raise TowersError('the global batch of %d examples is larger than the %d examples '
                              'of an epoch; use a smaller --batch_size or fewer towers'
                              % (global_batch, examples_per_epoch))
        if learning_rate is None:
            learning_rate = BASE_LEARNING_RATE * global_batch / BASE_BATCH
        return cls(learning_rate, int(warmup_epochs * steps_per_epoch),
                   int(epochs * steps_per_epoch), alpha)

    def __call__(self, global_step):
        """The learning rate at `global_step` (a scalar tensor), float32."""
        step = tf.cast(global_step, tf.float32)
        warmup = self.peak * step / max(self.warmup_steps, 1)
        decay_steps = max(self.total_steps - self.warmup_steps, 1)
        progress = tf.minimum(step - self.warmup_steps, decay_steps) / decay_steps
        cosine = self.peak * ((1 - self.alpha) * 0.5 * (1 + tf.cos(math.pi * progress))
                              + self.alpha)
        return tf.where_v2(step < self.warmup_steps, warmup, cosine)


class ResNetRecipe(Recipe):
    """The reference's training of a `model.ResNet`.

    Attributes:
      net: the `model.ResNet`.
      batch_size: examples per tower.
      examples_per_epoch, epochs, warmup_epochs, alpha, learning_rate: of the `Schedule`.
      momentum: of the SGD.
      nesterov: Nesterov momentum (an earlier version of the reference used it).
    """

    def __init__(self, net, batch_size, examples_per_epoch, epochs=EPOCHS,
                 warmup_epochs=WARMUP_EPOCHS, alpha=COSINE_ALPHA, learning_rate=None,
                 momentum=MOMENTUM, nesterov=False):
        self.net = net
        self.batch_size = batch_size
        self.examples_per_epoch = examples_per_epoch
        self.epochs = epochs
        self.warmup_epochs = warmup_epochs
        self.alpha = alpha
        self.peak_learning_rate = learning_rate
        self.momentum = momentum
        self.nesterov = nesterov

    def schedule(self, num_towers):
        """The `Schedule` when `num_towers` towers of `batch_size` make one update."""
        return Schedule.from_epochs(self.examples_per_epoch, self.batch_size * num_towers,
                                    self.epochs, self.warmup_epochs, self.alpha,
                                    self.peak_learning_rate)

    def learning_rate(self, global_step, num_towers):
        return self.schedule(num_towers)(global_step)

    def optimizer(self, learning_rate):
        return tf.train.MomentumOptimizer(learning_rate, self.momentum,
                                          use_nesterov=self.nesterov)

    def tower_fn(self, batch):
        return self.net.tower_fn(batch)

    def validation_outputs(self, batch):
        """Top-1 and top-5 hits [b] of a batch of `reader.evaluation_dataset` (centre crops)."""
        return self.net.evaluation(*batch)

    def validation_metrics(self, outputs):
        """Top-1 and top-5 of the centre crops, as `eval_imagenet.py` reports them."""
        return {name: float(np.mean(hits)) for name, hits in outputs.items()}
