"""A binary segmentation network: the ResNet-34 encoder, an architecture's decoder and head.

    net = SegmentationNet('unet')
    outputs = net(images, is_training=True)         # {'logits', 'mask'}, [b, H, W, 1]
    loss = net.loss(outputs, masks)                 # binary cross entropy, into `losses`

As the reference trains it (`segmentation_models`' Unet, Linknet and FPN): sigmoid masks,
binary cross entropy averaged over the pixels.
"""
from models.side_by_side import architectures, resnet34
from towers.compat import tf


class SegmentationNet(object):
    """One architecture on the ResNet-34 encoder; the constructor only holds the configuration.

    Calling the object builds the network in the current variable scope; later calls in the
    same scope with `reuse` share its variables, as `towers.build_towers` arranges for towers.
    """

    def __init__(self, architecture):
        """Args:
          architecture: a name of `architectures.names()`, e.g. 'unet'.
        """
        self.architecture = architecture
        self._decoder = architectures.get(architecture).decoder

    def __call__(self, images, is_training):
        """Builds the network on `images`.

        Args:
          images: [b, H, W, 3] float32 in [0, 1]; H and W multiples of 32.
          is_training: Python bool: batch statistics and their moving-average updates (in
            `UPDATE_OPS`) when True, the moving statistics when False.

        Returns:
          A dict: 'logits' [b, H, W, 1] and 'mask' [b, H, W, 1], their sigmoid.
        """
        output, skips = resnet34.encoder(images, is_training)
        logits = self._decoder(output, skips, is_training)
        return {'logits': logits, 'mask': tf.sigmoid(logits, name='mask')}

    @staticmethod
    def loss(outputs, masks):
        """Adds the binary cross entropy of the masks to the `losses` collection.

        Args:
          outputs: the dict returned by calling the network.
          masks: [b, H, W, 1] float32 in {0, 1}, the true masks.

        Returns:
          The mean over pixels of the sigmoid cross entropy (a scalar).
        """
        return tf.losses.sigmoid_cross_entropy(masks, outputs['logits'], scope='bce')

    def tower_fn(self, batch):
        """The network of one tower in training mode, as `towers.build_towers` calls it.

        Args:
          batch: (images [b, H, W, 3] float32 in [0, 1], masks [b, H, W, 1] float32).

        Returns:
          The network's outputs plus 'loss', the binary cross entropy.
        """
        images, masks = batch
        outputs = self(images, is_training=True)
        outputs['loss'] = self.loss(outputs, masks)
        return outputs
