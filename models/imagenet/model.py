"""ResNet v1 (50, 101 or 152 layers) from tf-slim, with the losses of the reference recipe.

The network is tf-slim's own `nets.resnet_v1.resnet_v1_<depth>` under its `resnet_arg_scope`,
so every variable has tf-slim's name and shape and the published tf-slim checkpoints
(`resnet_v1_50_2016_08_28.tar.gz`, ...) restore into it:

    resnet_v1_50/conv1/weights [7, 7, 3, 64]        resnet_v1_50/conv1/BatchNorm/{gamma,beta,
    resnet_v1_50/block1/unit_1/bottleneck_v1/...       moving_mean,moving_variance} [64]
    resnet_v1_50/logits/weights [1, 1, 2048, 1000]  resnet_v1_50/logits/biases [1000]

Its 1000 logits are ImageNet's classes in the order of the TFRecord labels 1..1000 (class
index = label - 1), as in the checkpoints. Batch norm follows the reference: moving averages
with momentum 0.9, epsilon 1e-5, and the batch's statistics while training.

The loss (`tower_fn`) is the reference's: softmax cross entropy against labels smoothed by 0.1,
plus 1e-4 times the sum of `tf.nn.l2_loss` of every convolution and dense kernel (the
`weights` variables: no biases, no batch-norm parameters), both in the `losses` collection.
"""
from models.datasets.imagenet import reader
from models.imagenet import DEPTHS, LABEL_SMOOTHING, WEIGHT_DECAY
from towers.compat import slim, tf
from towers.errors import TowersError

NUM_CLASSES = 1000
BATCH_NORM_DECAY = 0.9
BATCH_NORM_EPSILON = 1e-5
# The kernels of tf-slim's convolution and fully connected layers, which weight decay covers.
KERNEL_NAME = 'weights'
# The `losses` collection each tower's total loss sums.
LOSSES = 'losses'


def classification_loss(logits, labels, label_smoothing):
    """Mean softmax cross entropy against smoothed one-hot labels, added to `losses`.

    The target of class c is (1 - label_smoothing) + label_smoothing / K, of every other class
    label_smoothing / K, with K classes.

    Args:
      logits: [b, K].
      labels: [b] int class indices.
      label_smoothing: in [0, 1).

    Returns:
      The scalar loss.
    """
    one_hot = tf.one_hot(labels, logits.shape.as_list()[-1], dtype=logits.dtype)
    return tf.losses.softmax_cross_entropy(one_hot, logits, label_smoothing=label_smoothing,
                                           scope='cross_entropy')


def kernels(scope):
    """The trainable kernels (`.../weights`) of the variables under variable scope `scope`."""
    prefix = scope.rstrip('/') + '/'
    return [v for v in tf.trainable_variables()
            if v.name.startswith(prefix) and v.name.split(':')[0].split('/')[-1] == KERNEL_NAME]


def kernel_l2_loss(variables, weight_decay):
    """`weight_decay` times the sum of `tf.nn.l2_loss` (half the sum of squares) of
    `variables`, added to `losses` under the name 'weight_decay'.

    Args:
      variables: the kernels, e.g. `kernels(scope)`; not empty.
      weight_decay: the factor.

    Returns:
      The scalar loss.
    """
    loss = tf.multiply(tf.add_n([tf.nn.l2_loss(v) for v in variables]), weight_decay,
                       name='weight_decay')
    tf.add_to_collection(LOSSES, loss)
    return loss


