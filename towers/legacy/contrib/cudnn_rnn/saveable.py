"""TF 1.15's saveables of cuDNN RNN parameters: a checkpoint holds a layer's opaque buffer
as the TF canonical weights of the compatible cells, under the names those cells give them
in `tf.nn.dynamic_rnn` over a `MultiRNNCell` (`rnn/multi_rnn_cell/cell_<layer>/<cell>/...`)
or in `tf.contrib.rnn.stack_bidirectional_dynamic_rnn`
(`stack_bidirectional_rnn/cell_<layer>/bidirectional_rnn/fw/<cell>/...`, then `bw`), after
the layer's scope. Restoring converts them back into the buffer.
"""

from towers.compat import internal, tf
from towers.legacy.contrib.cudnn_rnn import params

saveable_object = internal('training.saving.saveable_object')

# TensorFlow's base class of what `tf.train.Saver` saves besides variables (the
# `SAVEABLE_OBJECTS` collection): the real mechanism TF 1.15's saveables used.
_SaveableObject = saveable_object.SaveableObject
_SaveSpec = saveable_object.SaveSpec


class CudnnOpaqueParamsSaveable(_SaveableObject):
    """Saves and restores `opaque_params` as TF canonical weights, layer by layer, weights
    before biases, forward before backward.

    Args:
      opaque_params: the variable of the opaque buffer.
      num_layers: the number of layers.
      num_units: the units of each layer and direction.
      input_size: the width of the inputs of the first layer.
      input_mode: cuDNN's input mode.
      direction: 'unidirectional' or 'bidirectional'.
      scope: a variable scope or its name: the prefix of the saved names (None: none).
      name: the saveable's name.
    """

    _format_converter_cls = None
    _rnn_cell_name = None

    def __init__(self, opaque_params, num_layers, num_units, input_size,
                 input_mode=params.CUDNN_INPUT_LINEAR_MODE,
                 direction=params.CUDNN_RNN_UNIDIRECTION, scope=None,
                 name='cudnn_rnn_saveable'):
        self._num_layers = num_layers
        self._direction = direction
        self._variables = opaque_params
        self.format_converter = self._format_converter_cls(
            num_layers, num_units, input_size, input_mode=input_mode, direction=direction)
        if isinstance(scope, tf.VariableScope):
            scope = scope.name
        self._scope = scope or None
        weights, biases = self.format_converter.opaque_to_tf_canonical(opaque_params)
        self._weight_names, self._bias_names = self._tf_canonical_names()
        self._param_names = self._weight_names + self._bias_names
        names = ['%s/%s' % (self._scope, name) if self._scope else name
                 for name in self._param_names]
        specs = [_SaveSpec(tensor, '', saved) for tensor, saved in zip(weights + biases, names)]
        super().__init__(tf.identity(opaque_params), specs, name)

    def restore(self, restored_tensors, restored_shapes):
        opaque = self.format_converter.tf_canonical_to_opaque(list(restored_tensors))
        return tf.assign(self._variables, opaque, validate_shape=False)

    def _tf_canonical_name_prefix(self, layer, is_fwd=True):
        if self._direction == params.CUDNN_RNN_UNIDIRECTION:
            return 'rnn/multi_rnn_cell/cell_%d/%s' % (layer, self._rnn_cell_name)
        return 'stack_bidirectional_rnn/cell_%d/bidirectional_rnn/%s/%s' % (
            layer, 'fw' if is_fwd else 'bw', self._rnn_cell_name)

    def _tf_canonical_names(self):
        """(weight names, bias names) in the order of the converter's canonical lists."""
        weights, biases = [], []
        directions = ((True,) if self._direction == params.CUDNN_RNN_UNIDIRECTION
                      else (True, False))
        for layer in range(self._num_layers):
            for is_fwd in directions:
                prefix = self._tf_canonical_name_prefix(layer, is_fwd)
                weights += ['%s/%s' % (prefix, name) for name in self._WEIGHT_NAMES]
                biases += ['%s/%s' % (prefix, name) for name in self._BIAS_NAMES]
        return weights, biases


class CudnnLSTMSaveable(CudnnOpaqueParamsSaveable):
    """A `CudnnLSTM`'s parameters, as `CudnnCompatibleLSTMCell`'s `kernel` and `bias`."""

    _format_converter_cls = params.CudnnParamsFormatConverterLSTM
    _rnn_cell_name = 'cudnn_compatible_lstm_cell'
    _WEIGHT_NAMES = ('kernel',)
    _BIAS_NAMES = ('bias',)


class CudnnGRUSaveable(CudnnOpaqueParamsSaveable):
    """A `CudnnGRU`'s parameters, as `CudnnCompatibleGRUCell`'s variables."""

    _format_converter_cls = params.CudnnParamsFormatConverterGRU
    _rnn_cell_name = 'cudnn_compatible_gru_cell'
    _WEIGHT_NAMES = ('gates/kernel', 'candidate/input_projection/kernel',
                     'candidate/hidden_projection/kernel')
    _BIAS_NAMES = ('gates/bias', 'candidate/input_projection/bias',
                   'candidate/hidden_projection/bias')


class CudnnRNNTanhSaveable(CudnnLSTMSaveable):
    """A `CudnnRNNTanh`'s parameters, as `tf.nn.rnn_cell.BasicRNNCell`'s."""

    _format_converter_cls = params.CudnnParamsFormatConverterTanh
    _rnn_cell_name = 'basic_rnn_cell'


class CudnnRNNReluSaveable(CudnnLSTMSaveable):
    """A `CudnnRNNRelu`'s parameters, as those of a relu `tf.nn.rnn_cell.BasicRNNCell`."""

    _format_converter_cls = params.CudnnParamsFormatConverterRelu
    _rnn_cell_name = 'basic_rnn_cell'
