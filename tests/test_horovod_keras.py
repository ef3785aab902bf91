"""Specification of `horovod.tensorflow.keras` under the legacy runner
(`towers.legacy.horovod.keras` and `.callbacks`): a tf.keras program of 2 ranks trains as one
rank on the ranks' whole batch, from rank 0's weights; the epoch's metrics are averaged over
the ranks; the learning-rate callbacks follow Horovod's arithmetic; a saved model reloads with
its optimizer distributed again, and without Horovod."""
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from towers.compat import keras
from towers.legacy.horovod import callbacks, ranks

# Written as Horovod's Keras examples were; the batch of 4 per rank is sharded by rank.
# Given learning rates (one per step), it sets them instead of warming up: the run of one
# rank then follows the run of two's rates.
PROGRAM = textwrap.dedent('''\
    import json
    import sys

    import numpy as np
    import tensorflow as tf
    import horovod.tensorflow.keras as hvd

    hvd.init()
    K = tf.keras.backend
    features = np.linspace(-1.0, 1.0, 48, dtype=np.float32).reshape(16, 3)
    labels = np.sin(3.0 * features).sum(axis=1, keepdims=True)
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation='tanh', input_shape=(3,)),
                                 tf.keras.layers.Dense(1)])
    model.compile(loss='mse', optimizer=hvd.DistributedOptimizer(tf.keras.optimizers.SGD(0.1)))
    record = {'own_weights': [w.tolist() for w in model.get_weights()], 'lr': [],
              'loss': [], 'averaged_loss': []}
    Lambda = tf.keras.callbacks.LambdaCallback
    rates = [float(rate) for rate in sys.argv[1:]]
    if rates:
        schedule = Lambda(on_batch_begin=lambda batch, logs: K.set_value(
            model.optimizer.lr, rates[K.get_value(model.optimizer.iterations)]))
    else:
        schedule = hvd.callbacks.LearningRateWarmupCallback(initial_lr=0.1, warmup_epochs=2)
    model.fit(features[hvd.rank()::hvd.size()], labels[hvd.rank()::hvd.size()],
              batch_size=8 // hvd.size(), epochs=2, shuffle=False, verbose=0, callbacks=[
        hvd.callbacks.BroadcastGlobalVariablesCallback(0),
        Lambda(on_train_begin=lambda logs: record.update(
            start_weights=[w.tolist() for w in model.get_weights()])),
        Lambda(on_epoch_end=lambda epoch, logs: record['loss'].append(float(logs['loss']))),
        hvd.callbacks.MetricAverageCallback(),
        Lambda(on_epoch_end=lambda epoch, logs: record['averaged_loss'].append(
            float(logs['loss']))),
        schedule,
        Lambda(on_batch_begin=lambda batch, logs: record['lr'].append(
            float(K.get_value(model.optimizer.lr))))])
    record['weights'] = [w.tolist() for w in model.get_weights()]
    if hvd.rank() == 0:
        model.save('model.h5')
        reloaded = hvd.load_model('model.h5')
        record['reloaded_distributed'] = type(reloaded.optimizer) is type(model.optimizer)
        record['reloaded_weights'] = [w.tolist() for w in reloaded.get_weights()]
        plain = tf.keras.models.load_model('model.h5')
        record['reloaded_without_horovod'] = type(plain.optimizer) is tf.keras.optimizers.SGD
    with open('rank%d-of-%d.json' % (hvd.rank(), hvd.size()), 'w') as f:
        json.dump(record, f)
''')


