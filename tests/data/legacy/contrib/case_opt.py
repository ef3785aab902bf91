"""tf.contrib.opt's optimizers on the same small model (run_cases.py): a dense weight and an
embedding looked up sparsely, so that both the dense and the sparse (lazy) updates run; slots
and non-slot variables are compared by name and value after 3 steps."""
import numpy as np
import tensorflow as tf


def model(use_resource=False, every_row=False, scale=4.0):
    """A loss over `w` [3, 2] (dense gradient) and `emb` [5, 2] (IndexedSlices of rows 0 to 3
    with duplicates; row 4 too with `every_row`, for Adam's sparse update, which moves every
    row of the variable by the second moment the row starts with)."""
    rng = np.random.RandomState(0)
    x = tf.constant(rng.standard_normal((4, 3)).astype(np.float32))
    w = tf.get_variable('w', [3, 2], use_resource=use_resource)
    emb = tf.get_variable('emb', [5, 2], use_resource=use_resource)
    h = tf.matmul(x, w) + tf.nn.embedding_lookup(emb, [1, 3, 1, 0])
    # Gradients of a few units at least: the slots hold random values before the first step,
    # and Adagrad's and Adam's second moments stay positive only when g * g outweighs them
    # (hence also beta2 0.5 for Adam's variants).
    return (scale * tf.reduce_sum(tf.square(h - 1.0))
            + tf.reduce_sum(tf.gather(emb, [2, 4] if every_row else [2, 1]) * 5.0))


def minimizing(opt, every_row=False, **kwargs):
    """`opt.minimize` of the model's loss, updating after the forward pass: TF 1.15 left the
    order of a weight decay and the forward pass's reads of the weights to its executor."""
    loss = model(every_row=every_row)
    with tf.control_dependencies([loss]):
        return {'loss': loss, 'train_op': opt.minimize(loss, **kwargs)}


def lazy_adam():
    return minimizing(tf.contrib.opt.LazyAdamOptimizer(0.1, beta2=0.5))


def nadam():
    return minimizing(tf.contrib.opt.NadamOptimizer(0.1, beta2=0.5))


def adamax():
    return minimizing(tf.contrib.opt.AdaMaxOptimizer(0.1))


def adamw():
    return minimizing(tf.contrib.opt.AdamWOptimizer(0.05, learning_rate=0.1, beta2=0.5),
                      every_row=True)


def momentumw():
    return minimizing(tf.contrib.opt.MomentumWOptimizer(0.05, 0.01, 0.9, use_nesterov=True))


def extended_gradient_descent():
    """decay_var_list through apply_gradients: only `w` decays."""
    loss = model()
    sgdw = tf.contrib.opt.extend_with_decoupled_weight_decay(tf.train.GradientDescentOptimizer)
    opt = sgdw(weight_decay=0.2, learning_rate=0.01)
    w = [v for v in tf.global_variables() if v.op.name == 'w']
    pairs = opt.compute_gradients(loss)
    with tf.control_dependencies([loss]):
        train_op = opt.apply_gradients(pairs, decay_var_list=w)
    return {'loss': loss, 'train_op': train_op}


def extended_adam():
    """decay_var_list through minimize, as a program passed it."""
    loss = model(every_row=True)
    adamw_class = tf.contrib.opt.extend_with_decoupled_weight_decay(tf.train.AdamOptimizer)
    opt = adamw_class(weight_decay=0.2, learning_rate=0.1, beta2=0.5)
    emb = [v for v in tf.global_variables() if v.op.name == 'emb']
    with tf.control_dependencies([loss]):
        return {'loss': loss, 'train_op': opt.minimize(loss, decay_var_list=emb)}


def extension_subclass():
    """A program's own optimizer with decoupled weight decay, as the extension's docstring
    showed: the mixin first, RMSProp's slots `rms` and `momentum`."""
    class RMSPropW(tf.contrib.opt.DecoupledWeightDecayExtension, tf.train.RMSPropOptimizer):
        def __init__(self, weight_decay, learning_rate):
            super(RMSPropW, self).__init__(weight_decay, learning_rate=learning_rate,
                                           momentum=0.5)

    return minimizing(RMSPropW(0.05, 0.01))


