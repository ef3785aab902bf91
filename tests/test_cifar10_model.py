"""Specification of the CIFAR-10 tutorial's model and its training recipe on towers
(models/cifar10/model.py, models/cifar10/recipe.py)."""
import os

import numpy as np
import pytest

import towers
from models.cifar10 import model as cifar10
from models.cifar10.recipe import Cifar10Recipe, learning_rate_decay_steps
from towers.compat import tf

ORIGINAL_CHECKPOINT = os.path.join(os.path.dirname(__file__), 'data', 'regression', 'cifar10',
                                   'original_n2_s0_300.ckpt')
TOWER_BATCH = 2


def original_variables():
    """name -> (shape, dtype) of every variable in the checkpoint the original tutorial wrote."""
    reader = tf.train.NewCheckpointReader(ORIGINAL_CHECKPOINT)
    dtypes = reader.get_variable_to_dtype_map()
    return {name: (list(shape), dtypes[name])
            for name, shape in reader.get_variable_to_shape_map().items()}


def build_train_graph(num_towers=2, dtype=tf.float32, batch=TOWER_BATCH):
    """The training graph on `num_towers` virtual CPUs, fed a tiny global batch."""
    setup = towers.configure_devices(num_towers)
    images = tf.placeholder(dtype, [batch * num_towers, 24, 24, 3])
    labels = tf.placeholder(tf.int32, [batch * num_towers])
    recipe = Cifar10Recipe(batch_size=batch)
    graph = towers.assemble(recipe, lambda: (images, labels), setup)
    return graph, images, labels, setup.config


def random_feed(images, labels, seed=0):
    rng = np.random.RandomState(seed)
    shape = images.shape.as_list()
    return {images: rng.standard_normal(shape), labels: rng.randint(0, 10, shape[0])}


def test_variables_have_the_original_checkpoints_names_shapes_and_dtypes():
    build_train_graph()
    ours = {v.op.name: (v.shape.as_list(), v.dtype.base_dtype) for v in tf.global_variables()}
    assert ours == original_variables()


def test_global_step_is_float32_as_in_the_tutorial():
    graph, _, _, _ = build_train_graph()
    assert graph.global_step.dtype.base_dtype == tf.float32


def test_float16_images_make_float16_weights_and_averages():
    build_train_graph(dtype=tf.float16)
    dtypes = {v.op.name: v.dtype.base_dtype for v in tf.global_variables()}
    assert dtypes.pop('global_step') == tf.float32
    assert set(dtypes.values()) == {tf.float16}


