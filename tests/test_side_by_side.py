"""Specification of side-by-side training: several models on one set of towers, one step."""
import json
import os
import re
import sys
import threading

import numpy as np
import pytest

import towers
from towers.training import side_by_side
from towers.benchmarks import side_by_side as bench
from towers.compat import slim, tf

NUM_TOWERS = 2
BATCH_PER_TOWER = 2
STEPS = 3


class TinyRecipe(towers.Recipe):
    """A convolution with batch norm and a 1x1 head; its own optimizer and schedule."""

    def __init__(self, optimizer_fn, decay_rate=1.0, weight_decay=0.0, diverge=False):
        self._optimizer_fn = optimizer_fn
        self._decay_rate = decay_rate
        self._weight_decay = weight_decay
        self._diverge = diverge

    def learning_rate(self, global_step, num_towers):
        return tf.train.exponential_decay(0.1, global_step, 1, self._decay_rate)

    def optimizer(self, learning_rate):
        return self._optimizer_fn(learning_rate)

    def tower_fn(self, batch):
        images, masks = batch
        net = slim.conv2d(images, 4, 3, normalizer_fn=slim.batch_norm,
                          normalizer_params={'is_training': True, 'decay': 0.5, 'scale': True},
                          weights_regularizer=slim.l2_regularizer(self._weight_decay),
                          scope='conv')
        logits = slim.conv2d(net, 1, 1, activation_fn=None, scope='head')
        loss = tf.losses.sigmoid_cross_entropy(masks, logits)
        if self._diverge:
            tf.losses.add_loss(tf.log(-tf.abs(loss)))
        return {'logits': logits}


def recipes():
    return [('adam', TinyRecipe(tf.train.AdamOptimizer, weight_decay=0.01)),
            ('momentum', TinyRecipe(lambda rate: tf.train.MomentumOptimizer(rate, 0.9),
                                    decay_rate=0.5))]


def batches(steps=STEPS):
    rs = np.random.RandomState(0)
    rows = steps * NUM_TOWERS * BATCH_PER_TOWER
    images = rs.uniform(size=[rows, 8, 8, 3]).astype(np.float32)
    masks = (images[..., :1] > 0.5).astype(np.float32)
    return images, masks


def input_fn():
    dataset = tf.data.Dataset.from_tensor_slices(batches()).batch(NUM_TOWERS * BATCH_PER_TOWER)
    return tf.data.make_one_shot_iterator(dataset).get_next()


def train(build, steps, initial_values=None):
    """Builds a step with `build(setup)` -> (train_op, variables) in a new graph, optionally
    loads `initial_values` (name -> array), runs `steps` steps; returns the initial and final
    values of the variables by name."""
    setup = towers.configure_devices(NUM_TOWERS)
    with tf.Graph().as_default():
        train_op, variables = build(setup)
        with tf.Session(config=setup.config) as sess:
            sess.run(tf.global_variables_initializer())
            for variable in variables:
                if initial_values is not None:
                    variable.load(initial_values[variable.op.name], sess)
            initial = sess.run({v.op.name: v for v in variables})
            for _ in range(steps):
                sess.run(train_op)
            return initial, sess.run({v.op.name: v for v in variables})


def test_k_steps_side_by_side_give_each_model_the_variables_of_training_it_alone():
    initial, side = train(lambda setup: (
        side_by_side.assemble(recipes(), input_fn, setup).train_ops[side_by_side.TRAIN_OP],
        tf.global_variables()),
        STEPS)
    for name, recipe in recipes():
        prefix = name + '/'
        start = {k[len(prefix):]: v for k, v in initial.items() if k.startswith(prefix)}
        start['global_step'] = initial['global_step']
        _, alone = train(lambda setup: (
            towers.assemble(recipe, input_fn, setup).train_ops['total'],
            tf.global_variables()), STEPS, start)
        assert sorted(alone) == sorted(start)
        for key, value in alone.items():
            if key != 'global_step':
                np.testing.assert_allclose(side[prefix + key], value, rtol=1e-5, atol=1e-7,
                                           err_msg=prefix + key)
                assert not np.array_equal(start[key], value), key
    assert side['global_step'] == STEPS


