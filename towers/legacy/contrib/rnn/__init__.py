"""`tf.contrib.rnn` of TF 1.15 beyond `tf.nn.rnn_cell`: its block kernels' LSTMs and GRUs,
its other cells and wrappers, fused RNNs and stacked bidirectional RNNs, with TF 1.15's
variable names so that its checkpoints restore.

The runner looks a name of `tf.contrib.rnn` up here first, then in `tf.nn.rnn_cell`
(`LSTMCell`, `MultiRNNCell`, `DropoutWrapper`, ...) and TensorFlow's `static_rnn` family.
The import paths below `tensorflow.contrib.rnn.python.ops` (`rnn_cell`, `lstm_ops`,
`core_rnn_cell`, ...) are this package too, so their names not exported by TF 1.15's
`tf.contrib.rnn` (`LayerNormLSTMCell`, `_linear`) are here as well.

Not provided: `TimeFreqLSTMCell`, `GridLSTMCell` and `BidirectionalGridLSTMCell`.
"""
from towers.compat import internal as _internal

from towers.legacy.contrib.rnn.base import Linear as _Linear, linear as _linear
from towers.legacy.contrib.rnn.conv_lstm import (Conv1DLSTMCell, Conv2DLSTMCell,
                                                 Conv3DLSTMCell, ConvLSTMCell)
from towers.legacy.contrib.rnn.core_rnn_cell import (EmbeddingWrapper, InputProjectionWrapper,
                                                     OutputProjectionWrapper)
from towers.legacy.contrib.rnn.fused_rnn_cell import (FusedRNNCell, FusedRNNCellAdaptor,
                                                      TimeReversedFusedRNN)
from towers.legacy.contrib.rnn.glstm import GLSTMCell
from towers.legacy.contrib.rnn.gru_ops import GRUBlockCell, GRUBlockCellV2
from towers.legacy.contrib.rnn.independent_cells import (IndRNNCell, IndyGRUCell,
                                                         IndyLSTMCell, SRUCell)
from towers.legacy.contrib.rnn.lstm_cells import (CoupledInputForgetGateLSTMCell,
                                                  LayerNormBasicLSTMCell, LayerNormLSTMCell)
from towers.legacy.contrib.rnn.lstm_ops import (LSTMBlockCell, LSTMBlockFusedCell,
                                                LSTMBlockWrapper)
from towers.legacy.contrib.rnn.phased_lstm import PhasedLSTMCell
from towers.legacy.contrib.rnn.rnn import (stack_bidirectional_dynamic_rnn,
                                           stack_bidirectional_rnn)
from towers.legacy.contrib.rnn.search_cells import IntersectionRNNCell, NASCell, UGRNNCell
from towers.legacy.contrib.rnn.wrappers import (AttentionCellWrapper, CompiledWrapper,
                                                HighwayWrapper)

# TF 1.15 exported these two helpers of TensorFlow's RNNs, which TensorFlow 2 still has.
_tf_rnn = _internal('ops.rnn')
best_effort_input_batch_size = getattr(_tf_rnn, '_best_effort_input_batch_size')
transpose_batch_time = getattr(_tf_rnn, '_transpose_batch_time')

__all__ = [
    'AttentionCellWrapper', 'CompiledWrapper', 'Conv1DLSTMCell', 'Conv2DLSTMCell',
    'Conv3DLSTMCell', 'ConvLSTMCell', 'CoupledInputForgetGateLSTMCell', 'EmbeddingWrapper',
    'FusedRNNCell', 'FusedRNNCellAdaptor', 'GLSTMCell', 'GRUBlockCell', 'GRUBlockCellV2',
    'HighwayWrapper', 'IndRNNCell', 'IndyGRUCell', 'IndyLSTMCell', 'InputProjectionWrapper',
    'IntersectionRNNCell', 'LSTMBlockCell', 'LSTMBlockFusedCell', 'LSTMBlockWrapper',
    'LayerNormBasicLSTMCell', 'LayerNormLSTMCell', 'NASCell', 'OutputProjectionWrapper',
    'PhasedLSTMCell', 'SRUCell', 'TimeReversedFusedRNN', 'UGRNNCell',
    'best_effort_input_batch_size', 'stack_bidirectional_dynamic_rnn',
    'stack_bidirectional_rnn', 'transpose_batch_time',
]
