"""What the legacy runner's `tf.contrib` provides, piece by piece: the one table that the runner,
`towers-legacy --check`, `towers-legacy --provided` and the README read (`provided_markdown`).

Each piece (`tf.contrib.<piece>`) says what it provides (nothing, for the pieces TensorFlow 2
has no counterpart of here), where its names come from, and what replaces a name of it the
runner lacks. Import paths below a piece (`tensorflow.contrib.layers.python.layers`) resolve to
its names, or to the real modules these tables name.
"""
import collections
import importlib
import textwrap

from towers.compat import keras, slim, tf
from towers.legacy import input_data
from towers.legacy.contrib import (bucketing, extenders, framework, hparam, learn,
                                   load_balancing, lookup, nccl, nn, replicate, tfprof)
from towers.legacy.contrib import tpu
from towers.legacy.contrib.learn import datasets as learn_datasets

PORT = 'port that call to TensorFlow 2'

Piece = collections.namedtuple('Piece', ['provides', 'sources', 'replacement'])
Piece.__doc__ = """One `tf.contrib.<piece>`.

provides: what the runner provides, one line (None: nothing; it imports, and the first use of
  a name in it stops the script with one line naming `replacement`).
sources: a function () -> the modules and dicts its names are looked up in, in order.
replacement: what replaces a name of it the runner does not provide (None: porting the call).
"""


def _modules(*names):
    return lambda: [importlib.import_module(name) for name in names]


def _framework():
    return _modules('tf_slim.ops.arg_scope', 'tf_slim.ops.variables')() + [framework.NAMES] + [
        {'list_variables': tf.train.list_variables,
         'load_variable': tf.train.load_variable, 'load_checkpoint': tf.train.load_checkpoint,
         'init_from_checkpoint': tf.train.init_from_checkpoint, 'is_tensor': tf.is_tensor,
         'sort': tf.sort, 'argsort': tf.argsort}]


def _data():
    return [{'Dataset': tf.data.Dataset, 'Iterator': tf.data.Iterator,
             'TFRecordDataset': tf.data.TFRecordDataset,
             'TextLineDataset': tf.data.TextLineDataset,
             'FixedLengthRecordDataset': tf.data.FixedLengthRecordDataset,
             'batch_and_drop_remainder': lookup.batch_and_drop_remainder,
             'padded_batch_and_drop_remainder': lookup.padded_batch_and_drop_remainder},
            tf.data.experimental]


def _lookup():
    return [{'index_table_from_tensor': lookup.index_table_from_tensor,
             'index_table_from_file': lookup.index_table_from_file,
             'index_to_string_table_from_tensor': lookup.index_to_string_table_from_tensor,
             'index_to_string_table_from_file': lookup.index_to_string_table_from_file,
             'HashTable': tf.lookup.StaticHashTable,
             'MutableHashTable': tf.lookup.experimental.MutableHashTable,
             'MutableDenseHashTable': tf.lookup.experimental.DenseHashTable},
            tf.lookup]


_SEQ2SEQ = ('attention_wrapper', 'basic_decoder', 'beam_search_decoder', 'decoder', 'helper',
            'loss')


def _rnn():
    return [importlib.import_module('towers.legacy.contrib.rnn'), tf.nn.rnn_cell,
            {'static_rnn': tf.nn.static_rnn,
             'static_bidirectional_rnn': tf.nn.static_bidirectional_rnn,
             'static_state_saving_rnn': tf.nn.static_state_saving_rnn}]


def _deprecated():
    return [{'scalar_summary': tf.summary.scalar, 'histogram_summary': tf.summary.histogram,
             'image_summary': tf.summary.image, 'audio_summary': tf.summary.audio,
             'merge_summary': tf.summary.merge, 'merge_all_summaries': tf.summary.merge_all}]


def _distribute():
    strategies = importlib.import_module('towers.legacy.estimator.distribute')
    public = {name: getattr(strategies, name) for name in (
        'MirroredStrategy', 'OneDeviceStrategy', 'ParameterServerStrategy',
        'CollectiveAllReduceStrategy', 'AllReduceCrossDeviceOps', 'CrossDeviceOps',
        'ReductionToOneDevice')}
    return [public, {'AllReduceCrossTowerOps': strategies.AllReduceCrossDeviceOps,
                         'ReductionToOneDeviceCrossDeviceOps': strategies.ReductionToOneDevice,
                         'ReductionToOneDeviceCrossTowerOps': strategies.ReductionToOneDevice,
                         'CrossTowerOps': strategies.CrossDeviceOps,
                         'ReduceOp': tf.distribute.ReduceOp,
                         'InputContext': tf.distribute.InputContext}]