class ResNet:
    """tf-slim's ResNet v1 of one depth; the constructor holds only the configuration.

    Calling it builds the network under variable scope `scope`; later calls share its
    variables.
    """

    def __init__(self, depth=50, label_smoothing=LABEL_SMOOTHING, weight_decay=WEIGHT_DECAY,
                 batch_norm_decay=BATCH_NORM_DECAY):
        """Args:
          depth: 50, 101 or 152.
          label_smoothing: of the training loss.
          weight_decay: the factor of the kernels' L2 loss.
          batch_norm_decay: of the batch-norm moving statistics (0: each training step's
            batch statistics).
        """
        if depth not in DEPTHS:
            raise ValueError('ResNet depth %r; expected one of %s' % (depth, DEPTHS))
        self.depth = depth
        self.label_smoothing = label_smoothing
        self.weight_decay = weight_decay
        self.batch_norm_decay = batch_norm_decay

    @property
    def scope(self):
        """The variable scope of the network, tf-slim's: 'resnet_v1_<depth>'."""
        return 'resnet_v1_%d' % self.depth

    def __call__(self, images, is_training):
        """Builds the network.

        Args:
          images: [b, S, S, 3] float32, normalised per channel; S >= 32.
          is_training: batch norm on the batch's statistics (and its moving averages updated
            through `UPDATE_OPS`), else on the moving averages.

        Returns:
          logits: [b, NUM_CLASSES].
        """
        network = getattr(slim.nets.resnet_v1, self.scope)
        # The decay is left to `kernel_l2_loss`, in the `losses` collection, rather than in
        # tf-slim's regularisation losses, which MirroredStrategy's replicas cannot share.
        arg_scope = slim.nets.resnet_v1.resnet_arg_scope(
            weight_decay=0.0, batch_norm_decay=self.batch_norm_decay,
            batch_norm_epsilon=BATCH_NORM_EPSILON)
        with slim.arg_scope(arg_scope):
            logits, _ = network(images, NUM_CLASSES, is_training=is_training,
                                reuse=tf.AUTO_REUSE, scope=self.scope)
        return tf.squeeze(logits, [1, 2], name='logits')

    def tower_fn(self, batch):
        """One tower of training, as `towers.build_towers` calls it.

        Args:
          batch: (images [b, S, S, 3] float32, labels [b] int32 class indices).

        Returns:
          A dict: 'logits' [b, NUM_CLASSES], 'cross_entropy' and 'weight_decay' (scalars).
        """
        images, labels = batch
        logits = self(images, is_training=True)
        return {'logits': logits,
                'cross_entropy': classification_loss(logits, labels, self.label_smoothing),
                'weight_decay': kernel_l2_loss(kernels(self.scope), self.weight_decay)}

    def evaluation(self, crops, labels):
        """Top-1 and top-5 hits of the centre crop and, given ten crops, of their mean logits.

        Args:
          crops: [b, k, S, S, 3] float32 from `reader.evaluation_input`: k = 1 (the centre crop)
            or 10 (the centre crop at `reader.CENTRE_CROP`).
          labels: [b] int32.

        Returns:
          A dict of [b] bool: 'top1', 'top5' (centre crop) and, when k = 10, 'top1_10crop'
          and 'top5_10crop'.
        """
        shape = tf.shape(crops)
        logits = self(tf.reshape(crops, tf.concat([[-1], shape[2:]], 0)), is_training=False)
        logits = tf.reshape(logits, [shape[0], shape[1], NUM_CLASSES])
        hits = {}
        views = {'': logits[:, reader.CENTRE_CROP]}
        if crops.shape.as_list()[1] > 1:
            views['_10crop'] = tf.reduce_mean(logits, axis=1)
        for suffix, view in views.items():
            for k in (1, 5):
                hits['top%d%s' % (k, suffix)] = tf.nn.in_top_k(view, labels, k)
        return hits


def depth_of_checkpoint(variable_names):
    """The depth of the ResNet whose variables a checkpoint holds.

    Args:
      variable_names: the checkpoint's variable names.

    Returns:
      50, 101 or 152, or None when none of the networks is there.
    """
    for depth in DEPTHS:
        if 'resnet_v1_%d/logits/weights' % depth in variable_names:
            return depth
    return None


def checkpoint_depth(checkpoint):
    """The depth of the ResNet the checkpoint prefix `checkpoint` holds.

    Raises:
      TowersError: naming `checkpoint`, when it holds no ResNet v1 of `DEPTHS`.
    """
    depth = depth_of_checkpoint([name for name, _ in tf.train.list_variables(checkpoint)])
    if depth is None:
        raise TowersError('checkpoint %s holds no ResNet v1 (no resnet_v1_<%s>/logits/weights)'
                          % (checkpoint, '|'.join(str(d) for d in DEPTHS)))
    return depth
