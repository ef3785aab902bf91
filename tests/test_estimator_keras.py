"""Specification of `tf.keras.estimator.model_to_estimator` (towers/legacy/estimator/keras.py):
the Estimator of a compiled Keras model starts from the model's weights, trains as Keras trains
on the same batches, evaluates the compiled loss and metrics under TF 1.x's names, predicts by
output name, exports, and writes checkpoints the Fashion-MNIST evaluation restores."""
import json
import os
import runpy
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from models.fashion_mnist import model as fashion_mnist
from towers import evaluation
from towers.compat import keras, tf
from towers.legacy.estimator import EstimatorError, RunConfig
from towers.legacy.estimator.export import PredictOutput, build_raw_serving_input_receiver_fn
from towers.legacy.estimator.keras import model_to_estimator

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BATCH = 4
STEPS = 3


def batches(examples=BATCH * STEPS, features=4, classes=3, seed=0):
    rng = np.random.RandomState(seed)
    x = rng.rand(examples, features).astype(np.float32)
    return x, np.eye(classes, dtype=np.float32)[rng.randint(0, classes, examples)]


def bn_model(optimizer, metrics=('accuracy',)):
    """[B, 4] -> dense1 -> batch norm -> dropout-free softmax out [B, 3], compiled."""
    images = keras.Input([4], name='x')
    net = keras.layers.Dense(5, name='dense1')(images)
    net = keras.layers.BatchNormalization(name='bn')(net)
    probabilities = keras.layers.Dense(3, activation='softmax', name='out')(net)
    model = keras.Model(images, probabilities)
    model.compile(optimizer, 'categorical_crossentropy', metrics=list(metrics))
    return model


def input_fn(x, y, keyed=True):
    def make():
        return tf.data.Dataset.from_tensor_slices(({'x': x} if keyed else x, y)).batch(BATCH)
    return make


def test_the_first_checkpoint_holds_the_keras_weights_exactly(tmp_path):
    model = bn_model(keras.optimizers.legacy.SGD(0.1))
    weights = {w.name[:-2]: value for w, value in zip(model.weights, model.get_weights())}
    estimator = model_to_estimator(model, model_dir=str(tmp_path))
    estimator.train(input_fn(*batches()), steps=1)
    for checkpoint in (tmp_path / 'model.ckpt-0', tmp_path / 'keras' / 'keras_model.ckpt'):
        for name, value in weights.items():
            np.testing.assert_array_equal(tf.train.load_variable(str(checkpoint), name), value)
    assert set(weights) == {'dense1/kernel', 'dense1/bias', 'bn/gamma', 'bn/beta',
                            'bn/moving_mean', 'bn/moving_variance', 'out/kernel', 'out/bias'}


def test_a_model_never_initialized_starts_from_its_clones_draws_of_the_runconfigs_seed(
        tmp_path):
    """As TF 1.15: Keras's session is left alone (nothing initialized there), and the first
    checkpoint holds the clone's own initial values, drawn with RunConfig's tf_random_seed."""
    checkpoints = []
    for name in ('first', 'second'):
        model = bn_model(keras.optimizers.legacy.SGD(0.1))
        estimator = model_to_estimator(model, model_dir=str(tmp_path / name),
                                       config=RunConfig(tf_random_seed=3))
        assert not any(getattr(weight, '_keras_initialized', False) for weight in model.weights)
        checkpoints.append(str(tmp_path / name / 'keras' / 'keras_model.ckpt'))
    kernels = [tf.train.load_variable(path, 'dense1/kernel') for path in checkpoints]
    np.testing.assert_array_equal(kernels[0], kernels[1])
    assert np.abs(kernels[0]).sum() > 0


@pytest.mark.parametrize('optimizer', [
    lambda: keras.optimizers.legacy.SGD(0.1, momentum=0.9),
    lambda: keras.optimizers.legacy.Adam(0.01),
    lambda: tf.train.AdamOptimizer(0.01)], ids=['keras_sgd_momentum', 'keras_adam',
                                                'tf_train_adam'])
