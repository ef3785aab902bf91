"""`tf.contrib` for the legacy runner: the parts tower code of 2016-2019 used, and a one-line
answer for every other part.

Provided (each a module under `tf.contrib`, also importable as `tensorflow.contrib.<piece>`):

- `slim`: tf-slim 1.1.0, as `towers.compat` makes it work (`batch_norm` included), and its
  submodules (`tensorflow.contrib.slim.nets` is `tf_slim.nets`);
- `layers`: tf-slim's layers, initializers (`xavier_initializer`, ...), regularizers
  (`l2_regularizer`, `apply_regularization`, ...), `optimize_loss` and `summarize_*`;
- `framework`: tf-slim's `arg_scope`, `add_arg_scope` and variable helpers
  (`get_variables_to_restore`, `get_or_create_global_step`, `assign_from_checkpoint_fn`, ...);
  `nest`, `list_variables`, `load_variable`, `load_checkpoint`, `init_from_checkpoint` and
  `is_tensor` from `tf`;
- `data`: `tf.data.experimental` (`shuffle_and_repeat`, `map_and_batch`, `parallel_interleave`,
  ...), the dataset classes, `batch_and_drop_remainder`, `padded_batch_and_drop_remainder`;
- `lookup`: `index_table_from_tensor`, `index_table_from_file`,
  `index_to_string_table_from_tensor`, `index_to_string_table_from_file`, `HashTable`,
  `MutableHashTable`, `MutableDenseHashTable`, and `tf.lookup`;
- `rnn`: `tf.nn.rnn_cell` (`LSTMCell`, `MultiRNNCell`, ...), `static_rnn`,
  `static_bidirectional_rnn`, `static_state_saving_rnn`;
- `deprecated`: `scalar_summary`, `histogram_summary`, `image_summary`, `audio_summary`,
  `merge_summary`, `merge_all_summaries`.

Any other name stops the script with a `RemovedAttributeError` (or `RemovedModuleError` for an
import) whose one line names it and says what replaces it.
"""
import importlib

from towers.compat import slim, tf
from towers.legacy.modules import LegacyError, ProxyModule, RemovedModuleError

PACKAGE = 'tensorflow.contrib'

# What replaces the parts of tf.contrib the runner does not provide.
REPLACEMENTS = {
    'checkpoint': 'tf.train.Checkpoint',
    'cluster_resolver': 'tf.distribute.cluster_resolver',
    'compiler': 'tf.function(jit_compile=True) or tf.xla',
    'crf': 'the CRF ops of TensorFlow Addons (tfa.text)',
    'cudnn_rnn': 'tf.keras.layers.LSTM and GRU, which use cuDNN',
    'distribute': 'tf.distribute',
    'distributions': 'TensorFlow Probability (tfp.distributions)',
    'eager': 'tf.compat.v2 (eager execution is TensorFlow 2\'s default)',
    'estimator': 'tf.estimator',
    'gan': 'TF-GAN (tensorflow_gan)',
    'graph_editor': 'nothing: rebuild the graph instead of editing it',
    'image': 'tf.image, or the image ops of TensorFlow Addons (tfa.image)',
    'keras': 'tf.keras',
    'learn': 'tf.estimator or tf.keras',
    'losses': 'tf.losses (whose functions take the labels first)',
    'memory_stats': 'tf.config.experimental.get_memory_info',
    'metrics': 'tf.metrics (streaming_<name> is tf.metrics.<name>, labels first)',
    'mixed_precision': 'tf.keras.mixed_precision',
    'nccl': 'tf.distribute.NcclAllReduce, or towers.average_gradients for towers',
    'opt': 'the optimizers of tf.train, tf.keras.optimizers or TensorFlow Addons',
    'predictor': 'tf.saved_model.load',
    'quantize': 'the TensorFlow Model Optimization Toolkit',
    'seq2seq': 'the seq2seq modules of TensorFlow Addons (tfa.seq2seq) or Keras',
    'stateless': 'tf.random.stateless_uniform and the other tf.random.stateless_* ops',
    'summary': 'tf.summary',
    'tensorboard': 'tf.summary and TensorBoard\'s own plugins',
    'tensorrt': 'tf.experimental.tensorrt',
    'tpu': 'tf.distribute.TPUStrategy',
    'training': 'tf.train (HParams: a dict or absl flags)',
    'util': 'tf.make_tensor_proto and tf.get_static_value',
}
_NO_REPLACEMENT = 'port that call to TensorFlow 2 (tf.contrib left TensorFlow in 2.0)'


def _missing_piece(piece):
    return ('tf.contrib left TensorFlow in 2.0 and towers-legacy does not provide it; use %s'
            % REPLACEMENTS[piece] if piece in REPLACEMENTS else _NO_REPLACEMENT)


def _not_in(piece):
    return 'towers-legacy\'s tf.contrib.%s does not have it; %s' % (piece, _NO_REPLACEMENT)


def _missing_in(piece):
    return lambda attr: _not_in(piece)


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