def test_every_variable_of_a_model_is_under_its_scope_optimizer_and_statistics_included():
    side_by_side.assemble(recipes(), input_fn, towers.configure_devices(NUM_TOWERS))
    names = sorted(v.op.name for v in tf.global_variables())
    assert [n for n in names if n.startswith('adam/')] == [
        'adam/beta1_power', 'adam/beta2_power',
        'adam/conv/BatchNorm/beta', 'adam/conv/BatchNorm/beta/Adam',
        'adam/conv/BatchNorm/beta/Adam_1', 'adam/conv/BatchNorm/gamma',
        'adam/conv/BatchNorm/gamma/Adam', 'adam/conv/BatchNorm/gamma/Adam_1',
        'adam/conv/BatchNorm/moving_mean', 'adam/conv/BatchNorm/moving_variance',
        'adam/conv/weights', 'adam/conv/weights/Adam', 'adam/conv/weights/Adam_1',
        'adam/head/biases', 'adam/head/biases/Adam', 'adam/head/biases/Adam_1',
        'adam/head/weights', 'adam/head/weights/Adam', 'adam/head/weights/Adam_1']
    assert set(names) - {n for n in names if re.match('(adam|momentum)/', n)} == {'global_step'}


def test_one_model_step_runs_only_its_own_batch_norm_updates():
    training = side_by_side.assemble(recipes(), input_fn, towers.configure_devices(NUM_TOWERS))
    updates = training.replicated.objective_update_ops('momentum')
    assert updates and all(op.name.startswith('tower_0/momentum/') for op in updates)


def test_a_repeated_model_name_is_an_error_naming_it():
    models = recipes() + [('adam', TinyRecipe(tf.train.AdamOptimizer))]
    with pytest.raises(towers.TowersError, match=r"\['adam'\] are given more than once"):
        side_by_side.assemble(models, input_fn, towers.configure_devices(1))


def test_a_recipe_with_once_per_step_ops_is_refused():
    class Averaged(TinyRecipe):
        def once_per_step_ops(self, global_step):
            return [tf.no_op()]

    with pytest.raises(towers.TowersError, match='model avg .Averaged. has once-per-step ops'):
        side_by_side.assemble([('avg', Averaged(tf.train.AdamOptimizer))], input_fn,
                              towers.configure_devices(1))


@pytest.fixture(scope='module')
def fitted(tmp_path_factory):
    """One side-by-side training of 3 steps, with its progress lines."""
    train_dir = str(tmp_path_factory.mktemp('side_by_side'))
    lines = []
    result = side_by_side.fit(recipes(), input_fn, towers.configure_devices(NUM_TOWERS),
                              train_dir, STEPS, NUM_TOWERS * BATCH_PER_TOWER,
                              log_every_n_steps=1, save_summaries_steps=1,
                              printer=lambda line, flush: lines.append(line))
    return train_dir, lines, result


def test_the_progress_line_shows_every_models_loss(fitted):
    _, lines, _ = fitted
    tutorial = [line for line in lines if not line.startswith('progress: ')]
    assert len(tutorial) == STEPS
    assert re.search(r': step 2, loss adam = \d\.\d{4}, momentum = \d\.\d{4} '
                     r'\([0-9.]+ examples/sec; [0-9.]+ sec/batch\)$', tutorial[-1]), tutorial[-1]
    assert lines[-1].startswith('progress: %d/%d steps (100%%)' % (STEPS, STEPS)), lines[-1]


def test_each_model_gets_a_tensorboard_run_with_the_same_tags(fitted):
    train_dir, _, _ = fitted
    for name in ('adam', 'momentum'):
        steps, losses = side_by_side.loss_curve(train_dir, name)
        assert steps == [0, 1, 2] and all(0 < loss < 2 for loss in losses)
    _, rates = side_by_side.loss_curve(train_dir, 'momentum', 'learning_rate')
    np.testing.assert_allclose(rates, [0.1, 0.05, 0.025])