def test_steps_through_the_estimator_equal_keras_train_on_batch(tmp_path, optimizer):
    x, y = batches()
    model = bn_model(optimizer())
    model.get_weights()  # initialized in Keras's session: the estimator starts from them
    estimator = model_to_estimator(model, model_dir=str(tmp_path))
    estimator.train(input_fn(x, y), steps=STEPS)
    for step in range(STEPS):
        model.train_on_batch(x[step * BATCH:(step + 1) * BATCH], y[step * BATCH:(step + 1) * BATCH])
    trained = dict(zip([w.name[:-2] for w in model.weights], model.get_weights()))
    # A Keras optimizer's slots are TF 1.15's and 2.15's names, its steps the global step's.
    slots = [name for name in estimator.get_variable_names() if name.endswith('kernel/m')]
    assert slots in ([], ['training/Adam/dense1/kernel/m', 'training/Adam/out/kernel/m'])
    assert not [name for name in estimator.get_variable_names() if name.endswith('/iter')]
    assert not np.allclose(trained['bn/moving_mean'],
                           tf.train.load_variable(str(tmp_path / 'model.ckpt-0'),
                                                  'bn/moving_mean'))
    for name, value in trained.items():
        np.testing.assert_allclose(estimator.get_variable_value(name), value, atol=1e-5,
                                   err_msg=name)
    assert estimator.get_variable_value('global_step') == STEPS


def test_evaluate_returns_the_compiled_loss_and_metrics_under_tf1_names(tmp_path):
    x, y = batches()
    model = bn_model(keras.optimizers.legacy.SGD(0.1), metrics=['accuracy', 'mse'])
    model.get_weights()
    estimator = model_to_estimator(model, model_dir=str(tmp_path))
    estimator.train(input_fn(x, y), steps=1)
    model.train_on_batch(x[:BATCH], y[:BATCH])
    results = estimator.evaluate(input_fn(x, y))
    loss, acc, mse = model.evaluate(x, y, batch_size=BATCH, verbose=0)
    assert set(results) == {'loss', 'acc', 'mean_squared_error', 'global_step'}
    np.testing.assert_allclose([results['loss'], results['acc'], results['mean_squared_error']],
                               [loss, acc, mse], rtol=1e-5)
    assert results['global_step'] == 1
    # TF 2's metric_names_map: the same evaluation under the names it gives.
    names = {'acc': 'accuracy', 'mean_squared_error': 'mse'}
    renamed = model_to_estimator(model, model_dir=str(tmp_path), metric_names_map=names)
    assert renamed.evaluate(input_fn(x, y)) == pytest.approx(
        dict((names.get(key, key), value) for key, value in results.items()))
    partial = model_to_estimator(model, model_dir=str(tmp_path), metric_names_map={'acc': 'a'})
    assert error_of(lambda: partial.evaluate(input_fn(x, y))) == (
        "model_to_estimator(metric_names_map=...) has the keys ['acc']: expected the Keras "
        "model's compiled metrics ['acc', 'mean_squared_error']")


def two_headed_model():
    """Inputs 'a' [B, 4] and 'b' [B, 2]; outputs 'class_out' [B, 3] and 'value_out' [B, 1]."""
    a, b = keras.Input([4], name='a'), keras.Input([2], name='b')
    net = keras.layers.Dense(6, activation='relu', name='shared')(
        keras.layers.Concatenate(name='joined')([a, b]))
    model = keras.Model([a, b], [keras.layers.Dense(3, activation='softmax', name='class_out')(net),
                                 keras.layers.Dense(1, name='value_out')(net)])
    model.compile(tf.train.GradientDescentOptimizer(0.1),
                  {'class_out': 'categorical_crossentropy', 'value_out': 'mse'},
                  metrics={'class_out': 'acc'}, loss_weights={'class_out': 1.0, 'value_out': 0.5})
    return model


