"""A TF1 Horovod program of the kind the tests run under `towers-legacy --np N`: written as
Horovod's examples were (hvd.init, the batch sharded by rank, DistributedOptimizer,
BroadcastGlobalVariablesHook, checkpoints on rank 0 only), with what each test reads written
to --out/rank<R>.json.

Three models train side by side on the same batches, each with its own DistributedOptimizer:
'dense_sparse' (an embedding, whose gradient is an IndexedSlices, and dense layers; momentum),
'aggregated' (backward_passes_per_step=2) and 'adasum' (op=hvd.Adasum). Beside them the
collectives on fixed values: allreduce with each op, scale factors and fp16 compression,
allgather of a different number of rows per rank (also changing from step to step), broadcast
from rank 1.
"""
import argparse
import json
import os
import signal

import numpy as np
import tensorflow as tf
import horovod.tensorflow as hvd

parser = argparse.ArgumentParser()
parser.add_argument('--steps', type=int, default=4)
parser.add_argument('--global_batch', type=int, default=8)
parser.add_argument('--out', required=True)
parser.add_argument('--checkpoint_dir')
parser.add_argument('--kill_rank', type=int, default=-1)
parser.add_argument('--kill_step', type=int, default=-1)
parser.add_argument('--extra_collective_rank', type=int, default=-1)
args = parser.parse_args()

hvd.init()
rng = np.random.RandomState(0)
ids = rng.randint(0, 10, size=(args.steps, args.global_batch, 3))
features = rng.rand(args.steps, args.global_batch, 4).astype(np.float32)
labels = rng.randint(0, 3, size=(args.steps, args.global_batch))
per_rank = args.global_batch // hvd.size()

id_input = tf.placeholder(tf.int32, [None, 3])
feature_input = tf.placeholder(tf.float32, [None, 4])
label_input = tf.placeholder(tf.int64, [None])


def model(name):
    with tf.variable_scope(name):
        # Each rank starts from its own value: only rank 0's broadcast makes them equal.
        start = tf.get_variable('start', [4, 3], initializer=tf.constant_initializer(
            float(hvd.rank() + 1)))
        embedding = tf.get_variable('embedding', [10, 4])
        pooled = tf.reduce_mean(tf.nn.embedding_lookup(embedding, id_input), axis=1)
        hidden = tf.layers.dense(tf.concat([pooled, feature_input], 1), 6, tf.nn.relu,
                                 name='hidden')
        logits = tf.layers.dense(hidden, 4, name='proj') @ start
        return start, tf.losses.sparse_softmax_cross_entropy(label_input, logits)


global_step = tf.train.get_or_create_global_step()
# The models first: their initial values come from the graph's seed and the number of ops made
# before them, which the collectives would change between a job of one rank and of two.
start, loss = model('dense_sparse')
_, aggregated_loss = model('aggregated')
_, adasum_loss = model('adasum')
train_ops = [hvd.DistributedOptimizer(tf.train.MomentumOptimizer(0.1, 0.9)).minimize(
    loss, global_step=global_step)]
train_ops.append(hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                          backward_passes_per_step=2,
                                          sparse_as_dense=True).minimize(aggregated_loss))
train_ops.append(hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(0.1),
                                          op=hvd.Adasum).minimize(adasum_loss))

value = (tf.constant([1.0, -2.0, 3.0]) * float(hvd.rank() + 1)
         + tf.constant([0.0, 0.5, 0.0]) * float(hvd.rank()))
collectives = {
    'sum': hvd.allreduce(value, op=hvd.Sum),
    'average': hvd.allreduce(value),
    'min': hvd.allreduce(value, op=hvd.Min),
    'max': hvd.allreduce(value, op=hvd.Max),
    'product': hvd.allreduce(value, op=hvd.Product),
    'scaled': hvd.allreduce(value, op=hvd.Sum, prescale_factor=0.5, postscale_factor=3.0),
    'fp16': hvd.allreduce(value, compression=hvd.Compression.fp16),
    'adasum': hvd.allreduce(value, op=hvd.Adasum),
    'grouped': hvd.grouped_allreduce([value, 2.0 * value], op=hvd.Sum),
    'gathered': hvd.allgather(tf.fill([hvd.rank() + 1, 2], hvd.rank())),
    'from_rank_1': hvd.broadcast(value, 1 if hvd.size() > 1 else 0),
}
# A gather whose rows change from step to step: (step + rank) % 3 + 1 rows of the rank's id.
rows = tf.placeholder(tf.int32, [])
varying = hvd.allgather(tf.fill([rows, 1], hvd.rank()))
extra = hvd.allreduce(tf.constant([1.0], name='extra'))

final = tf.train.FinalOpsHook({variable.op.name: variable.value()
                               for variable in tf.global_variables()})
hooks = [hvd.BroadcastGlobalVariablesHook(0), tf.train.StopAtStepHook(last_step=args.steps),
         final]
checkpoint_dir = args.checkpoint_dir if hvd.rank() == 0 else None
record = {'losses': [], 'varying': [], 'rank': hvd.rank(), 'size': hvd.size()}
with tf.train.MonitoredTrainingSession(checkpoint_dir=checkpoint_dir, hooks=hooks,
                                       save_checkpoint_steps=1,
                                       save_summaries_steps=None) as session:
    record['start_step'] = int(session.run(global_step))
    record['start_after_broadcast'] = session.run(start).tolist()
    print('rank %d starts at step %d' % (hvd.rank(), record['start_step']), flush=True)
    record.update({name: np.asarray(session.run(tensor)).tolist()
                   for name, tensor in collectives.items()})
    if hvd.rank() == args.extra_collective_rank:  # a collective the other ranks never run
        session.run(extra)
    while not session.should_stop():
        step = session.run(global_step)
        if hvd.rank() == args.kill_rank and step == args.kill_step:
            os.kill(os.getpid(), signal.SIGKILL)
        shard = slice(hvd.rank() * per_rank, (hvd.rank() + 1) * per_rank)
        feed = {id_input: ids[step, shard], feature_input: features[step, shard],
                label_input: labels[step, shard]}
        record['varying'].append(session.run(varying, {rows: (step + hvd.rank()) % 3 + 1})
                                 .ravel().tolist())
        record['losses'].append(float(session.run([train_ops, loss], feed)[1]))
record['variables'] = {name: value.tolist() for name, value in final.final_ops_values.items()}
os.makedirs(args.out, exist_ok=True)
with open(os.path.join(args.out, 'rank%d.json' % hvd.rank()), 'w') as f:
    json.dump(record, f)
