"""The functions of `tf.contrib.lookup` and `tf.contrib.data` that TensorFlow 2 has under
other names or not at all, written over `tf.lookup` and `tf.data`."""
from towers.compat import tf
from towers.legacy.modules import LegacyError


def batch_and_drop_remainder(batch_size):
    """`tf.contrib.data.batch_and_drop_remainder`: a `Dataset.apply` transformation into
    batches of exactly `batch_size`, the last incomplete one dropped."""
    return lambda dataset: dataset.batch(batch_size, drop_remainder=True)


def padded_batch_and_drop_remainder(batch_size, padded_shapes, padding_values=None):
    """`tf.contrib.data.padded_batch_and_drop_remainder`: as `batch_and_drop_remainder`,
    with each component padded to `padded_shapes`."""
    return lambda dataset: dataset.padded_batch(batch_size, padded_shapes, padding_values,
                                                drop_remainder=True)


def _index_table(initializer, num_oov_buckets, default_value, hasher_spec, name):
    """A table from keys to int64 ids: `default_value` for a key it lacks, or with
    `num_oov_buckets` > 0 one of that many hash buckets after the known ids (Fingerprint64,
    TF 1.x's default hasher)."""
    if hasher_spec is not None:
        raise LegacyError(
            'tf.contrib.lookup: hasher_spec is not available; towers-legacy\'s tables hash '
            'out-of-vocabulary keys with Fingerprint64, TF 1.x\'s default')
    if num_oov_buckets:
        return tf.lookup.StaticVocabularyTable(initializer, num_oov_buckets, name=name)
    return tf.lookup.StaticHashTable(initializer, default_value, name=name)


def index_table_from_tensor(vocabulary_list, num_oov_buckets=0, default_value=-1,
                            hasher_spec=None, dtype=tf.string, name=None):
    """`tf.contrib.lookup.index_table_from_tensor`: each entry of `vocabulary_list` (a 1-D
    tensor or list) maps to its position; run `tf.tables_initializer()` first."""
    keys = tf.convert_to_tensor(vocabulary_list, dtype)
    ids = tf.range(tf.size(keys, out_type=tf.int64), dtype=tf.int64)
    return _index_table(tf.lookup.KeyValueTensorInitializer(keys, ids), num_oov_buckets,
                        default_value, hasher_spec, name)


def index_table_from_file(vocabulary_file, num_oov_buckets=0, vocab_size=None,
                          default_value=-1, hasher_spec=None, key_dtype=tf.string, name=None,
                          key_column_index=tf.lookup.TextFileIndex.WHOLE_LINE,
                          value_column_index=tf.lookup.TextFileIndex.LINE_NUMBER,
                          delimiter='\t'):
    """`tf.contrib.lookup.index_table_from_file`: each line of `vocabulary_file` (the first
    `vocab_size`) maps to its line number."""
    initializer = tf.lookup.TextFileInitializer(
        vocabulary_file, key_dtype, key_column_index, tf.int64, value_column_index,
        vocab_size=vocab_size, delimiter=delimiter)
    return _index_table(initializer, num_oov_buckets, default_value, hasher_spec, name)


def index_to_string_table_from_tensor(vocabulary_list, default_value='UNK', name=None):
    """`tf.contrib.lookup.index_to_string_table_from_tensor`: int64 position -> entry of
    `vocabulary_list`, `default_value` beyond it."""
    values = tf.convert_to_tensor(vocabulary_list, tf.string)
    ids = tf.range(tf.size(values, out_type=tf.int64), dtype=tf.int64)
    return tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(ids, values),
                                     default_value, name=name)


def index_to_string_table_from_file(vocabulary_file, vocab_size=None, default_value='UNK',
                                    name=None,
                                    key_column_index=tf.lookup.TextFileIndex.LINE_NUMBER,
                                    value_column_index=tf.lookup.TextFileIndex.WHOLE_LINE,
                                    delimiter='\t'):
    """`tf.contrib.lookup.index_to_string_table_from_file`: line number -> line."""
    initializer = tf.lookup.TextFileInitializer(
        vocabulary_file, tf.int64, key_column_index, tf.string, value_column_index,
        vocab_size=vocab_size, delimiter=delimiter)
    return tf.lookup.StaticHashTable(initializer, default_value, name=name)
