"""Stand-in for the TF1 multi-GPU SegDecNet's `segdec_train.py`, written for the tests of
`scripts/regress_segdec.py --original_dir` in that version's module layout and TF1 idioms (it
is not the original's code): its flags, `tower_loss`, `average_gradients` and
`assign_to_device`, which the regression runs in that version's `build_model` tower loop; no
training loop of its own."""
import tensorflow as tf

import segdec_model

FLAGS = tf.app.flags.FLAGS
tf.app.flags.DEFINE_integer('num_gpus', 2, 'How many GPUs to use.')
tf.app.flags.DEFINE_float('learning_rate', 0.001, 'Learning rate of gradient descent.')

TOWER_NAME = 'tower'
PS_OPS = ['Variable', 'VariableV2', 'AutoReloadVariable']


def assign_to_device(device, ps_device='/cpu:0'):
    def _assign(op):
        node_def = op if isinstance(op, tf.NodeDef) else op.node_def
        return ps_device if node_def.op in PS_OPS else device
    return _assign


def tower_loss(scope, images, pixel_labels, labels):
    """The tower's (total, pixel, class) losses."""
    features, pixel_logits = segdec_model.SegmentNet(images)
    class_logits = segdec_model.DecisionNet(features, tf.sigmoid(pixel_logits))
    pixel_loss, class_loss = segdec_model.loss(pixel_logits, class_logits, pixel_labels,
                                               labels)
    total_loss = tf.add_n(tf.get_collection('losses', scope), name='total_loss')
    return total_loss, pixel_loss, class_loss


def average_gradients(tower_grads):
    average_grads = []
    for grad_and_vars in zip(*tower_grads):
        grads = [tf.expand_dims(g, 0) for g, _ in grad_and_vars]
        grad = tf.reduce_mean(tf.concat(axis=0, values=grads), 0)
        average_grads.append((grad, grad_and_vars[0][1]))
    return average_grads