def _nothing():
    return []


def _missing(replacement):
    return Piece(None, _nothing, replacement)


_LAYERS_MODULES = ('layers', 'initializers', 'regularizers', 'optimizers', 'summaries',
                   'normalization')

PIECES = {
    'slim': Piece('tf-slim 1.1.0 with a working `batch_norm`, and its submodules '
                  '(`slim.nets`, `slim.learning`, ...)', lambda: [slim], None),
    'layers': Piece("tf-slim's layers (`group_norm` included), initializers, regularizers, "
                    '`optimize_loss`, `summarize_*`',
                    _modules(*['tf_slim.layers.' + name for name in _LAYERS_MODULES]), None),
    'framework': Piece("tf-slim's `arg_scope`, `add_arg_scope` and variable helpers; TF 1.x's "
                       '`nest` (`is_sequence`), `get_name_scope`, `smart_cond`, the tensor '
                       'checks, checkpoint readers, `sort`', _framework, None),
    'data': Piece('`tf.data.experimental` (`shuffle_and_repeat`, `map_and_batch`, ...), '
                  '`batch_and_drop_remainder`', _data, None),
    'lookup': Piece('`index_table_from_tensor`/`_file`, `index_to_string_table_from_*`, '
                    '`HashTable`, `tf.lookup`', _lookup, None),
    'rnn': Piece('`tf.nn.rnn_cell` (`LSTMCell`, ...), `static_rnn`, '
                 '`static_bidirectional_rnn`; TF 1.15\'s `LSTMBlockCell`, `LSTMBlockFusedCell`, '
                 '`GRUBlockCell(V2)` (its kernels), `LayerNormBasicLSTMCell`, `NASCell`, '
                 '`UGRNNCell`, `IntersectionRNNCell`, `GLSTMCell`, `PhasedLSTMCell`, '
                 '`ConvLSTMCell`s, `SRUCell`, the `Ind*` cells, the projection, embedding, '
                 'attention and highway wrappers, `stack_bidirectional_(dynamic_)rnn`, the fused '
                 'RNN adaptors', _rnn, None),
    'deprecated': Piece('`scalar_summary`, `histogram_summary`, ... (`tf.summary`)',
                        _deprecated, None),
    'training': Piece('`HParams`, `bucket_by_sequence_length`, `bucket`, '
                      '`GreedyLoadBalancingStrategy`, `byte_size_load_fn`; tf-slim\'s '
                      '`multiply_gradients`, `create_train_op`, `SummaryAtEndHook`, '
                      '`evaluate_repeatedly`, `checkpoints_iterator`, ...',
                      lambda: [{'HParams': hparam.HParams, 'bucket': bucketing.bucket,
                                'bucket_by_sequence_length': bucketing.bucket_by_sequence_length},
                               load_balancing]
                      + _modules('tf_slim.training.training', 'tf_slim.training.evaluation')(),
                      'tf.data for its queue-based input helpers (`stratified_sample`, '
                      '`rejection_sample`, `batch_sequences_with_states`, ...)'),
    'keras': Piece('Keras 2 (tf-keras), also at `tensorflow.contrib.keras.api.keras`',
                   lambda: [keras], 'tf.keras'),
    'metrics': Piece("tf-slim's `streaming_*` metrics and `aggregate_metric_map`",
                     _modules('tf_slim.metrics'),
                     'tf.metrics (streaming_<name> is tf.metrics.<name>, labels first)'),
    'losses': Piece("tf-slim's losses (TF 1.x's argument order) and `metric_learning`",
                    _modules('tf_slim.losses'), 'tf.losses (labels first)'),
    'nccl': Piece('`all_sum`, `all_prod`, `all_min`, `all_max`, `reduce_sum`, `broadcast`: NCCL '
                  'on distinct GPUs, the same values by plain ops elsewhere',
                  lambda: [nccl], 'tf.distribute.NcclAllReduce'),
    'tfprof': Piece('`ProfileContext` when disabled, `model_analyzer.print_model_analysis` '
                    'and its options (`tf.profiler`)', lambda: [tfprof],
                    'tf.profiler (tf.profiler.experimental for traces)'),
    'learn': Piece('`RunConfig`, `Experiment`, `learn_runner` (on `tf.estimator.Estimator`), '
                   '`make_export_strategy`; `datasets.mnist` and `datasets.base` (offline)',
                   lambda: [learn], 'tf.estimator or tf.keras'),
    'nn': Piece('TF 1.15\'s `alpha_dropout`, `conv1d_transpose`, `nth_element`, '
                '`scaled_softplus`, `sampled_sparse_softmax_loss`, `rank_sampled_softmax_loss`, '
                '`deprecated_flipped_*` losses', lambda: [nn], 'tf.nn'),
    'estimator': Piece('`add_metrics`, `forward_features`, `clip_gradients_by_norm`, '
                       '`stop_if_no_decrease_hook` and the other early-stopping hooks, '
                       '`replicate_model_fn` and `TowerOptimizer`, '
                       '`boosted_trees_classifier_train_in_memory` and '
                       '`boosted_trees_regressor_train_in_memory`, on `tf.estimator`',
                       lambda: [extenders, {
                           'replicate_model_fn': replicate.replicate_model_fn,
                           'TowerOptimizer': replicate.TowerOptimizer,
                           **{name: getattr(importlib.import_module(
                               'towers.legacy.estimator.canned.boosted_trees'), name)
                              for name in ('boosted_trees_classifier_train_in_memory',
                                           'boosted_trees_regressor_train_in_memory')}}],
                       'tf.estimator'),
    'seq2seq': Piece('TF 1.15\'s attention mechanisms and `AttentionWrapper`, `BasicDecoder`, '
                     '`BeamSearchDecoder`, `dynamic_decode`, the helpers, `tile_batch`, '
                     '`sequence_loss`, `gather_tree`, `hardmax`, with TF 1.15\'s variable names',
                     _modules(*['towers.legacy.contrib.seq2seq.' + name for name in _SEQ2SEQ]),
                     None),
    'crf': Piece('`crf_log_likelihood`, `crf_decode`, `viterbi_decode` and the rest of TF '
                 '1.15\'s CRF', _modules('towers.legacy.contrib.crf'), None),
    'opt': Piece('TF 1.15\'s `LazyAdamOptimizer`, `AdamWOptimizer`, `MomentumWOptimizer`, '
                 '`extend_with_decoupled_weight_decay`, `MovingAverageOptimizer`, '
                 '`NadamOptimizer`, `LARSOptimizer`, `AddSignOptimizer`, `PowerSignOptimizer` '
                 'and the sign decays, `AdaMaxOptimizer`, `GGTOptimizer`, '
                 '`RegAdagradOptimizer`, `VariableClippingOptimizer`, '
                 '`DropStaleGradientOptimizer`, `MultitaskOptimizerWrapper`, '
                 '`clip_gradients_by_global_norm` (its slot names and updates)',
                 _modules('towers.legacy.contrib.opt'),
                 'the optimizers of tf.train or tf.keras.optimizers'),
    'cudnn_rnn': Piece('`CudnnLSTM`, `CudnnGRU`, `CudnnRNNTanh`, `CudnnRNNRelu` (cuDNN on a '
                       'GPU, the compatible cells elsewhere, one checkpoint format of canonical '
                       'weights), the `CudnnCompatible*Cell`s, saveables and converters',
                       _modules('towers.legacy.contrib.cudnn_rnn'),
                       'tf.keras.layers.LSTM and GRU, which use cuDNN'),
    'quantize': _missing('the TensorFlow Model Optimization Toolkit (TensorFlow 2 has no '
                         'graph-rewrite quantization)'),
    'checkpoint': _missing('tf.train.Checkpoint'),
    'cluster_resolver': Piece('`tf.distribute.cluster_resolver` (`SimpleClusterResolver`, '
                              '`TFConfigClusterResolver`, ...); `TPUClusterResolver` stops with '
                              'one line (no TPU here)',
                              lambda: [{'TPUClusterResolver': tpu.TPUClusterResolver},
                                       tf.distribute.cluster_resolver],
                              'tf.distribute.cluster_resolver'),
    'compiler': _missing('tf.function(jit_compile=True) or tf.xla'),
    'distribute': Piece('`MirroredStrategy` (`num_gpus`, `devices`) and `OneDeviceStrategy` for '
                        "`RunConfig(train_distribute=..., eval_distribute=...)`: the model_fn once "
                        "per device on the towers; `ParameterServerStrategy` and "
                        '`CollectiveAllReduceStrategy` (`num_gpus_per_worker`) for '
                        '`train_and_evaluate` with `TF_CONFIG`; `AllReduceCrossDeviceOps`, '
                        '`ReductionToOneDevice` and their TF 1.12 `CrossTowerOps` names',
                        _distribute, 'tf.distribute'),
    'distributions': _missing('TensorFlow Probability (tfp.distributions)'),
    'eager': _missing('tf.compat.v2 (eager execution is TensorFlow 2\'s default)'),
    'gan': _missing('TF-GAN (tensorflow_gan)'),
    'graph_editor': _missing('nothing: rebuild the graph instead of editing it'),
    'image': Piece('TF 1.15\'s `transform`, `rotate`, `translate` and their transform '
                   'helpers (`compose_transforms`, ...), `dense_image_warp`, '
                   '`interpolate_spline`, `sparse_image_warp`',
                   _modules(*['towers.legacy.contrib.image.' + name
                              for name in ('transforms', 'dense_warp', 'splines')]),
                   'tf.image, or TensorFlow Addons (tfa.image) for `connected_components` and '
                   'the ops TensorFlow 2 has no kernel for'),
    'legacy_seq2seq': _missing('the seq2seq modules of TensorFlow Addons (tfa.seq2seq)'),
    'memory_stats': _missing('tf.config.experimental.get_memory_info'),
    'mixed_precision': _missing('tf.keras.mixed_precision'),
    'predictor': _missing('tf.saved_model.load'),
    'signal': Piece('`stft`, `inverse_stft`, `frame`, the windows, mel and MFCC functions '
                    '(`tf.signal`)', _modules('towers.legacy.contrib.signal'), 'tf.signal'),
    'stateless': Piece('`stateless_random_uniform`, `stateless_random_normal`, '
                       '`stateless_truncated_normal`, `stateless_multinomial` (TF 1.15\'s '
                       'kernels: the same numbers for a seed)',
                       _modules('towers.legacy.contrib.stateless'),
                       'tf.random.stateless_uniform and the other tf.random.stateless_* ops'),
    'summary': Piece('TF 1.15\'s graph-mode summary writers and ops (`create_file_writer`, '
                     '`always_record_summaries`, `scalar`, ..., `all_summary_ops`, '
                     '`initialize`, `create_db_writer`)',
                     _modules('towers.legacy.contrib.summary'), 'tf.summary'),
    'tensorboard': Piece('`plugins.projector` (TensorBoard\'s own: `ProjectorConfig`, '
                         '`visualize_embeddings`)', _nothing,
                         'tf.summary and TensorBoard\'s own plugins'),
    'tensorrt': _missing('tf.experimental.tensorrt'),
    'tpu': Piece('`TPUEstimator` with `use_tpu=False` (on `tf.estimator`), `TPUEstimatorSpec`, '
                 '`RunConfig`, `TPUConfig`, `InputPipelineConfig`, `CrossShardOptimizer` (one '
                 'shard), `bfloat16_scope`', lambda: [tpu], 'tf.distribute.TPUStrategy'),
    'util': Piece('`make_tensor_proto`, `make_ndarray`, `constant_value`, '
                  '`ops_used_by_graph_def`, `stripped_op_list_for_graph`',
                  _modules('towers.legacy.contrib.util'),
                  'tf.make_tensor_proto and tf.get_static_value'),
}

