"""Trains the attention model of `model` on a generated task (each target token is a fixed
map of its source token) on --num_gpus towers that share their variables and average their
gradients (LazyAdam), then decodes the first batch greedily and by beam search; run as a
module, as tensorflow/nmt was: `python -m seq2seq.train --out_dir D`. Prints one JSON line."""
import json
import os

import numpy as np
import tensorflow as tf

from . import model

flags = tf.app.flags
flags.DEFINE_integer('num_gpus', 1, 'Towers.')
flags.DEFINE_integer('steps', 30, 'Training steps (0: only restore and decode).')
flags.DEFINE_integer('beam_width', 3, 'Beam width of the inference.')
flags.DEFINE_string('out_dir', '', 'Where the checkpoint is written.')
flags.DEFINE_string('restore', '', 'A checkpoint to start from.')
FLAGS = flags.FLAGS

VOCAB, UNITS, BATCH, LENGTH = 12, 16, 8, 6


def batches():
    """(source, source length, target input, target output, target length), in turns."""
    rng = np.random.RandomState(0)
    lengths = rng.randint(2, LENGTH, size=BATCH).astype(np.int32)
    source = rng.randint(3, VOCAB, size=(BATCH, LENGTH)).astype(np.int32)
    source *= np.arange(LENGTH) < lengths[:, None]
    target = np.where(source > 0, (source * 5) % (VOCAB - 3) + 3, 0).astype(np.int32)
    target_in = np.concatenate([np.full((BATCH, 1), model.SOS, np.int32), target], 1)
    target_out = np.concatenate([target, np.zeros((BATCH, 1), np.int32)], 1)
    target_out[np.arange(BATCH), lengths] = model.EOS
    data = tf.data.Dataset.from_tensors((source, lengths, target_in, target_out, lengths + 1))
    return data.repeat().make_one_shot_iterator().get_next()


def average_gradients(tower_grads):
    averaged = []
    for pairs in zip(*tower_grads):
        grads = [tf.convert_to_tensor(g) for g, _ in pairs]
        averaged.append((tf.add_n(grads) / len(grads), pairs[0][1]))
    return averaged


def main(_):
    hparams = tf.contrib.training.HParams(vocab_size=VOCAB, num_units=UNITS,
                                          max_length=LENGTH + 2)
    source, source_length, target_in, target_out, target_length = batches()
    optimizer = tf.contrib.opt.LazyAdamOptimizer(0.02)
    tower_grads, losses = [], []
    split = lambda t: tf.split(t, FLAGS.num_gpus)
    with tf.variable_scope(tf.get_variable_scope()):
        for i, parts in enumerate(zip(*map(split, (source, source_length, target_in,
                                                   target_out, target_length)))):
            with tf.device('/gpu:%d' % i), tf.name_scope('tower_%d' % i):
                memory = model.encode(parts[0], parts[1], hparams)
                logits = model.decode(memory, parts[1], hparams, parts[2], parts[4])
                tower_loss = model.loss(logits, parts[3], parts[4])
                tf.get_variable_scope().reuse_variables()
                losses.append(tower_loss)
                tower_grads.append(optimizer.compute_gradients(tower_loss))
    global_step = tf.train.get_or_create_global_step()
    train_op = optimizer.apply_gradients(average_gradients(tower_grads), global_step)
    loss = tf.add_n(losses) / len(losses)
    with tf.variable_scope(tf.get_variable_scope(), reuse=True):
        memory = model.encode(source, source_length, hparams)
        greedy, _ = model.decode(memory, source_length, hparams)
        beam, scores = model.decode(memory, source_length, hparams,
                                    beam_width=FLAGS.beam_width)
    saver = tf.train.Saver()
    config = tf.ConfigProto(allow_soft_placement=True, intra_op_parallelism_threads=1,
                            inter_op_parallelism_threads=1)
    with tf.Session(config=config) as session:
        session.run(tf.global_variables_initializer())
        if FLAGS.restore:
            saver.restore(session, FLAGS.restore)
        curve = [float(session.run([train_op, loss])[1]) for _ in range(FLAGS.steps)]
        if FLAGS.out_dir:
            saver.save(session, os.path.join(FLAGS.out_dir, 'model.ckpt'), global_step)
        found = session.run({'greedy': greedy, 'beam': beam, 'scores': scores,
                             'target': target_out})
    print(json.dumps({'loss': curve, 'greedy': found['greedy'].tolist(),
                      'beam': found['beam'].tolist(), 'target': found['target'].tolist(),
                      'scores': found['scores'].tolist()}))


if __name__ == '__main__':
    tf.app.run()
