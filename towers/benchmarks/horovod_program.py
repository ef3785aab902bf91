"""The TF1 program `towers.benchmarks.horovod` times: a registered model's step written as TF1
programs wrote it, run under `towers-legacy` as one process of K towers or as a Horovod rank.

    towers-legacy --np 2 horovod_program.py --model cifar10 --batch_size 32 --sync_dir D --name h
    towers-legacy --legacy_devices 2 horovod_program.py --towers 2 ...     # towers, one process

Each tower (or rank) takes `--batch_size` examples of an in-memory batch through the model's
tower and gradient descent; K towers average their gradients on the CPU (`average_gradients`),
ranks through `hvd.DistributedOptimizer`. After `--warmup_steps` untimed steps the program
waits, round by round, for the file `go-<name>-<round>` in `--sync_dir`, times `--steps` steps
and writes (rank 0) `<name>-<round>.json`: {"seconds": wall time of the steps, "examples": the
examples all ranks and towers took}. After `--rounds` rounds one process ends; ranks wait for
`go-<name>-breakdown`, then time in turns, `--rounds` times `--steps` runs each, the step, the
step without collectives and an allreduce of a buffer of the gradients' size, and write (rank 0)
`<name>-breakdown.json`: {"milliseconds": {part: [per run, one per round]}, "gradient_bytes"}.
"""
import argparse
import os
import time

import tensorflow as tf
import horovod.tensorflow as hvd

from models import registry
from towers import files

parser = argparse.ArgumentParser()
parser.add_argument('--model', default='cifar10')
parser.add_argument('--towers', type=int, default=1)
parser.add_argument('--batch_size', type=int, required=True)
parser.add_argument('--warmup_steps', type=int, default=3)
parser.add_argument('--steps', type=int, default=10)
parser.add_argument('--rounds', type=int, default=3)
parser.add_argument('--threads', type=int, default=0)
parser.add_argument('--sync_dir', required=True)
parser.add_argument('--name', required=True)
args = parser.parse_args()


def average_gradients(tower_grads):
    averaged = []
    for pairs in zip(*tower_grads):
        grads = [tf.convert_to_tensor(grad) for grad, _ in pairs]
        averaged.append((tf.reduce_mean(tf.stack(grads), 0), pairs[0][1]))
    return averaged


hvd.init()
entry = registry.get(args.model)
recipe = entry.recipe(args.batch_size)
images, labels = entry.synthetic_batch(args.batch_size * args.towers)
optimizer = tf.train.GradientDescentOptimizer(0.01)
if hvd.size() > 1:
    optimizer = hvd.DistributedOptimizer(optimizer)
tower_grads = []
with tf.variable_scope(tf.get_variable_scope()):
    for index, (tower_images, tower_labels) in enumerate(
            zip(tf.split(images, args.towers), tf.split(labels, args.towers))):
        with tf.device('/gpu:%d' % index if args.towers > 1 else '/cpu:0'):
            loss = recipe.tower_fn((tower_images, tower_labels))['cross_entropy']
            tower_grads.append(optimizer.compute_gradients(loss))
            tf.get_variable_scope().reuse_variables()
with tf.device('/cpu:0'):
    grads = average_gradients(tower_grads) if args.towers > 1 else tower_grads[0]
    train_op = optimizer.apply_gradients(grads)
if hvd.size() > 1:
    # Where a rank's step goes: the same step without collectives, and the allreduce of a buffer
    # the size of its gradients alone.
    local_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    gradient_elements = sum(variable.shape.num_elements() for variable in tf.trainable_variables())
    buffer = tf.Variable(tf.ones([gradient_elements]), trainable=False, name='gradient_buffer',
                         collections=[tf.GraphKeys.LOCAL_VARIABLES])
    parts = {'step': train_op, 'computation': local_op, 'allreduce': hvd.allreduce(buffer)}
config = tf.ConfigProto(intra_op_parallelism_threads=args.threads,
                        inter_op_parallelism_threads=args.threads)
with tf.train.MonitoredTrainingSession(hooks=[hvd.BroadcastGlobalVariablesHook(0)],
                                       config=config, save_checkpoint_secs=None,
                                       save_summaries_steps=None) as session:
    for _ in range(args.warmup_steps):
        session.run(train_op)
    for round_index in range(args.rounds):
        go = os.path.join(args.sync_dir, 'go-%s-%d' % (args.name, round_index))
        while not os.path.exists(go):
            time.sleep(0.01)
        start = time.perf_counter()
        for _ in range(args.steps):
            session.run(train_op)
        seconds = time.perf_counter() - start
        if hvd.rank() == 0:
            files.write_json(os.path.join(args.sync_dir, '%s-%d.json' % (args.name, round_index)),
                             {'seconds': seconds, 'examples': args.steps * args.batch_size
                              * args.towers * hvd.size()})
    if hvd.size() > 1:
        go = os.path.join(args.sync_dir, 'go-%s-breakdown' % args.name)
        while not os.path.exists(go):
            time.sleep(0.01)
        for op in parts.values():  # each part's first run sets up its executors: untimed
            session.run(op)
        milliseconds = {name: [] for name in parts}
        for _ in range(args.rounds):
            for name, op in parts.items():
                start = time.perf_counter()
                for _ in range(args.steps):
                    session.run(op)
                milliseconds[name].append(1000 * (time.perf_counter() - start) / args.steps)
        if hvd.rank() == 0:
            files.write_json(os.path.join(args.sync_dir, '%s-breakdown.json' % args.name),
                             {'milliseconds': milliseconds,
                              'gradient_bytes': buffer.dtype.size * gradient_elements})