def test_local_response_normalisation_equals_tensorflows_lrn_and_its_gradient():
    activations = tf.constant(3 * np.random.RandomState(0).standard_normal(
        [4, 6, 6, 64]).astype(np.float32))
    ours = cifar10._lrn(activations, 'norm')
    reference = tf.nn.lrn(activations, depth_radius=4, bias=1.0, alpha=0.001 / 9.0, beta=0.75)
    ours_grad, = tf.gradients(tf.reduce_sum(tf.square(ours)), [activations])
    reference_grad, = tf.gradients(tf.reduce_sum(tf.square(reference)), [activations])
    with tf.Session() as sess:
        values = sess.run([ours, reference, ours_grad, reference_grad])
    np.testing.assert_allclose(values[0], values[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(values[2], values[3], rtol=1e-5, atol=1e-6)


def test_inference_maps_images_to_ten_logits():
    logits = cifar10.inference(tf.zeros([5, 24, 24, 3]))
    assert logits.shape.as_list() == [5, cifar10.NUM_CLASSES]


def test_single_device_loss_is_cross_entropy_plus_weight_decay_of_local3_and_local4():
    images = tf.constant(np.random.RandomState(0).standard_normal([4, 24, 24, 3]), tf.float32)
    labels = tf.constant([0, 3, 9, 3])
    logits = cifar10.inference(images)
    total = cifar10.loss(logits, labels)
    variables = {v.op.name: v for v in tf.global_variables()}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run({'total': total, 'logits': logits, 'local3': variables['local3/weights'],
                           'local4': variables['local4/weights']})
    shifted = values['logits'] - values['logits'].max(axis=1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    cross_entropy = -log_softmax[np.arange(4), [0, 3, 9, 3]].mean()
    decay = 0.004 * sum((values[k] ** 2).sum() / 2 for k in ('local3', 'local4'))
    assert values['total'] == pytest.approx(cross_entropy + decay, rel=1e-5)


def test_each_tower_loss_counts_its_own_cross_entropy_and_the_full_weight_decay():
    graph, images, labels, config = build_train_graph(num_towers=2)
    tower_outputs = [t.outputs['cross_entropy'] for t in graph.replicated.towers]
    weights = [v for v in tf.trainable_variables() if v.op.name in ('local3/weights',
                                                                  'local4/weights')]
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        losses, cross_entropies, weight_values = sess.run(
            [graph.replicated.tower_losses, tower_outputs, weights], random_feed(images, labels))
    decay = 0.004 * sum((w ** 2).sum() / 2 for w in weight_values)
    assert losses == pytest.approx([ce + decay for ce in cross_entropies], rel=1e-5)
    assert cross_entropies[0] != cross_entropies[1]


def test_learning_rate_decays_tenfold_every_350_epochs_of_all_towers_batches():
    assert learning_rate_decay_steps(128, 1) == 136718
    assert learning_rate_decay_steps(128, 4) == 34179
    graph, _, _, config = build_train_graph(num_towers=2)
    decay_steps = learning_rate_decay_steps(TOWER_BATCH, 2)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        rates = []
        for step in (0, decay_steps - 1, decay_steps, 2 * decay_steps):
            graph.global_step.load(step, sess)
            rates.append(sess.run(graph.learning_rate))
    assert rates == pytest.approx([0.1, 0.1, 0.01, 0.001])


def test_train_op_steps_the_global_step_and_moves_the_weights_and_their_averages():
    graph, images, labels, config = build_train_graph(num_towers=2)
    weights = [v for v in tf.trainable_variables() if v.op.name == 'softmax_linear/weights'][0]
    shadow = [v for v in tf.global_variables()
              if v.op.name == 'softmax_linear/weights/ExponentialMovingAverage'][0]
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        before = sess.run([weights, shadow])
        # Two steps: the averages update unordered with the weights, as in the tutorial, so
        # the first may average the initial weights into a shadow that equals them.
        for seed in (0, 1):
            sess.run(graph.train_ops['total'], random_feed(images, labels, seed))
        step, after_weights, after_shadow = sess.run([graph.global_step, weights, shadow])
    assert step == 2.0
    assert not np.allclose(after_weights, before[0])
    assert not np.allclose(after_shadow, before[1])


def test_summaries_have_the_tutorials_tags():
    graph, images, labels, config = build_train_graph(num_towers=2)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        summary = tf.Summary.FromString(sess.run(graph.summary_op, random_feed(images, labels)))
    tags = {value.tag for value in summary.value}
    # TF1 summary tags take the name scope and a suffix when the name is an op's already:
    # the original's variable histograms were 'conv1/weights_1' too.
    assert {'learning_rate', 'conv1/weights_1', 'conv1/weights/gradients',
            'tower_0/total_loss_1', 'tower_1/total_loss_1', 'tower_1/cross_entropy_1',
            'tower_1/local4/weight_loss_1', 'tower_0/conv1/conv1/conv1/activations',
            'tower_1/local3/local3/local3/sparsity'} <= tags


def test_project_checkpoint_restores_by_the_original_variable_names(tmp_path):
    graph, images, labels, config = build_train_graph(num_towers=2)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(graph.train_ops['total'], random_feed(images, labels))
        saved = {v.op.name: value for v, value in
                 zip(tf.global_variables(), sess.run(tf.global_variables()))}
        prefix = tf.train.Saver().save(sess, str(tmp_path / 'model.ckpt'), global_step=1)
    reader = tf.train.NewCheckpointReader(prefix)
    assert {name: (list(shape), reader.get_variable_to_dtype_map()[name]) for name, shape
            in reader.get_variable_to_shape_map().items()} == original_variables()
    with tf.Graph().as_default():
        # Variables made by hand under the original's names, as the original's graph has them.
        restored = {name: tf.get_variable(name, value.shape, tf.as_dtype(value.dtype))
                    for name, value in saved.items()}
        with tf.Session() as sess:
            tf.train.Saver(restored).restore(sess, prefix)
            values = sess.run(restored)
    for name, value in saved.items():
        np.testing.assert_array_equal(values[name], value, err_msg=name)


def test_original_checkpoint_restores_into_the_training_graph():
    graph, _, _, config = build_train_graph(num_towers=2)
    reader = tf.train.NewCheckpointReader(ORIGINAL_CHECKPOINT)
    with tf.Session(config=config) as sess:
        tf.train.Saver().restore(sess, ORIGINAL_CHECKPOINT)
        step, local4 = sess.run([graph.global_step, 'local4/weights:0'])
    assert step == 300.0
    np.testing.assert_array_equal(local4, reader.get_tensor('local4/weights'))


def test_evaluation_restores_moving_averages_into_the_weights():
    images = tf.placeholder(tf.float32, [3, 24, 24, 3])
    cifar10.evaluation(images, tf.constant([1, 2, 3]))
    saver = tf.train.Saver(cifar10.variables_to_restore())
    reader = tf.train.NewCheckpointReader(ORIGINAL_CHECKPOINT)
    with tf.Session() as sess:
        saver.restore(sess, ORIGINAL_CHECKPOINT)
        conv1 = sess.run('conv1/weights:0')
    np.testing.assert_array_equal(
        conv1, reader.get_tensor('conv1/weights/ExponentialMovingAverage'))
    assert not np.array_equal(conv1, reader.get_tensor('conv1/weights'))
