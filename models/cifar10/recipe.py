"""How the CIFAR-10 tutorial trains its model on towers (`cifar10_multi_gpu_train.py`).

Plain gradient descent with the learning rate 0.1 decayed by 0.1 every 350 epochs (staircase),
the decay steps divided by the number of towers; a float32 `global_step` variable, as the
tutorial's checkpoints store it; moving averages (decay 0.9999) of the weights updated with
every step; the tutorial's summaries.
"""
import numpy as np

from models.cifar10 import model
from towers.training.assembly import Recipe
from towers.compat import tf


def learning_rate_decay_steps(batch_size, num_towers):
    """Steps between learning-rate decays: 350 epochs of `batch_size * num_towers` batches."""
    num_batches_per_epoch = model.NUM_EXAMPLES_PER_EPOCH_FOR_TRAIN / batch_size / num_towers
    return int(num_batches_per_epoch * model.NUM_EPOCHS_PER_DECAY)


class Cifar10Recipe(Recipe):
    """The tutorial's training of `model.tower_fn`.

    Attributes:
      batch_size: examples per tower, for the decay schedule.
      variable_averages: the `tf.train.ExponentialMovingAverage` of the trainable variables,
        once the step is assembled.
    """

    def __init__(self, batch_size=model.BATCH_SIZE):
        self.batch_size = batch_size
        self.variable_averages = None

    def create_global_step(self):
        return tf.get_variable('global_step', [], initializer=tf.constant_initializer(0),
                               trainable=False)

    def learning_rate(self, global_step, num_towers):
        return tf.train.exponential_decay(
            model.INITIAL_LEARNING_RATE, global_step,
            learning_rate_decay_steps(self.batch_size, num_towers),
            model.LEARNING_RATE_DECAY_FACTOR, staircase=True)

    def tower_fn(self, batch):
        return model.tower_fn(batch)

    def summaries(self, replicated, learning_rate):
        """Histograms of the averaged gradients and of the variables, as the tutorial's."""
        summaries = [tf.summary.histogram(var.op.name + '/gradients', grad)
                     for grad, var in replicated.grads['total']]
        return summaries + [tf.summary.histogram(var.op.name, var)
                            for var in tf.trainable_variables()]

    def once_per_step_ops(self, global_step):
        self.variable_averages = tf.train.ExponentialMovingAverage(model.MOVING_AVERAGE_DECAY,
                                                                   global_step)
        return [self.variable_averages.apply(tf.trainable_variables())]

    def validation_outputs(self, batch):
        """Whether the top logit is the label [b], of the moving averages of the weights (what
        the tutorial's evaluation restores), for a batch of `validation_input`."""
        images, labels = batch

        def averaged(getter, *args, **kwargs):
            return self.variable_averages.average(getter(*args, **kwargs))

        with tf.variable_scope(tf.get_variable_scope(), custom_getter=averaged):
            return {'in_top_1': model.evaluation(images, labels)[1]}

    def validation_metrics(self, outputs):
        """Precision @ 1, as `cifar10_eval.py` reports it."""
        return {'precision_at_1': float(np.mean(outputs['in_top_1']))}
