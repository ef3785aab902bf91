"""`horovod.tensorflow.keras.callbacks` for graph-mode `model.fit`, as Horovod 0.16-0.28 gave
them: the broadcast of rank 0's variables, the average of the epoch's metrics over the ranks,
and the learning-rate schedules of large-batch training (Goyal et al., "Accurate, Large
Minibatch SGD", 2017): a warmup from `initial_lr / size` to `initial_lr`, and multipliers by
epoch. Their ops run in the Keras backend's session.
"""
from towers.compat import keras, tf
from towers.legacy.horovod import collectives, ranks
from towers.legacy.horovod import optimizer as tf1_optimizer


def run_in_keras_session(fetch):
    """The value of `fetch` (a tensor; an op: None) in the Keras backend's session, the one
    `tf.keras.backend.get_session()` gives the program, its Keras variables initialised."""
    return keras.backend.batch_get_value([fetch])[0]


class BroadcastGlobalVariablesCallback(keras.callbacks.Callback):
    """Sets every rank's model weights to rank `root_rank`'s when training begins, as Horovod
    <= 0.18 did, so that every rank's first step starts from them; and every global variable
    to rank `root_rank`'s after the first batch, as Horovod >= 0.19 did, so that the
    optimizer's variables, which `fit` may make only in its first step, follow too (restored
    by rank 0 alone, say)."""

    def __init__(self, root_rank, device='', local_variables=None):
        """
        Args:
          root_rank: the rank whose values every rank takes.
          device: the device of the broadcasts.
          local_variables: a variable or variables that keep each rank's own value.

        Raises:
          ValueError: `local_variables` holds something that is not a `tf.Variable`.
        """
        super().__init__()
        self.root_rank = root_rank
        self.device = device
        self.broadcast_done = False
        self._weights_broadcast = False
        self._local_vars = []
        # Keras's variables are resource variables, which tf.compat.v1.Variable is not a base of.
        if isinstance(local_variables, tf.compat.v2.Variable):
            local_variables = [local_variables]
        for var in local_variables or ():
            if not isinstance(var, tf.compat.v2.Variable):
                raise ValueError('BroadcastGlobalVariablesCallback(local_variables=...): %r is '
                                 'not a tf.Variable' % (var,))
            self.register_local_var(var)

    def register_local_var(self, var):
        """Leaves `var` out of the broadcasts."""
        self._local_vars.append(var)

    def _broadcast(self, variables):
        shared = [var for var in variables if not any(var is own for own in self._local_vars)]
        with tf.device(self.device):
            run_in_keras_session(tf1_optimizer.broadcast_variables(shared, self.root_rank))

    def on_train_begin(self, logs=None):
        if not self._weights_broadcast:
            self._broadcast(self.model.weights)
            self._weights_broadcast = True

    def on_batch_end(self, batch, logs=None):
        if not self.broadcast_done:
            self._broadcast(tf.global_variables())
            self.broadcast_done = True


class MetricAverageCallback(keras.callbacks.Callback):
    """Replaces each metric of the epoch's logs (`loss`, `val_loss`, ...) by its average over
    the ranks, for the callbacks after it in the list (`ReduceLROnPlateau`, `TensorBoard`,
    `ModelCheckpoint`); every rank must log the same metrics."""

    def __init__(self, device=''):
        """
        Args:
          device: the device of the reductions.
        """
        super().__init__()
        self.device = device
        # metric name -> (a variable holding this rank's value, its average over the ranks)
        self._averages = {}

    def _average(self, metric, value):
        if metric not in self._averages:
            with tf.name_scope('MetricAverageCallback'):
                var = keras.backend.variable(value, name=metric)
                self._averages[metric] = var, collectives.allreduce(
                    var, device_dense=self.device)
        var, average = self._averages[metric]
        keras.backend.set_value(var, value)
        return run_in_keras_session(average)

    def on_epoch_end(self, epoch, logs=None):
        # Every rank reduces in the same order, by name; in another, each would wait for
        # the others in a different reduction.
        for metric in sorted(logs or {}):
            logs[metric] = self._average(metric, logs[metric])