_LEARN_DATASETS = {'mnist': input_data.__name__, 'base': learn_datasets.__name__}

# Paths below tensorflow.contrib that are packages whose modules TF 1.x's code imported by
# name: path -> {name: the module's import name}. The path's other names are its piece's
# (as TF 1.x's `__init__` star-imported them: `framework.python.ops.arg_scope` is the
# function, `framework.python.ops.variables` the module).
SUBMODULES = {
    'layers.python.layers': {name: 'tf_slim.layers.' + name
                             for name in _LAYERS_MODULES + ('utils',)},
    'framework.python.ops': {'variables': 'tf_slim.ops.variables'},
    'training.python.training': {'training': 'tf_slim.training.training',
                                 'evaluation': 'tf_slim.training.evaluation',
                                 'hparam': hparam.__name__,
                                 'device_setter': load_balancing.__name__},
    'learn': {'datasets': 'tensorflow.contrib.learn.datasets',
              'learn_runner': learn.learn_runner.__name__,
              'utils': 'tensorflow.contrib.learn.utils'},
    'learn.datasets': _LEARN_DATASETS,
    'learn.utils': {'saved_model_export_utils': learn.export.__name__},
    'learn.python.learn': {name: 'towers.legacy.contrib.learn.' + module for name, module in (
        ('learn_runner', 'learn_runner'), ('experiment', 'experiment'),
        ('run_config', 'run_config'), ('export_strategy', 'export'),
        ('evaluable', 'interfaces'), ('trainable', 'interfaces'))},
    'learn.python.learn.estimators': {'run_config': learn.run_config.__name__},
    'learn.python.learn.datasets': _LEARN_DATASETS,
    'learn.python.learn.utils': {'saved_model_export_utils': learn.export.__name__},
    'tfprof': {'model_analyzer': tfprof.__name__},
    'tensorboard.plugins': {'projector': 'tensorboard.plugins.projector'},
    'seq2seq.python.ops': dict({name: 'towers.legacy.contrib.seq2seq.' + name
                                for name in _SEQ2SEQ},
                               beam_search_ops='towers.legacy.contrib.seq2seq.beam_search_decoder'),
    'crf.python.ops': {'crf': 'towers.legacy.contrib.crf'},
    'opt.python.training': {name: 'towers.legacy.contrib.opt' for name in (
        'lazy_adam_optimizer', 'weight_decay_optimizers', 'moving_average_optimizer',
        'nadam_optimizer', 'lars_optimizer', 'addsign', 'powersign', 'sign_decay')},
    'rnn.python.ops': {name: 'towers.legacy.contrib.rnn' for name in (
        'rnn_cell', 'lstm_ops', 'gru_ops', 'rnn', 'core_rnn_cell', 'fused_rnn_cell')},
    'cudnn_rnn.python.ops': {'cudnn_rnn_ops': 'towers.legacy.contrib.cudnn_rnn'},
    'cudnn_rnn.python.layers': {'cudnn_rnn': 'towers.legacy.contrib.cudnn_rnn'},
    'tpu.python.tpu': {'tpu_estimator': tpu.__name__, 'tpu_config': tpu.__name__,
                       'tpu_optimizer': tpu.__name__},
    'summary': {'summary': 'towers.legacy.contrib.summary'},
    'image.python.ops': {'image_ops': 'towers.legacy.contrib.image.transforms',
                         'dense_image_warp': 'towers.legacy.contrib.image.dense_warp',
                         'interpolate_spline': 'towers.legacy.contrib.image.splines',
                         'sparse_image_warp': 'towers.legacy.contrib.image.splines'},
    'signal.python.ops': {name: 'towers.legacy.contrib.signal' for name in (
        'spectral_ops', 'shape_ops', 'reconstruction_ops', 'window_ops', 'mel_ops', 'mfcc_ops')},
}