def test_features_and_labels_go_by_input_and_output_names_and_predictions_by_output_name(
        tmp_path):
    x, y = batches(8, 6)
    model = two_headed_model()
    features = {'b': x[:, 4:], 'a': x[:, :4], 'unused': x}
    labels = {'value_out': x[:, :1], 'class_out': y}

    def keyed():
        return tf.data.Dataset.from_tensor_slices((features, labels)).batch(BATCH)

    model.get_weights()
    estimator = model_to_estimator(model, model_dir=str(tmp_path))
    estimator.train(keyed, steps=2)
    model.train_on_batch([x[:4, :4], x[:4, 4:]], [y[:4], x[:4, :1]])
    model.train_on_batch([x[4:, :4], x[4:, 4:]], [y[4:], x[4:, :1]])
    np.testing.assert_allclose(estimator.get_variable_value('shared/kernel'),
                               model.get_layer('shared').get_weights()[0], atol=1e-5)
    assert set(estimator.evaluate(keyed)) == {'loss', 'class_out_acc', 'global_step'}
    predictions = list(estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices(features).batch(BATCH)))
    assert len(predictions) == 8 and set(predictions[0]) == {'class_out', 'value_out'}
    np.testing.assert_allclose(np.stack([p['class_out'] for p in predictions]),
                               model.predict([x[:, :4], x[:, 4:]])[0], atol=1e-5)


def test_a_single_input_takes_one_tensor_and_exports_the_predictions(tmp_path):
    x, y = batches()
    model = bn_model(keras.optimizers.legacy.Adam(0.01))
    estimator = model_to_estimator(model, model_dir=str(tmp_path / 'model'),
                                   export_outputs={'out': PredictOutput})
    estimator.train(input_fn(x, y, keyed=False), steps=2)
    predicted = np.stack([p['out'] for p in estimator.predict(
        lambda: tf.data.Dataset.from_tensor_slices(x).batch(BATCH))])
    export_dir = estimator.export_saved_model(
        str(tmp_path / 'export'), build_raw_serving_input_receiver_fn({'x': tf.constant(x)}))
    with tf.Graph().as_default(), tf.Session() as session:
        meta_graph = tf.saved_model.loader.load(session, ['serve'], export_dir.decode())
        signature = meta_graph.signature_def['serving_default']
        served = session.run(signature.outputs['out'].name, {signature.inputs['x'].name: x})
        # TF 2's export_outputs: a signature of the output 'out' beside it.
        by_output = meta_graph.signature_def['out']
        also = session.run(by_output.outputs['output'].name, {by_output.inputs['x'].name: x})
    np.testing.assert_allclose(served, predicted, atol=1e-6)
    np.testing.assert_array_equal(also, served)


def test_a_keras_model_file_gives_its_weights(tmp_path):
    model = bn_model(keras.optimizers.legacy.SGD(0.1))
    model.save(str(tmp_path / 'model.h5'))
    estimator = model_to_estimator(keras_model_path=str(tmp_path / 'model.h5'),
                                   config=RunConfig(model_dir=str(tmp_path / 'dir')))
    estimator.train(input_fn(*batches()), steps=1)
    np.testing.assert_array_equal(
        tf.train.load_variable(str(tmp_path / 'dir' / 'model.ckpt-0'), 'dense1/kernel'),
        model.get_layer('dense1').get_weights()[0])


def test_its_checkpoint_restores_into_the_fashion_mnist_evaluation_with_equal_outputs(tmp_path):
    model = fashion_mnist.build_model()
    model.compile(tf.train.AdamOptimizer(0.001), 'categorical_crossentropy', ['accuracy'])
    rng = np.random.RandomState(1)
    images = rng.randint(0, 256, [BATCH, 28, 28]).astype(np.uint8)
    scaled = (images / 255.0).astype(np.float32)[..., None]
    labels = np.eye(10, dtype=np.float32)[rng.randint(0, 10, BATCH)]
    estimator = model_to_estimator(model, model_dir=str(tmp_path))
    estimator.train(lambda: tf.data.Dataset.from_tensors(({'images': scaled}, labels)), steps=1)
    network = runpy.run_path(os.path.join(REPO, 'scripts', 'eval_fashion_mnist.py'))
    restored = evaluation.predict(network['_probabilities'], estimator.latest_checkpoint(),
                                  images, BATCH)['probabilities']
    predicted = np.stack([p['dense2'] for p in estimator.predict(
        lambda: tf.data.Dataset.from_tensors({'images': scaled}))])
    np.testing.assert_allclose(restored, predicted, atol=1e-6)
    assert not np.allclose(estimator.get_variable_value('conv1/kernel'),
                           model.get_layer('conv1').get_weights()[0])