class LearningRateScheduleCallback(keras.callbacks.Callback):
    """Sets the optimizer's learning rate to `initial_lr * multiplier(epoch)` in the epochs
    [start_epoch, end_epoch): with `staircase`, at each epoch's first batch, of the epoch's
    number; else at every batch, of the fractional epoch `epoch + batch / steps_per_epoch`.
    The epoch's logs gain the learning rate as 'lr'.

    A number `multiplier` m is the schedule m ** (epoch - start_epoch) (Horovod >= 0.21). As in
    Horovod <= 0.20, `initial_lr` may be left out: it is then the optimizer's learning rate when
    training begins, and a number `multiplier` is the constant factor m from `start_epoch` on.

    With `momentum_correction`, an optimizer's `momentum` is scaled by new_lr / old_lr for the
    batch in which the learning rate changes, and restored after it.
    """

    def __init__(self, initial_lr=None, multiplier=None, start_epoch=0, end_epoch=None,
                 staircase=True, momentum_correction=True, steps_per_epoch=None):
        """
        Args:
          initial_lr: the learning rate the multiplier multiplies (see the class).
          multiplier: a number, or a function of the (fractional) epoch.
          start_epoch: the first epoch the schedule sets.
          end_epoch: the epoch it stops at (not set); None: it never stops.
          staircase: set the rate at each epoch's first batch only, for its whole number.
          momentum_correction: scale the momentum with the learning rate's change.
          steps_per_epoch: the batches of an epoch, for `staircase=False`; by default fit's
            `steps`, or its samples // batch_size.

        Raises:
          TypeError: no `multiplier`.
        """
        super().__init__()
        if multiplier is None:
            raise TypeError('%s needs a multiplier: a number or a function of the epoch'
                            % type(self).__name__)
        self.initial_lr = initial_lr
        self.start_epoch = start_epoch
        self.end_epoch = end_epoch
        self.staircase = staircase
        self.momentum_correction = momentum_correction
        self.steps_per_epoch = steps_per_epoch
        self.current_epoch = None
        self.restore_momentum = None
        if callable(multiplier):
            self.multiplier = multiplier
        elif initial_lr is None:
            self.staircase = True
            self.multiplier = lambda epoch: multiplier
        else:
            self.multiplier = lambda epoch: multiplier ** (epoch - start_epoch)

    def _steps_of_fit(self):
        if self.params.get('steps'):
            return self.params['steps']
        if self.params.get('samples') and self.params.get('batch_size'):
            return self.params['samples'] // self.params['batch_size']
        raise ValueError('%s(staircase=False) cannot tell the steps of an epoch from fit: give '
                         'steps_per_epoch' % type(self).__name__)

    def _set_learning_rate(self, epoch):
        optimizer = self.model.optimizer
        old_lr = keras.backend.get_value(optimizer.lr)
        new_lr = self.initial_lr * self.multiplier(epoch)
        keras.backend.set_value(optimizer.lr, new_lr)
        if self.momentum_correction and hasattr(optimizer, 'momentum'):
            self.restore_momentum = keras.backend.get_value(optimizer.momentum)
            keras.backend.set_value(optimizer.momentum,
                                    self.restore_momentum * new_lr / old_lr)

    def on_train_begin(self, logs=None):
        if self.initial_lr is None:
            self.initial_lr = keras.backend.get_value(self.model.optimizer.lr)
        if not self.staircase and not self.steps_per_epoch:
            self.steps_per_epoch = self._steps_of_fit()

    def on_epoch_begin(self, epoch, logs=None):
        self.current_epoch = epoch

    def on_batch_begin(self, batch, logs=None):
        if self.current_epoch < self.start_epoch or (
                self.end_epoch is not None and self.current_epoch >= self.end_epoch):
            return
        if not self.staircase:
            self._set_learning_rate(self.current_epoch + float(batch) / self.steps_per_epoch)
        elif batch == 0:
            self._set_learning_rate(self.current_epoch)

    def on_batch_end(self, batch, logs=None):
        if self.restore_momentum:
            keras.backend.set_value(self.model.optimizer.momentum, self.restore_momentum)
            self.restore_momentum = None

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs['lr'] = keras.backend.get_value(self.model.optimizer.lr)


class LearningRateWarmupCallback(LearningRateScheduleCallback):
    """Raises the learning rate from `initial_lr / size` to `initial_lr` over the first
    `warmup_epochs` epochs, at every batch:

        lr = initial_lr / size * (e * (size - 1) / warmup_epochs + 1),
        e = epoch + (batch + 1) / steps_per_epoch,

    so that it is initial_lr at the end of the warmup's last batch (and stays so).
    """

    def __init__(self, initial_lr=None, warmup_epochs=5, momentum_correction=True,
                 steps_per_epoch=None, verbose=0):
        """
        Args:
          initial_lr: the learning rate at the end of the warmup; None (Horovod <= 0.20): the
            optimizer's when training begins.
          warmup_epochs: the epochs of the warmup.
          momentum_correction: scale the momentum with the learning rate's change.
          steps_per_epoch: the batches of an epoch; by default fit's `steps`, or its
            samples // batch_size.
          verbose: 1: rank 0 prints the learning rate reached at the end of the warmup.
        """
        def multiplier(epoch):
            size = ranks.world().size
            epoch += 1.0 / self.steps_per_epoch
            return 1.0 / size * (epoch * (size - 1) / warmup_epochs + 1)
        super().__init__(initial_lr, multiplier, start_epoch=0, end_epoch=warmup_epochs,
                         staircase=False, momentum_correction=momentum_correction,
                         steps_per_epoch=steps_per_epoch)
        self.verbose = verbose

    def on_epoch_end(self, epoch, logs=None):
        super().on_epoch_end(epoch, logs)
        if epoch == self.end_epoch - 1 and self.verbose > 0 and ranks.world().rank == 0:
            print('\nEpoch %d: finished gradual learning rate warmup to %g.'
                  % (epoch + 1, keras.backend.get_value(self.model.optimizer.lr)))
