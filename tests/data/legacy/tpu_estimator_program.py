"""A BERT-style TF 1.x classifier program, written against TF 1.15's API only: `TPUEstimator`
with `use_tpu=False` (as BERT's run_classifier.py ran on CPUs and GPUs), examples in TFRecord
files read with `tf.contrib.data.map_and_batch`, `tf.contrib.tpu.RunConfig`/`TPUConfig`, a
`scaffold_fn` restoring `--init_checkpoint`, `eval_metrics` as (metric_fn, tensors) and a
`host_call`; it trains, evaluates, then predicts on small generated data and prints what it
reached."""
import json
import os

import numpy as np
import tensorflow as tf

flags = tf.flags
FLAGS = flags.FLAGS
flags.DEFINE_string('output_dir', '/tmp/tpu_estimator_program', 'Where checkpoints go.')
flags.DEFINE_string('init_checkpoint', None, 'A checkpoint whose variables start training.')
flags.DEFINE_bool('use_tpu', False, 'Whether to use TPU or GPU/CPU.')
flags.DEFINE_string('tpu_name', None, 'The Cloud TPU to use for training.')
flags.DEFINE_string('master', None, 'TensorFlow master URL.')
flags.DEFINE_integer('num_tpu_cores', 8, 'Only used if use_tpu is True.')
flags.DEFINE_integer('train_batch_size', 16, 'Total batch size for training.')
flags.DEFINE_integer('eval_batch_size', 8, 'Total batch size for eval.')
flags.DEFINE_integer('predict_batch_size', 4, 'Total batch size for predict.')
flags.DEFINE_integer('num_train_steps', 60, 'Training steps.')
flags.DEFINE_integer('iterations_per_loop', 10, 'How many steps to make in each loop.')
flags.DEFINE_integer('save_checkpoints_steps', 20, 'How often to save the model.')
flags.DEFINE_float('learning_rate', 0.01, 'The initial learning rate for Adam.')
flags.DEFINE_string('report', '', 'Write the results here as JSON.')

SEQ_LENGTH = 8
VOCAB_SIZE = 20
HOST_CALL_STEPS = []


