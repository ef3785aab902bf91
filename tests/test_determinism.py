"""Specification of bit-reproducible training (`towers.training.determinism`): one seed trains
to the same bytes, resumed or not, another seed does not, and a cluster is refused."""
import logging
import os

import pytest

import small_net
import towers
from checkpoint_bytes import differing
from towers import cluster, compat, datasets, flags
from towers.compat import tf
from towers.errors import TowersError

STEPS = 6
BATCH = 8


def noisy_input():
    """The small net's examples shuffled, with stateless noise: every batch depends on the
    seed and on its position in the stream."""
    images, labels = small_net.batch(32)
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(32).repeat()
    dataset = datasets.with_random_keys(dataset.batch(BATCH, drop_remainder=True))
    dataset = dataset.map(lambda key, batch: (
        batch[0] + 0.3 * tf.random.stateless_normal(tf.shape(batch[0]), key), batch[1]))
    return datasets.training_batches(dataset.prefetch(2))


def fit(train_dir, max_steps=STEPS, input_fn=noisy_input, mode=None, **options):
    """The small net on 2 towers to `max_steps`, deterministic with seed 1 unless `options` say
    otherwise; returns the checkpoint of its last step."""
    options = dict({'seed': 1, 'deterministic': True}, **options)
    towers.fit(small_net.SmallRecipe(), input_fn, towers.configure_devices(2), None,
               str(train_dir), max_steps, BATCH, mode=mode, printer=lambda *_, **__: None,
               **options)
    return os.path.join(str(train_dir), 'model.ckpt-%d' % max_steps)


def test_the_same_seed_trains_to_the_same_bytes(tmp_path):
    assert differing(fit(tmp_path / 'first'), fit(tmp_path / 'second')) == []


def test_another_seed_trains_to_other_values(tmp_path):
    assert 'conv/weights' in differing(fit(tmp_path / 'one'), fit(tmp_path / 'two', seed=2))


def test_a_run_stopped_and_resumed_ends_as_one_never_interrupted(tmp_path):
    fit(tmp_path / 'resumed', max_steps=STEPS // 2)
    assert differing(fit(tmp_path / 'resumed'), fit(tmp_path / 'whole')) == []


def test_the_replicated_mode_in_mixed_precision_trains_to_the_same_bytes(tmp_path):
    mode = towers.Mode('replicated', mixed_precision=True)
    assert differing(fit(tmp_path / 'first', mode=mode), fit(tmp_path / 'second', mode=mode)) == []


def test_a_checkpoint_without_input_position_resumes_with_the_input_from_its_beginning(
        tmp_path, caplog):
    fit(tmp_path / 'train', max_steps=2, deterministic=False)
    with caplog.at_level(logging.WARNING):
        fit(tmp_path / 'train', max_steps=4)
    assert 'holds no input position (written without determinism)' in caplog.text


def test_a_checkpoint_with_input_position_resumes_without_determinism(tmp_path):
    fit(tmp_path / 'train', max_steps=2)
    fit(tmp_path / 'train', max_steps=4, deterministic=False)
    assert tf.train.latest_checkpoint(str(tmp_path / 'train')).endswith('model.ckpt-4')


def test_op_determinism_is_on_while_training_only(tmp_path):
    seen = []

    def input_fn():
        seen.append(compat.op_determinism_enabled())
        return noisy_input()
    fit(tmp_path / 'train', max_steps=1, input_fn=input_fn)
    assert seen == [True] and not compat.op_determinism_enabled()


@pytest.mark.parametrize('sync', ['--sync_replicas', '--nosync_replicas'])
def test_a_cluster_refuses_determinism_in_one_line(sync):
    parser = flags.FlagParser()
    flags.add_training_flags(parser)
    args = parser.parse_args(['--deterministic', sync, '--job_name', 'worker', '--ps_hosts',
                              'localhost:2222', '--worker_hosts', 'localhost:2223'])
    with pytest.raises(TowersError, match=r'^--deterministic trains in one process: .* the '
                                          r'order they arrive') as refused:
        cluster.from_flags(args, environ={})
    assert '\n' not in str(refused.value)
