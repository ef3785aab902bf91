"""`tf.contrib.training.bucket` and `bucket_by_sequence_length`: TF 1.x's queue-runner input
helpers that batch examples of similar length together (speech, text and OCR code of 2017-2019
used them), built on the queues TensorFlow 2 still has in `tf.compat.v1`.

    length, (texts, audio) = tf.contrib.training.bucket_by_sequence_length(
        text_length, [text, audio], batch_size=32, bucket_boundaries=[50, 100, 200],
        dynamic_pad=True)                  # run tf.train.start_queue_runners, as TF 1.x did

Each example goes to one bucket queue; a queue runner per bucket moves whole batches from it to
a top queue, from which the batches are dequeued with their bucket's index. Sparse tensors are
not provided.
"""
import numpy as np

from towers.compat import tf
from towers.legacy.modules import LegacyError

_CLOSED = (tf.errors.OutOfRangeError, tf.errors.CancelledError)


def _as_list(tensors):
    """`tensors` (a list, tuple or dict) as a list, dict values in the order of their keys."""
    return [tensors[key] for key in sorted(tensors)] if isinstance(tensors, dict) else list(
        tensors)


def _like(tensors, values):
    """`values` (a list) in the structure of `tensors`."""
    return dict(zip(sorted(tensors), values)) if isinstance(tensors, dict) else values


def bucket(tensors, which_bucket, batch_size, num_buckets, num_threads=1, capacity=32,
           bucket_capacities=None, shapes=None, dynamic_pad=False,
           allow_smaller_final_batch=False, keep_input=True, shared_name=None, name=None):
    """Batches of `tensors`, each from the examples put in one of `num_buckets` buckets.

    Args:
      tensors: a list or dict of the tensors of one example.
      which_bucket: int32 [] in [0, num_buckets): the example's bucket.
      batch_size: the batch size, or a list of one per bucket.
      num_threads: how many threads enqueue examples.
      capacity, bucket_capacities: the top queue's capacity, and each bucket's (default
        `capacity`).
      shapes: the examples' shapes (default: the tensors' static shapes).
      dynamic_pad: pad each batch to its longest example (shapes may have None dimensions).
      allow_smaller_final_batch: let a bucket's last batch be smaller.
      keep_input: bool [], whether to enqueue this example at all.
      shared_name, name: the queues' shared name and the ops' name scope.

    Returns:
      (int32 [] the batch's bucket, the batch in the structure of `tensors`: each tensor
      [batch, ...]).
    """
    flat = _as_list(tensors)
    batch_sizes = (list(batch_size) if isinstance(batch_size, (list, tuple))
                   else [batch_size] * num_buckets)
    bucket_capacities = bucket_capacities or [capacity] * num_buckets
    if len(batch_sizes) != num_buckets or len(bucket_capacities) != num_buckets:
        raise ValueError('batch_size and bucket_capacities must be one number or a list of '
                         'num_buckets (%d) numbers' % num_buckets)
    with tf.name_scope(name, 'bucket', flat):
        if any(isinstance(tensor, tf.SparseTensor) for tensor in flat):
            raise LegacyError('tf.contrib.training.bucket of a SparseTensor is not available: '
                              'towers-legacy buckets dense tensors only')
        flat = [tf.convert_to_tensor(tensor) for tensor in flat]
        shapes = [tf.TensorShape(shape) for shape in shapes or [t.shape for t in flat]]
        queue_class = tf.PaddingFIFOQueue if dynamic_pad else tf.FIFOQueue
        bucket_queues = [queue_class(capacity=bucket_capacity, dtypes=[t.dtype for t in flat],
                                     shapes=shapes, name='bucket_queue_%d' % i,
                                     shared_name=shared_name and '%s_%d' % (shared_name, i))
                         for i, bucket_capacity in enumerate(bucket_capacities)]
        batch = (None if allow_smaller_final_batch or len(set(batch_sizes)) > 1
                 else batch_sizes[0])
        top_queue = tf.PaddingFIFOQueue(
            capacity=capacity, dtypes=[tf.int32] + [t.dtype for t in flat],
            shapes=[[]] + [tf.TensorShape([batch]).concatenate(shape) for shape in shapes],
            shared_name=shared_name, name='top_queue')
        which_bucket = tf.convert_to_tensor(which_bucket, tf.int32, name='which_bucket')

        def enqueue_in_its_bucket():
            return tf.group(*[tf.cond(tf.equal(which_bucket, i),
                                      lambda queue=queue: queue.enqueue(flat), tf.no_op)
                              for i, queue in enumerate(bucket_queues)], name='group_enqueues')
        enqueue = tf.cond(tf.convert_to_tensor(keep_input, tf.bool), enqueue_in_its_bucket,
                          tf.no_op)
        for i, (queue, size) in enumerate(zip(bucket_queues, batch_sizes)):
            take = queue.dequeue_up_to if allow_smaller_final_batch else queue.dequeue_many
            taken = take(size, name='read_bucket_%d' % i)
            move = top_queue.enqueue([tf.constant(i)] + (
                list(taken) if isinstance(taken, (list, tuple)) else [taken]),
                name='enqueue_from_bucket_%d' % i)
            tf.train.add_queue_runner(tf.train.QueueRunner(queue, [move],
                                                           queue_closed_exception_types=_CLOSED))
            tf.summary.scalar('bucket/%s/size' % queue.name, tf.cast(queue.size(), tf.float32))
        tf.train.add_queue_runner(tf.train.QueueRunner(top_queue, [enqueue] * num_threads,
                                                       queue_closed_exception_types=_CLOSED))
        tf.summary.scalar('bucket/%s/size' % top_queue.name,
                          tf.cast(top_queue.size(), tf.float32))
        dequeued = top_queue.dequeue(name='dequeue_top')
        return dequeued[0], _like(tensors, list(dequeued[1:]))


def bucket_by_sequence_length(input_length, tensors, batch_size, bucket_boundaries,
                              num_threads=1, capacity=32, bucket_capacities=None, shapes=None,
                              dynamic_pad=False, allow_smaller_final_batch=False,
                              keep_input=True, shared_name=None, name=None):
    """`bucket` by `input_length` (int32 []): bucket 0 below `bucket_boundaries[0]`, bucket i
    from `bucket_boundaries[i-1]` below `bucket_boundaries[i]`, the last from the last
    boundary up. Other arguments as for `bucket`.

    Returns:
      (int32 [batch] the examples' lengths, the batch in the structure of `tensors`).
    """
    flat = _as_list(tensors)
    with tf.name_scope(name, 'bucket_by_sequence_length', [input_length] + flat):
        input_length = tf.convert_to_tensor(input_length, tf.int32, name='input_length')
        lower = [np.iinfo(np.int32).min] + list(bucket_boundaries)
        upper = list(bucket_boundaries) + [np.iinfo(np.int32).max]
        inside = tf.logical_and(tf.less_equal(lower, input_length), tf.less(input_length, upper))
        which_bucket = tf.cast(tf.reduce_min(tf.where(inside)), tf.int32)
        _, dequeued = bucket(
            [input_length] + flat, which_bucket, batch_size, len(bucket_boundaries) + 1,
            num_threads=num_threads, capacity=capacity, bucket_capacities=bucket_capacities,
            shapes=None if shapes is None else [[]] + list(shapes), dynamic_pad=dynamic_pad,
            allow_smaller_final_batch=allow_smaller_final_batch, keep_input=keep_input,
            shared_name=shared_name)
        return dequeued[0], _like(tensors, dequeued[1:])