def _sources():
    """piece -> the modules and dicts its names come from, in the order searched."""
    layers = [importlib.import_module('tf_slim.layers.' + name)
              for name in ('initializers', 'regularizers', 'optimizers', 'summaries')]
    return {
        'slim': [slim],
        'layers': [slim.layers] + layers,
        'framework': [importlib.import_module('tf_slim.ops.arg_scope'),
                      importlib.import_module('tf_slim.ops.variables'),
                      {'nest': tf.nest, 'list_variables': tf.train.list_variables,
                       'load_variable': tf.train.load_variable,
                       'load_checkpoint': tf.train.load_checkpoint,
                       'init_from_checkpoint': tf.train.init_from_checkpoint,
                       'is_tensor': tf.is_tensor}],
        'data': [{'Dataset': tf.data.Dataset, 'Iterator': tf.data.Iterator,
                  'TFRecordDataset': tf.data.TFRecordDataset,
                  'TextLineDataset': tf.data.TextLineDataset,
                  'FixedLengthRecordDataset': tf.data.FixedLengthRecordDataset,
                  'batch_and_drop_remainder': batch_and_drop_remainder,
                  'padded_batch_and_drop_remainder': padded_batch_and_drop_remainder},
                 tf.data.experimental],
        'lookup': [{'index_table_from_tensor': index_table_from_tensor,
                    'index_table_from_file': index_table_from_file,
                    'index_to_string_table_from_tensor': index_to_string_table_from_tensor,
                    'index_to_string_table_from_file': index_to_string_table_from_file,
                    'HashTable': tf.lookup.StaticHashTable,
                    'MutableHashTable': tf.lookup.experimental.MutableHashTable,
                    'MutableDenseHashTable': tf.lookup.experimental.DenseHashTable},
                   tf.lookup],
        'rnn': [tf.nn.rnn_cell,
                {'static_rnn': tf.nn.static_rnn,
                 'static_bidirectional_rnn': tf.nn.static_bidirectional_rnn,
                 'static_state_saving_rnn': tf.nn.static_state_saving_rnn}],
        'deprecated': [{'scalar_summary': tf.summary.scalar,
                        'histogram_summary': tf.summary.histogram,
                        'image_summary': tf.summary.image,
                        'audio_summary': tf.summary.audio,
                        'merge_summary': tf.summary.merge,
                        'merge_all_summaries': tf.summary.merge_all}],
    }


# Pieces whose submodules are those of a real package: `tensorflow.contrib.slim.nets` is
# `tf_slim.nets`.
_SUBMODULES = {'slim': 'tf_slim'}


class Contrib:
    """The `tf.contrib` module and its pieces, as module objects by import name.

    Attributes:
      root: the `tensorflow.contrib` module.
      modules: dict import name ('tensorflow.contrib', 'tensorflow.contrib.slim', ...) ->
        module, for `sys.modules`.
    """

    def __init__(self, usage):
        self._usage = usage
        self._pieces = {
            piece: _package('%s.%s' % (PACKAGE, piece), 'tf.contrib.' + piece, sources, usage,
                            _missing_in(piece))
            for piece, sources in _sources().items()}
        self.modules = {module.__name__: module for module in self._pieces.values()}
        self.root = _package(PACKAGE, 'tf.contrib', [self._pieces], usage, _missing_piece,
                             record_names=True)
        self.modules[PACKAGE] = self.root

    def resolve(self, fullname):
        """The module to import as `fullname` when it is below `tensorflow.contrib` and not one
        of `modules`: a submodule of a piece that has them (`tensorflow.contrib.slim.nets`).

        Returns:
          A module, or None for a name outside `tensorflow.contrib`.

        Raises:
          RemovedModuleError: naming `fullname` and what replaces it.
        """
        if not fullname.startswith(PACKAGE + '.'):
            return None
        parts = fullname[len(PACKAGE) + 1:].split('.')
        display = 'tf.contrib.' + '.'.join(parts)
        if parts[0] in _SUBMODULES:
            try:
                real = importlib.import_module('.'.join([_SUBMODULES[parts[0]]] + parts[1:]))
            except ImportError:
                raise RemovedModuleError('%s is not available: %s'
                                         % (display, _not_in(parts[0]))) from None
            return _package(fullname, display, [real], self._usage,
                            _missing_in('.'.join(parts)))
        if parts[0] in self._pieces:
            raise RemovedModuleError('%s is not available: import tf.contrib.%s itself (its '
                                     'names are there); %s' % (display, parts[0],
                                                               _NO_REPLACEMENT))
        raise RemovedModuleError('%s is not available: %s' % (display,
                                                              _missing_piece(parts[0])))


def _package(name, display, sources, usage, missing, record_names=False):
    """A `ProxyModule` that is a package, so that imports of its submodules reach the
    runner's finder (which answers them) instead of failing with 'is not a package'."""
    module = ProxyModule(name, display, sources, usage, record_names, missing)
    module.__path__ = []
    return module
