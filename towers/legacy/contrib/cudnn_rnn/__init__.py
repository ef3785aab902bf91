"""`tf.contrib.cudnn_rnn` of TF 1.15: the cuDNN RNN layers (`CudnnLSTM`, `CudnnGRU`,
`CudnnRNNTanh`, `CudnnRNNRelu`), the cells that compute what they compute
(`CudnnCompatibleLSTMCell`, `CudnnCompatibleGRUCell`), the saveables that write their
parameters as those cells' weights, and the converters between the two forms.

On a GPU the layers run TensorFlow's cuDNN kernels; elsewhere the compatible cells' steps on
the same parameters (see `layers`). The import paths `...cudnn_rnn.python.ops.cudnn_rnn_ops`
and `...cudnn_rnn.python.layers.cudnn_rnn` are this package too. Not provided: TF 1.x's
op-level classes of `cudnn_rnn_ops` (`CudnnLSTM(num_layers, num_units, input_size)` called
on an explicit parameter buffer, with `params_size`), LSTM projections (`num_proj`), and
object-based (`tf.train.Checkpoint`) saving of the layers.
"""
from towers.legacy.contrib.cudnn_rnn.cells import CudnnCompatibleGRUCell, CudnnCompatibleLSTMCell
from towers.legacy.contrib.cudnn_rnn.layers import CudnnGRU, CudnnLSTM, CudnnRNNRelu, CudnnRNNTanh
from towers.legacy.contrib.cudnn_rnn.params import (
    CUDNN_GRU, CUDNN_GRU_PARAMS_PER_LAYER, CUDNN_INPUT_AUTO_MODE, CUDNN_INPUT_LINEAR_MODE,
    CUDNN_INPUT_SKIP_MODE, CUDNN_LSTM, CUDNN_LSTM_PARAMS_PER_LAYER, CUDNN_RNN_BIDIRECTION,
    CUDNN_RNN_RELU, CUDNN_RNN_RELU_PARAMS_PER_LAYER, CUDNN_RNN_TANH,
    CUDNN_RNN_TANH_PARAMS_PER_LAYER, CUDNN_RNN_UNIDIRECTION, CudnnParamsFormatConverterGRU,
    CudnnParamsFormatConverterLSTM, CudnnParamsFormatConverterRelu,
    CudnnParamsFormatConverterTanh)
from towers.legacy.contrib.cudnn_rnn.saveable import (CudnnGRUSaveable, CudnnLSTMSaveable,
                                                      CudnnOpaqueParamsSaveable,
                                                      CudnnRNNReluSaveable,
                                                      CudnnRNNTanhSaveable)

__all__ = [
    'CudnnCompatibleGRUCell', 'CudnnCompatibleLSTMCell', 'CudnnGRU', 'CudnnLSTM',
    'CudnnRNNRelu', 'CudnnRNNTanh', 'CudnnLSTMSaveable', 'CudnnGRUSaveable',
    'CudnnRNNReluSaveable', 'CudnnRNNTanhSaveable', 'CudnnOpaqueParamsSaveable',
    'CudnnParamsFormatConverterLSTM', 'CudnnParamsFormatConverterGRU',
    'CudnnParamsFormatConverterTanh', 'CudnnParamsFormatConverterRelu',
    'CUDNN_RNN_UNIDIRECTION', 'CUDNN_RNN_BIDIRECTION', 'CUDNN_LSTM', 'CUDNN_GRU',
    'CUDNN_RNN_RELU', 'CUDNN_RNN_TANH', 'CUDNN_LSTM_PARAMS_PER_LAYER',
    'CUDNN_GRU_PARAMS_PER_LAYER', 'CUDNN_RNN_TANH_PARAMS_PER_LAYER',
    'CUDNN_RNN_RELU_PARAMS_PER_LAYER', 'CUDNN_INPUT_LINEAR_MODE', 'CUDNN_INPUT_SKIP_MODE',
    'CUDNN_INPUT_AUTO_MODE',
]