def run_program(directory, *args):
    result = subprocess.run([sys.executable, '-m', 'towers.legacy', '--seed', '1'] + list(args),
                            cwd=directory, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


@pytest.fixture(scope='module')
def trained(tmp_path_factory):
    """The program's records on 2 ranks, and as one rank (batch 8) at the 2 ranks' rates; rank
    r draws with the seed 1 + r."""
    directory = tmp_path_factory.mktemp('horovod_keras')
    (directory / 'train.py').write_text(PROGRAM)
    run_program(directory, '--np', '2', 'train.py')
    rank0, rank1 = [json.loads((directory / ('rank%d-of-2.json' % rank)).read_text())
                    for rank in (0, 1)]
    run_program(directory, 'train.py', *[str(rate) for rate in rank0['lr']])
    return rank0, rank1, json.loads((directory / 'rank0-of-1.json').read_text())


def assert_weights_close(actual, expected, atol):
    for index, (a, e) in enumerate(zip(actual, expected)):
        np.testing.assert_allclose(a, e, rtol=0, atol=atol, err_msg='weight %d' % index)


def test_two_ranks_train_as_one_rank_on_their_whole_batch(trained):
    rank0, rank1, alone = trained
    assert_weights_close(rank0['own_weights'], alone['own_weights'], atol=0)
    assert_weights_close(rank0['weights'], alone['weights'], atol=1e-5)
    assert_weights_close(rank1['weights'], rank0['weights'], atol=0)


def test_every_rank_starts_from_rank_0s_weights(trained):
    rank0, rank1, _ = trained
    assert not np.allclose(rank1['own_weights'][0], rank0['own_weights'][0])
    assert_weights_close(rank1['start_weights'], rank0['own_weights'], atol=0)


def test_the_epochs_metrics_are_averaged_over_the_ranks(trained):
    rank0, rank1, alone = trained
    assert rank0['loss'] != rank1['loss']
    mean = (np.array(rank0['loss']) + rank1['loss']) / 2
    np.testing.assert_allclose(rank0['averaged_loss'], mean, rtol=1e-6)
    np.testing.assert_allclose(rank1['averaged_loss'], mean, rtol=1e-6)
    np.testing.assert_allclose(rank0['averaged_loss'], alone['loss'], rtol=1e-5)


def test_the_warmup_raises_the_rate_from_initial_lr_over_size_to_initial_lr(trained):
    rank0, rank1, _ = trained
    # 2 steps an epoch: lr = 0.1 / 2 * (e * (2 - 1) / 2 + 1), e = epoch + (batch + 1) / 2.
    expected = [0.1 / 2 * (e / 2 + 1) for e in (0.5, 1.0, 1.5, 2.0)]
    np.testing.assert_allclose(rank0['lr'], expected, rtol=1e-6)
    assert rank1['lr'] == rank0['lr']


def test_a_saved_model_reloads_with_its_optimizer_distributed_and_without_horovod(trained):
    rank0, _, _ = trained
    assert rank0['reloaded_distributed'] and rank0['reloaded_without_horovod']
    assert_weights_close(rank0['reloaded_weights'], rank0['weights'], atol=0)


def rates_seen(schedule, optimizer, epochs):
    """(learning rate, momentum) at every batch of a `fit` of a small model with `optimizer`
    and the callback `schedule`; 2 batches an epoch."""
    model = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
    model.compile(loss='mse', optimizer=optimizer)
    seen = []
    record = keras.callbacks.LambdaCallback(on_batch_begin=lambda batch, logs: seen.append(
        (float(keras.backend.get_value(optimizer.lr)),
         float(keras.backend.get_value(optimizer.momentum)))))
    x = np.ones((8, 2), np.float32)
    model.fit(x, x[:, :1], batch_size=4, epochs=epochs, verbose=0, callbacks=[schedule, record])
    return seen


def test_a_number_multiplier_decays_the_rate_by_epoch_from_initial_lr():
    schedule = callbacks.LearningRateScheduleCallback(initial_lr=1.0, multiplier=0.5,
                                                      start_epoch=1, end_epoch=3)
    seen = rates_seen(schedule, keras.optimizers.legacy.SGD(0.3), epochs=4)
    np.testing.assert_allclose([lr for lr, _ in seen], [0.3] * 2 + [1.0] * 2 + [0.5] * 4)


def test_without_initial_lr_a_number_multiplier_scales_the_optimizers_rate():
    schedule = callbacks.LearningRateScheduleCallback(multiplier=0.1, start_epoch=1)
    seen = rates_seen(schedule, keras.optimizers.legacy.SGD(0.2), epochs=3)
    np.testing.assert_allclose([lr for lr, _ in seen], [0.2] * 2 + [0.02] * 4)


def test_the_momentum_is_scaled_in_the_batch_the_rate_changes_in_and_restored_after():
    schedule = callbacks.LearningRateScheduleCallback(
        initial_lr=0.1, multiplier=lambda epoch: 2.0 ** epoch)
    seen = rates_seen(schedule, keras.optimizers.legacy.SGD(0.1, momentum=0.5), epochs=2)
    np.testing.assert_allclose(seen, [(0.1, 0.5), (0.1, 0.5), (0.2, 1.0), (0.2, 0.5)])


def test_the_warmup_of_4_ranks_starts_at_a_quarter_and_ends_at_initial_lr(monkeypatch):
    monkeypatch.setattr(ranks, 'world', lambda: ranks.World(size=4))
    warmup = callbacks.LearningRateWarmupCallback(initial_lr=0.4, warmup_epochs=2)
    seen = rates_seen(warmup, keras.optimizers.legacy.SGD(0.4), epochs=3)
    # lr = 0.4 / 4 * (e * 3 / 2 + 1), e = epoch + (batch + 1) / 2; the third epoch keeps it.
    np.testing.assert_allclose([lr for lr, _ in seen],
                               [0.1 * (e * 1.5 + 1) for e in (0.5, 1.0, 1.5, 2.0, 2.0, 2.0)])