# Paths below tensorflow.contrib whose modules are those of a real package, path for path:
# tensorflow.contrib.slim.nets is tf_slim.nets.
PACKAGES = {'slim': 'tf_slim', 'slim.python.slim': 'tf_slim', 'keras': 'tf_keras',
            'keras.api.keras': 'tf_keras', 'keras.python.keras': 'tf_keras'}


def why_missing(piece):
    """Why a name of `tf.contrib.<piece>` the runner lacks is not available, and what to do."""
    if piece not in PIECES:
        return 'tf.contrib left TensorFlow in 2.0 and towers-legacy does not provide it; ' + PORT
    found = PIECES[piece]
    use = 'use ' + found.replacement if found.replacement else PORT
    if found.provides:
        return 'towers-legacy\'s tf.contrib.%s does not have it; %s' % (piece, use)
    return ('tf.contrib left TensorFlow in 2.0 and towers-legacy does not provide '
            'tf.contrib.%s; %s' % (piece, use))


def provided_markdown():
    """What the runner's `tf.contrib` provides, in markdown: a table piece | what is provided,
    then the pieces not provided with their replacements. `towers-legacy --provided` prints
    it; the README shows it."""
    rows = ['| `tf.contrib.` | provided |', '| --- | --- |']
    rows += ['| `%s` | %s |' % (name, piece.provides)
             for name, piece in PIECES.items() if piece.provides]
    missing = '; '.join('`%s`: %s' % (name, piece.replacement)
                        for name, piece in PIECES.items() if not piece.provides)
    return '\n'.join(rows) + '\n\n' + textwrap.fill(
        'Not provided, but importable (a use of a name in them stops the script with one line '
        'naming the replacement): %s. Any other `tf.contrib` name: port that call.' % missing,
        width=100, break_on_hyphens=False)