def test_one_checkpoint_holds_all_models_and_restores_one_alone(fitted):
    train_dir, _, result = fitted
    checkpoint = tf.train.latest_checkpoint(train_dir)
    assert checkpoint.endswith('model.ckpt-%d' % STEPS) and result.steps_done == STEPS
    assert side_by_side.models_in_checkpoint(checkpoint, ['momentum', 'unet', 'adam']) == [
        'momentum', 'adam']
    with side_by_side.model_scope('adam'):
        TinyRecipe(tf.train.AdamOptimizer).tower_fn(
            (tf.zeros([1, 8, 8, 3]), tf.zeros([1, 8, 8, 1])))
    reader = tf.train.NewCheckpointReader(checkpoint)
    with tf.Session() as sess:
        tf.train.Saver().restore(sess, checkpoint)
        for variable in tf.global_variables():
            np.testing.assert_array_equal(sess.run(variable),
                                          reader.get_tensor(variable.op.name))


def test_a_diverged_model_is_named_in_the_error(tmp_path):
    models = [('fine', TinyRecipe(tf.train.AdamOptimizer)),
              ('broken', TinyRecipe(tf.train.AdamOptimizer, diverge=True))]
    with pytest.raises(towers.LossDivergedError, match='the loss of broken is nan at step 0'):
        side_by_side.fit(models, input_fn, towers.configure_devices(1), str(tmp_path), 2,
                         NUM_TOWERS * BATCH_PER_TOWER, printer=lambda line, flush: None)
    assert not os.path.exists(os.path.join(str(tmp_path), 'checkpoint'))


# A stand-in for a benchmark child, without TensorFlow: k models take 1 + k seconds side by
# side, process i times from 100 + i to 110 + i and peaks at 100 * k + i MiB.
FAKE_CHILD = '''
import json, sys
names, index = json.loads(sys.argv[1]), int(sys.argv[2])
if 'broken' in names:
    sys.exit('cannot build broken')
print('log line')
print(json.dumps({'steps_sec': 1.0 + len(names), 'timed_start': 100.0 + index,
                  'timed_end': 110.0 + index, 'peak_rss_mb': 100.0 * len(names) + index}))
'''


def fake_child(names, barrier, count, index):
    return [sys.executable, '-c', FAKE_CHILD, json.dumps(names), str(index)]


def test_benchmark_figures_of_each_configuration_and_their_ratios():
    results = bench.compare(fake_child, ['a', 'b'], repeats=1)
    assert {k: results[k]['steps_sec'] for k in bench.CONFIGURATIONS} == {
        'side_by_side': 3.0, 'sequential': 4.0, 'concurrent': 11.0}
    assert {k: results[k]['peak_rss_mb'] for k in bench.CONFIGURATIONS} == {
        'side_by_side': 200.0, 'sequential': 100.0, 'concurrent': 201.0}
    assert results['ratios']['sequential/side_by_side steps_sec'] == 4.0 / 3.0
    assert all(results[k]['wall_sec'] > 0 for k in bench.CONFIGURATIONS)


def test_benchmark_rounds_rotate_the_order_of_the_configurations(capsys):
    bench.compare(fake_child, ['a'], repeats=3)
    order = re.findall(r'round (\d), (\w+):', capsys.readouterr().err)
    assert order == [('1', 'side_by_side'), ('1', 'sequential'), ('1', 'concurrent'),
                     ('2', 'sequential'), ('2', 'concurrent'), ('2', 'side_by_side'),
                     ('3', 'concurrent'), ('3', 'side_by_side'), ('3', 'sequential')]


def test_benchmark_processes_start_timing_only_when_all_are_ready(tmp_path):
    first = threading.Thread(target=bench.wait_at_barrier, args=(str(tmp_path), 2, 0))
    first.start()
    first.join(timeout=0.3)
    assert first.is_alive()
    bench.wait_at_barrier(str(tmp_path), 2, 1)
    first.join(timeout=5)
    assert not first.is_alive()


def test_a_failed_benchmark_process_is_an_error_with_its_last_words():
    with pytest.raises(towers.TowersError, match=r'(?s)benchmark process .* failed \(exit 1\): '
                                                 r'cannot build broken'):
        bench.compare(fake_child, ['broken'], repeats=1)