# The keys of TF 2.15's object-based checkpoints (tensorflow-estimator 2.15.0) of `bn_model`
# trained with Keras's Adam, measured: a layer's weights by its place among the layers that
# have any, the optimizer's slots under each weight.
OBJECT_KEYS = ['_CHECKPOINTABLE_OBJECT_GRAPH', 'estimator_global_step'] + [
    'layer_with_weights-%d/%s%s' % (layer, weight, slot)
    for layer, weights in enumerate([('kernel', 'bias'), ('gamma', 'beta', 'moving_mean',
                                                         'moving_variance'), ('kernel', 'bias')])
    for weight in weights
    for slot in (('',) if weight.startswith('moving') else
                 ('', '/.OPTIMIZER_SLOT/optimizer/m', '/.OPTIMIZER_SLOT/optimizer/v'))] + [
    'optimizer/' + name for name in ('beta_1', 'beta_2', 'decay', 'learning_rate')]


def object_key(name):
    return name if name.startswith('_') else name + '/.ATTRIBUTES/VARIABLE_VALUE'


def test_object_based_checkpoints_have_tf2_15s_keys_load_into_keras_and_resume(tmp_path):
    x, y = batches()
    model = bn_model(keras.optimizers.legacy.Adam(0.01))
    model.get_weights()
    estimator = model_to_estimator(model, model_dir=str(tmp_path),
                                   checkpoint_format='checkpoint')
    estimator.train(input_fn(x, y), steps=STEPS)
    for checkpoint in (estimator.latest_checkpoint(), str(tmp_path / 'keras' / 'keras_model.ckpt')):
        assert sorted(name for name, _ in tf.train.list_variables(checkpoint)) == sorted(
            map(object_key, OBJECT_KEYS))
    assert os.path.exists(estimator.latest_checkpoint() + '.data-00001-of-00002')
    # The Keras model reads the Estimator's checkpoint by its object graph.
    predicted = np.stack([p['out'] for p in estimator.predict(input_fn(x, y))])
    fresh = bn_model(keras.optimizers.legacy.Adam(0.01))
    fresh.load_weights(estimator.latest_checkpoint()).expect_partial()
    np.testing.assert_allclose(fresh.predict(x, verbose=0), predicted, atol=1e-6)
    # Resumed by another Estimator, with Adam's slots and step: as Keras goes on.
    resumed = model_to_estimator(bn_model(keras.optimizers.legacy.Adam(0.01)),
                                 model_dir=str(tmp_path), checkpoint_format='checkpoint')
    resumed.train(input_fn(x, y), steps=STEPS)
    for _ in range(2):
        for step in range(STEPS):
            model.train_on_batch(x[step * BATCH:(step + 1) * BATCH],
                                 y[step * BATCH:(step + 1) * BATCH])
    expected = {'layer_with_weights-0/kernel': model.get_layer('dense1').kernel,
                'layer_with_weights-1/moving_mean': model.get_layer('bn').moving_mean,
                'layer_with_weights-2/bias': model.get_layer('out').bias}
    for key, weight in expected.items():
        np.testing.assert_allclose(
            tf.train.load_variable(resumed.latest_checkpoint(), object_key(key)),
            keras.backend.get_value(weight), atol=1e-5, err_msg=key)
    assert tf.train.load_variable(resumed.latest_checkpoint(),
                                  object_key('estimator_global_step')) == 2 * STEPS


def error_of(call):
    with pytest.raises(EstimatorError) as raised:
        call()
    message = str(raised.value)
    assert '\n' not in message
    return message


def test_a_model_not_compiled_is_one_error_line(tmp_path):
    model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,), name='d')])
    assert "Keras model 'sequential" in error_of(lambda: model_to_estimator(model))
    assert 'not compiled: compile it with model.compile' in error_of(
        lambda: model_to_estimator(model))


def test_a_subclassed_model_is_one_error_line():
    class Subclassed(keras.Model):
        def __init__(self):
            super().__init__(name='subclassed')
            self.dense = keras.layers.Dense(2)

        def call(self, inputs):
            return self.dense(inputs)

    model = Subclassed()
    model(tf.ones([1, 3]))
    model.compile('sgd', 'mse')
    assert error_of(lambda: model_to_estimator(model)) == (
        "the Keras model 'subclassed' is subclassed from tf.keras.Model: model_to_estimator "
        "clones a model by its layers' configuration, expected a functional or Sequential "
        'model')