def make_examples(seed, count):
    """Token ids [count, SEQ_LENGTH]; the label is 1 where most tokens are in the lower half
    of the vocabulary."""
    rng = np.random.RandomState(seed)
    input_ids = rng.randint(0, VOCAB_SIZE, size=(count, SEQ_LENGTH))
    labels = (np.sum(input_ids < VOCAB_SIZE // 2, axis=1) > SEQ_LENGTH // 2).astype(np.int64)
    return input_ids, labels


def write_examples(input_ids, labels, path):
    with tf.python_io.TFRecordWriter(path) as writer:
        for ids, label in zip(input_ids, labels):
            feature = {
                'input_ids': tf.train.Feature(int64_list=tf.train.Int64List(value=list(ids))),
                'label_ids': tf.train.Feature(int64_list=tf.train.Int64List(value=[label])),
                'is_real_example': tf.train.Feature(int64_list=tf.train.Int64List(value=[1])),
            }
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            writer.write(example.SerializeToString())


def file_based_input_fn_builder(input_file, is_training, drop_remainder):
    name_to_features = {
        'input_ids': tf.FixedLenFeature([SEQ_LENGTH], tf.int64),
        'label_ids': tf.FixedLenFeature([], tf.int64),
        'is_real_example': tf.FixedLenFeature([], tf.int64),
    }

    def decode_record(record):
        example = tf.parse_single_example(record, name_to_features)
        return {name: tf.to_int32(value) for name, value in example.items()}

    def input_fn(params):
        batch_size = params['batch_size']
        d = tf.data.TFRecordDataset(input_file)
        if is_training:
            d = d.repeat()
            d = d.shuffle(buffer_size=100, seed=3)
        return d.apply(tf.contrib.data.map_and_batch(
            decode_record, batch_size=batch_size, drop_remainder=drop_remainder))

    return input_fn


def create_model(input_ids, labels, is_training):
    embeddings = tf.get_variable('embeddings', [VOCAB_SIZE, 16],
                                 initializer=tf.truncated_normal_initializer(stddev=0.02))
    pooled = tf.reduce_mean(tf.nn.embedding_lookup(embeddings, input_ids), axis=1)
    hidden = tf.layers.dense(pooled, 16, activation=tf.tanh, name='pooler')
    if is_training:
        hidden = tf.nn.dropout(hidden, keep_prob=0.9, seed=5)
    logits = tf.layers.dense(hidden, 2, name='output')
    probabilities = tf.nn.softmax(logits, axis=-1)
    one_hot = tf.one_hot(labels, depth=2, dtype=tf.float32)
    per_example_loss = -tf.reduce_sum(one_hot * tf.nn.log_softmax(logits, axis=-1), axis=-1)
    return tf.reduce_mean(per_example_loss), per_example_loss, logits, probabilities


def model_fn_builder(init_checkpoint, learning_rate):
    def model_fn(features, labels, mode, params):
        tf.logging.info('*** batch_size %s, use_tpu %s ***' % (params.get('batch_size'),
                                                              params.get('use_tpu')))
        input_ids = features['input_ids']
        label_ids = features['label_ids']
        is_real_example = tf.cast(features['is_real_example'], dtype=tf.float32)
        is_training = (mode == tf.estimator.ModeKeys.TRAIN)
        total_loss, per_example_loss, logits, probabilities = create_model(
            input_ids, label_ids, is_training)

        scaffold_fn = None
        if init_checkpoint:
            assignment_map = {name: name for name, _ in tf.train.list_variables(init_checkpoint)
                              if name != 'global_step' and 'Adam' not in name
                              and 'beta' not in name}

            def tpu_scaffold():
                tf.train.init_from_checkpoint(init_checkpoint, assignment_map)
                return tf.train.Scaffold()

            scaffold_fn = tpu_scaffold

        if mode == tf.estimator.ModeKeys.TRAIN:
            global_step = tf.train.get_or_create_global_step()
            optimizer = tf.train.AdamOptimizer(learning_rate)
            if params['use_tpu']:
                optimizer = tf.contrib.tpu.CrossShardOptimizer(optimizer)
            train_op = optimizer.minimize(total_loss, global_step=global_step)

            def host_call_fn(global_step, loss):
                def record(step, value):
                    HOST_CALL_STEPS.append((int(step[0]), float(value[0])))
                    return np.int64(len(HOST_CALL_STEPS))
                return [tf.py_func(record, [global_step, loss], tf.int64)]

            host_call = (host_call_fn, [tf.reshape(global_step, [1]),
                                        tf.reshape(total_loss, [1])])
            return tf.contrib.tpu.TPUEstimatorSpec(
                mode=mode, loss=total_loss, train_op=train_op, host_call=host_call,
                scaffold_fn=scaffold_fn)
        if mode == tf.estimator.ModeKeys.EVAL:
            def metric_fn(per_example_loss, label_ids, logits, is_real_example):
                predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
                accuracy = tf.metrics.accuracy(
                    labels=label_ids, predictions=predictions, weights=is_real_example)
                loss = tf.metrics.mean(values=per_example_loss, weights=is_real_example)
                return {'eval_accuracy': accuracy, 'eval_loss': loss}

            eval_metrics = (metric_fn, [per_example_loss, label_ids, logits, is_real_example])
            return tf.contrib.tpu.TPUEstimatorSpec(
                mode=mode, loss=total_loss, eval_metrics=eval_metrics, scaffold_fn=scaffold_fn)
        return tf.contrib.tpu.TPUEstimatorSpec(
            mode=mode, predictions={'probabilities': probabilities}, scaffold_fn=scaffold_fn)

    return model_fn


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    tf.gfile.MakeDirs(FLAGS.output_dir)
    tpu_cluster_resolver = None
    if FLAGS.use_tpu and FLAGS.tpu_name:
        tpu_cluster_resolver = tf.contrib.cluster_resolver.TPUClusterResolver(FLAGS.tpu_name)
    is_per_host = tf.contrib.tpu.InputPipelineConfig.PER_HOST_V2
    run_config = tf.contrib.tpu.RunConfig(
        cluster=tpu_cluster_resolver,
        master=FLAGS.master,
        model_dir=FLAGS.output_dir,
        save_checkpoints_steps=FLAGS.save_checkpoints_steps,
        tf_random_seed=11,
        tpu_config=tf.contrib.tpu.TPUConfig(
            iterations_per_loop=FLAGS.iterations_per_loop,
            num_shards=FLAGS.num_tpu_cores,
            per_host_input_for_training=is_per_host))
    estimator = tf.contrib.tpu.TPUEstimator(
        use_tpu=FLAGS.use_tpu,
        model_fn=model_fn_builder(FLAGS.init_checkpoint, FLAGS.learning_rate),
        config=run_config,
        train_batch_size=FLAGS.train_batch_size,
        eval_batch_size=FLAGS.eval_batch_size,
        predict_batch_size=FLAGS.predict_batch_size)

    files = {}
    for split, seed, count in (('train', 0, 512), ('eval', 1, 128), ('predict', 2, 8)):
        files[split] = os.path.join(FLAGS.output_dir, split + '.tf_record')
        write_examples(*make_examples(seed, count), path=files[split])

    estimator.train(input_fn=file_based_input_fn_builder(files['train'], True, True),
                    max_steps=FLAGS.num_train_steps)
    print('train: host_call ran %d times, steps %d to %d, loss %.4f to %.4f'
          % (len(HOST_CALL_STEPS), HOST_CALL_STEPS[0][0], HOST_CALL_STEPS[-1][0],
             HOST_CALL_STEPS[0][1], HOST_CALL_STEPS[-1][1]))

    result = estimator.evaluate(input_fn=file_based_input_fn_builder(files['eval'], False, True))
    print('eval: eval_accuracy %.4f eval_loss %.4f loss %.4f global_step %d'
          % (result['eval_accuracy'], result['eval_loss'], result['loss'],
             result['global_step']))

    predictions = list(estimator.predict(
        input_fn=file_based_input_fn_builder(files['predict'], False, False)))
    labels = make_examples(2, 8)[1]
    right = sum(int(np.argmax(p['probabilities']) == label)
                for p, label in zip(predictions, labels))
    print('predict: %d examples, %d right' % (len(predictions), right))
    if FLAGS.report:
        with open(FLAGS.report, 'w') as f:
            json.dump({'host_call_steps': HOST_CALL_STEPS,
                       'eval': {key: float(value) for key, value in result.items()},
                       'probabilities': [p['probabilities'].tolist() for p in predictions],
                       'right': right}, f)


if __name__ == '__main__':
    flags.mark_flag_as_required('output_dir')
    tf.app.run()
