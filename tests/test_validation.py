"""Specification of validation while training: the model's metric after every K-th step and
after the last, on its own line and in TensorBoard, in the training's session, with a training
trajectory identical to that of a run without it."""
import glob
import os
import re

import numpy as np
import pytest

import bn_net
import towers
from towers import TowersError
from towers.cluster.roles import SingleProcess
from towers.compat import tf
from towers.training.validation import array_batches

GLOBAL_BATCH = 8
VALIDATION_LINE = re.compile(r'^\S+ \S+: step (\d+), validation accuracy = (\d\.\d{4}) '
                             r'\(10 examples, \d+\.\d s\)$')


def shuffled_stream():
    """The training input: 32 examples shuffled with a fixed seed, repeated, in batches of 8."""
    images, labels = bn_net.batch(32)
    dataset = tf.data.Dataset.from_tensor_slices((images, labels)).shuffle(32, seed=1)
    return tf.data.make_one_shot_iterator(
        dataset.repeat().batch(GLOBAL_BATCH, drop_remainder=True)).get_next()


def train(train_dir, max_steps, eval_every_steps, recipe=None):
    """Trains the batch-norm net on 2 towers (one thread each: reproducible); returns (the
    printed lines, the final checkpoint's values by name)."""
    lines = []
    towers.fit(recipe or bn_net.BnRecipe(), shuffled_stream,
               towers.configure_devices(2, intra_op_threads=1, inter_op_threads=1),
               SingleProcess(), str(train_dir), max_steps, GLOBAL_BATCH,
               log_every_n_steps=1, eval_every_steps=eval_every_steps,
               validation_input=lambda: array_batches(bn_net.batch(10, seed=5), 4),
               printer=lambda line, flush: lines.append(line))
    checkpoint = tf.train.latest_checkpoint(str(train_dir))
    return lines, {name: tf.train.load_variable(checkpoint, name)
                   for name, _ in tf.train.list_variables(checkpoint)}


def test_the_metric_is_logged_after_every_kth_step_and_the_last_next_to_the_progress_line(
        tmp_path):
    lines, _ = train(tmp_path, max_steps=5, eval_every_steps=2)
    validated = [(index, VALIDATION_LINE.match(line)) for index, line in enumerate(lines)
                 if 'validation' in line]
    assert [int(match.group(1)) for _, match in validated] == [2, 4, 5]
    # Each follows the progress line of the step that made the global step K.
    assert [lines[index - 1].split(': ', 1)[1].split(',')[0] for index, _ in validated] == [
        'step 1', 'step 3', 'step 4']
    written = {}
    # In the `eval` run beside the training's, where the evaluation scripts write too.
    for path in glob.glob(os.path.join(str(tmp_path), 'eval', 'events.out.tfevents.*')):
        for event in tf.train.summary_iterator(path):
            for value in event.summary.value:
                if value.tag == 'validation/accuracy':
                    written[event.step] = value.simple_value
    assert sorted(written) == [2, 4, 5]
    assert [round(written[int(m.group(1))], 4) for _, m in validated] == [
        float(m.group(2)) for _, m in validated]


def test_validation_leaves_the_training_trajectory_identical(tmp_path):
    _, without = train(tmp_path / 'without', max_steps=4, eval_every_steps=0)
    lines, validated = train(tmp_path / 'with', max_steps=4, eval_every_steps=1)
    assert sum('validation' in line for line in lines) == 4
    assert sorted(validated) == sorted(without)
    assert 'bn2/moving_variance' in validated and 'global_step' in validated
    for name, value in without.items():
        assert np.array_equal(validated[name], value), name


class WithoutValidation(bn_net.BnRecipe):
    validation_outputs = towers.Recipe.validation_outputs


def test_validating_a_recipe_without_validation_is_an_error_naming_it(tmp_path):
    with pytest.raises(TowersError, match='^WithoutValidation has no validation'):
        train(tmp_path, max_steps=1, eval_every_steps=1, recipe=WithoutValidation())