@pytest.mark.parametrize('with_model, given, expected', [
    (False, {}, 'needs either keras_model (a compiled tf.keras.Model) or keras_model_path (a '
                'file of one), not neither'),
    (True, {'keras_model_path': 'model.h5'}, 'not both'),
    (True, {'checkpoint_format': 'h5'}, "model_to_estimator(checkpoint_format='h5'): expected "
                                        "'saver' (name-based checkpoints) or 'checkpoint' "
                                        '(object-based)'),
    (True, {'export_outputs': {'probabilities': None}}, "export_outputs=...) names "
                                                        "'probabilities': expected outputs of "
                                                        'the Keras model (out)')])
def test_wrong_arguments_are_one_error_line(tmp_path, with_model, given, expected):
    model = bn_model('sgd') if with_model else None
    assert expected in error_of(lambda: model_to_estimator(model, model_dir=str(tmp_path),
                                                           **given))


def test_a_missing_model_file_is_one_error_line(tmp_path):
    assert 'keras_model_path=%r): no such file' % str(tmp_path / 'none.h5') in error_of(
        lambda: model_to_estimator(keras_model_path=str(tmp_path / 'none.h5')))


def test_an_unknown_feature_key_is_one_error_line_naming_the_input_names(tmp_path):
    x, y = batches()
    estimator = model_to_estimator(bn_model('sgd'), model_dir=str(tmp_path))
    message = error_of(lambda: estimator.train(
        lambda: tf.data.Dataset.from_tensor_slices(({'images': x}, y)).batch(BATCH), steps=1))
    assert message == ("the input_fn's features have the keys 'images': expected the Keras "
                       "model's input names 'x' (missing 'x')")