def moving_average():
    loss = model()
    step = tf.train.get_or_create_global_step()
    opt = tf.contrib.opt.MovingAverageOptimizer(tf.train.MomentumOptimizer(0.01, 0.9),
                                                average_decay=0.5, num_updates=step)
    train_op = opt.minimize(loss, global_step=step)
    saver = opt.swapping_saver()
    saved = sorted('%s <- %s' % (key, value.op.name)
                   for key, value in saver._var_list.items())
    return {'loss': loss, 'train_op': train_op,
            'post': lambda values: {'swapped': np.array(saved)}}


def lars():
    loss = model()
    opt = tf.contrib.opt.LARSOptimizer(0.1, momentum=0.9, weight_decay=0.01, eeta=0.1)
    return {'loss': loss, 'train_op': opt.minimize(loss)}


def lars_skipping():
    loss = model()
    opt = tf.contrib.opt.LARSOptimizer(0.01, weight_decay=0.01, skip_list=['w'],
                                       use_nesterov=True)
    return {'loss': loss, 'train_op': opt.minimize(loss)}


def signs():
    """AddSign with a linear sign decay, PowerSign with a cosine one, on two copies."""
    from tensorflow.contrib.opt.python.training import sign_decay
    step = tf.train.get_or_create_global_step()
    with tf.variable_scope('add'):
        add_loss = model()
    with tf.variable_scope('power'):
        power_loss = model()
    add = tf.contrib.opt.AddSignOptimizer(0.01, sign_decay_fn=sign_decay.get_linear_decay_fn(4))
    power = tf.contrib.opt.PowerSignOptimizer(
        0.01, base=2.0, sign_decay_fn=sign_decay.get_cosine_decay_fn(4, zero_after=0.3))
    add_op = add.minimize(add_loss, global_step=step)
    with tf.control_dependencies([add_op]):
        train_op = power.minimize(power_loss, global_step=step)
    return {'add_loss': add_loss, 'power_loss': power_loss, 'train_op': train_op}


def sign_decays():
    from tensorflow.contrib.opt.python.training import sign_decay
    steps = tf.constant([0, 1, 3, 5, 9], tf.int64)
    return {'linear': tf.map_fn(sign_decay.get_linear_decay_fn(5), steps, tf.float32),
            'cosine': tf.map_fn(sign_decay.get_cosine_decay_fn(8, num_periods=1.5),
                                steps, tf.float32),
            'cosine_zero': tf.map_fn(sign_decay.get_cosine_decay_fn(8, zero_after=0.2),
                                     steps, tf.float32),
            'restart': tf.map_fn(sign_decay.get_restart_decay_fn(4, num_periods=3),
                                 steps, tf.float32),
            'restart_zero': tf.map_fn(sign_decay.get_restart_decay_fn(8, zero_after=0.5),
                                      steps, tf.float32)}


def reg_adagrad():
    """The regularization's update after the loss's, on `w` only (whose accumulator the loss
    has made positive)."""
    loss = model()
    w = [v for v in tf.trainable_variables() if v.op.name == 'w']
    opt = tf.contrib.opt.RegAdagradOptimizer(0.1)
    loss_update = opt.minimize(loss)
    with opt.avoid_updating_slots(), tf.control_dependencies([loss_update]):
        reg_update = opt.minimize(0.1 * tf.reduce_sum(w[0] ** 2), var_list=w)
    return {'loss': loss, 'train_op': reg_update}


def variable_clipping():
    loss = model()
    w, emb = sorted(tf.trainable_variables(), key=lambda v: v.op.name, reverse=True)
    opt = tf.contrib.opt.VariableClippingOptimizer(tf.train.GradientDescentOptimizer(0.01),
                                                   {w: [0], emb: [1]}, max_norm=0.5)
    slot_names = np.array(opt.get_slot_names() + ['-'])
    return {'loss': loss, 'train_op': opt.minimize(loss),
            'post': lambda values: {'slot_names': slot_names}}