def test_under_the_runner_tf_keras_and_tf_contrib_keras_give_this_model_to_estimator(tmp_path):
    script = tmp_path / 'program.py'
    script.write_text(textwrap.dedent('''
        import numpy as np
        import tensorflow as tf
        from towers.legacy import check, program

        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,), name='d')])
        model.compile(tf.train.GradientDescentOptimizer(0.1), 'mse')
        from tensorflow.contrib.keras.api.keras.estimator import model_to_estimator
        from tensorflow.python.estimator.keras import model_to_estimator as tf112_path
        assert tf112_path.__module__ == 'towers.legacy.estimator.keras'
        convert = tf.contrib.keras.estimator.model_to_estimator
        assert convert is tf.keras.estimator.model_to_estimator is model_to_estimator
        estimator = convert(model, model_dir=%r)
        estimator.train(lambda: (tf.ones([2, 3]), tf.zeros([2, 2])), steps=2)
        print('step', estimator.get_variable_value('global_step'))
        print(check.look_up(program.Use('tensorflow', ('keras', 'estimator',
                                                       'model_to_estimator'), 'p.py:1')))
        ''' % str(tmp_path / 'model')))
    result = subprocess.run([sys.executable, '-m', 'towers.legacy', str(script)], cwd=REPO,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert 'step 2' in lines
    assert "('tf.keras.estimator.model_to_estimator', 'towers-legacy', None)" in lines
    assert 'tf.keras.estimator.model_to_estimator (a tf.estimator.Estimator)' in result.stderr


TF1_PROGRAM = '''
import json, sys
import numpy as np
import tensorflow as tf

model_dir, steps = sys.argv[1], int(sys.argv[2])
seeded = lambda seed: tf.keras.initializers.glorot_uniform(seed=seed)
inputs = tf.keras.Input((4,), name='x')
net = tf.keras.layers.Dense(8, activation='relu', kernel_initializer=seeded(1))(inputs)
net = tf.keras.layers.BatchNormalization()(net)
outputs = tf.keras.layers.Dense(3, activation='softmax', kernel_initializer=seeded(2),
                                name='probs')(net)
model = tf.keras.Model(inputs, outputs)
model.compile(tf.keras.optimizers.Adam(0.01), 'sparse_categorical_crossentropy', ['accuracy'])
estimator = tf.keras.estimator.model_to_estimator(model, model_dir=model_dir)
rng = np.random.RandomState(0)
x = rng.randn(64, 4).astype(np.float32)
y = (x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 1)
input_fn = lambda: tf.data.Dataset.from_tensor_slices(({'x': x}, y)).batch(16).repeat()
if steps:
    estimator.train(input_fn, steps=steps)
print(json.dumps({key: float(value) for key, value in
                  estimator.evaluate(input_fn, steps=4).items()}))
'''


def test_a_keras_optimizers_checkpoints_go_both_ways_with_tf1_15(tmp_path, tf1_python):
    """A TF1 model_to_estimator program (Keras's Adam) resumes TF 1.15.5's model_dir under
    the runner as on TF 1.15.5 (the same slot names, the step counted once), and TF 1.15.5
    evaluates the runner's checkpoint as the runner does."""
    from towers.legacy.compare import tf1
    program = tmp_path / 'program.py'
    program.write_text(TF1_PROGRAM)

    def run(python, model_dir, steps, options=()):
        result = subprocess.run([python] + list(options) + [str(program), str(model_dir),
                                                            str(steps)],
                                env=tf1.environment(), capture_output=True, text=True,
                                timeout=600)
        assert result.returncode == 0, result.stderr[-3000:]
        return json.loads(result.stdout.strip().splitlines()[-1])

    run(tf1_python, tmp_path / 'tf1', 6)
    shutil.copytree(tmp_path / 'tf1', tmp_path / 'runner')
    on_tf1 = run(tf1_python, tmp_path / 'tf1', 3)
    on_runner = run(sys.executable, tmp_path / 'runner', 3, ['-m', 'towers.legacy'])
    assert on_runner['global_step'] == on_tf1['global_step'] == 9
    assert on_runner['acc'] == on_tf1['acc']
    assert on_runner['loss'] == pytest.approx(on_tf1['loss'], rel=1e-6)
    assert run(tf1_python, tmp_path / 'runner', 0) == pytest.approx(on_runner, rel=1e-6)


def test_a_keras_optimizer_on_two_replicas_steps_once_and_trains_as_one_device(tmp_path):
    """Its iterations are the global step: two replicas' one update counts one step, and 5
    steps of 8 examples each equal one device's 5 steps of 16."""
    program = tmp_path / 'replicas.py'
    program.write_text(textwrap.dedent('''
        import json, sys
        import numpy as np
        import tensorflow as tf
        model_dir, replicas = sys.argv[1], int(sys.argv[2])
        seeded = lambda seed: tf.keras.initializers.glorot_uniform(seed=seed)
        inputs = tf.keras.Input((4,), name='x')
        net = tf.keras.layers.Dense(8, activation='relu', kernel_initializer=seeded(1))(inputs)
        outputs = tf.keras.layers.Dense(3, activation='softmax', kernel_initializer=seeded(2),
                                        name='probs')(net)
        model = tf.keras.Model(inputs, outputs)
        model.compile(tf.keras.optimizers.Adam(0.01), 'sparse_categorical_crossentropy')
        config = tf.estimator.RunConfig(train_distribute=tf.contrib.distribute.MirroredStrategy(
            num_gpus=replicas)) if replicas > 1 else None
        estimator = tf.keras.estimator.model_to_estimator(model, model_dir=model_dir,
                                                          config=config)
        rng = np.random.RandomState(0)
        x = rng.randn(64, 4).astype(np.float32)
        y = (x[:, 0] > 0).astype(np.int64)
        estimator.train(lambda: tf.data.Dataset.from_tensor_slices(({'x': x}, y)).batch(
            16 // replicas).repeat(), steps=5)
        print(json.dumps({name: np.asarray(estimator.get_variable_value(name)).tolist()
                          for name in estimator.get_variable_names()}))
    '''))
    found = []
    for replicas in (1, 2):
        result = subprocess.run(
            [sys.executable, '-m', 'towers.legacy', '--legacy_devices', str(replicas),
             str(program), str(tmp_path / str(replicas)), str(replicas)],
            cwd=REPO, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr[-3000:]
        found.append(json.loads(result.stdout.strip().splitlines()[-1]))
    one, two = found
    assert one['global_step'] == two['global_step'] == 5
    assert sorted(one) == sorted(two) and 'training/Adam/probs/kernel/m' in one
    for name in one:
        np.testing.assert_allclose(two[name], one[name], atol=1e-6, err_msg=name)