def multitask():
    loss = model()
    idle = tf.get_variable('idle', [2])
    opt = tf.contrib.opt.MultitaskOptimizerWrapper(tf.train.MomentumOptimizer(0.01, 0.9))
    pairs = opt.compute_gradients(loss + tf.reduce_sum(idle) * 0.0)
    # TF 1.15's clipping takes dense gradients only (its tf.cond fails on IndexedSlices).
    sparse = [pair for pair in pairs if isinstance(pair[0], tf.IndexedSlices)]
    dense = [pair for pair in pairs if pair not in sparse]
    clipped, norm = tf.contrib.opt.clip_gradients_by_global_norm(dense, 2.0)
    return {'loss': loss, 'norm': norm, 'train_op': opt.apply_gradients(clipped + sparse)}


def drop_stale():
    loss = model()
    step = tf.train.get_or_create_global_step()
    opt = tf.contrib.opt.DropStaleGradientOptimizer(tf.train.AdagradOptimizer(0.1), 0)
    train_op = opt.apply_gradients(opt.compute_gradients(loss), global_step=step)
    return {'loss': loss, 'train_op': train_op}


def dense_model():
    rng = np.random.RandomState(0)
    w = tf.get_variable('w', [3, 2])
    b = tf.get_variable('b', [2])
    h = tf.matmul(tf.constant(rng.standard_normal((4, 3)).astype(np.float32)), w) + b
    return tf.reduce_sum(tf.square(h - 1.0))


def ggt():
    """Dense only (TF 1.15's GGT fails on sparse gradients). The head-only path (eps large)
    and a large sigma_eps keep the step clear of the rounding of the SVD's damped directions,
    which (sqrt(svd_eps) + sigma_eps)^-3 would otherwise amplify."""
    loss = dense_model()
    opt = tf.contrib.opt.GGTOptimizer(0.1, window=3, eps=10.0, sigma_eps=1.0)
    return {'loss': loss, 'train_op': opt.minimize(loss)}


def ggt_corrected():
    """The head-and-tail path, with a window of 1 (no damped directions)."""
    loss = dense_model()
    return {'loss': loss, 'train_op': tf.contrib.opt.GGTOptimizer(0.1, window=1).minimize(loss)}


def resource():
    """The resource-variable paths (dense and sparse) of each optimizer that had them."""
    optimizers = {
        'lazy_adam': tf.contrib.opt.LazyAdamOptimizer(0.1, beta2=0.5),
        'nadam': tf.contrib.opt.NadamOptimizer(0.1, beta2=0.5),
        'adamax': tf.contrib.opt.AdaMaxOptimizer(0.1),
        'adamw': tf.contrib.opt.AdamWOptimizer(0.05, learning_rate=0.1, beta2=0.5),
        'momentumw': tf.contrib.opt.MomentumWOptimizer(0.05, 0.001, 0.9),
        'lars': tf.contrib.opt.LARSOptimizer(0.01, eeta=0.1),
        'reg_adagrad': tf.contrib.opt.RegAdagradOptimizer(0.1),
    }
    fetches, updates = {}, []
    for name, opt in sorted(optimizers.items()):
        with tf.variable_scope(name):
            fetches[name] = model(use_resource=True, every_row=name == 'adamw', scale=20.0)
        with tf.control_dependencies([fetches[name]]):
            updates.append(opt.minimize(fetches[name]))
    fetches['train_op'] = tf.group(*updates)
    return fetches


CASES = {'lazy_adam': lazy_adam, 'nadam': nadam, 'adamax': adamax, 'adamw': adamw,
         'momentumw': momentumw, 'extended_gradient_descent': extended_gradient_descent,
         'extended_adam': extended_adam, 'extension_subclass': extension_subclass,
         'moving_average': moving_average, 'lars': lars, 'lars_skipping': lars_skipping,
         'signs': signs, 'sign_decays': sign_decays, 'reg_adagrad': reg_adagrad,
         'variable_clipping': variable_clipping, 'multitask': multitask,
         'drop_stale': drop_stale, 'ggt': ggt, 'ggt_corrected': ggt_corrected,
         'resource': resource}
