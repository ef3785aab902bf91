"""`tf.contrib.seq2seq`'s beam search of TF 1.15: `BeamSearchDecoder` (run by `dynamic_decode`),
its state and outputs, `tile_batch` and `gather_tree`.

Each step scores every (beam, token) continuation (`beam_scores`), and the `beam_width` best of
each batch entry become the next beams, ties broken as TF 1.15 broke them (`top_k`: the lower
beam, then the lower token id); `finalize` traces the final beams back (`beam_search_ops`).
"""
import collections
import logging

import numpy as np

from towers.compat import keras, tf
from towers.legacy.contrib.seq2seq import beam_scores, decoder
from towers.legacy.contrib.seq2seq.beam_scores import (attention_probs_from_attn_state,
                                                       get_attention_probs)
from towers.legacy.contrib.seq2seq.beam_search_ops import gather_tree, gather_tree_from_array

__all__ = ['BeamSearchDecoder', 'BeamSearchDecoderOutput', 'BeamSearchDecoderState',
           'FinalBeamSearchDecoderOutput', 'attention_probs_from_attn_state', 'gather_tree',
           'gather_tree_from_array', 'get_attention_probs', 'tile_batch']

log = logging.getLogger(__name__)


class BeamSearchDecoderState(collections.namedtuple(
        'BeamSearchDecoderState',
        ('cell_state', 'log_probs', 'finished', 'lengths', 'accumulated_attention_probs'))):
    """The beam search's state, each tensor [batch_size, beam_width, ...]: the cell's state,
    each beam's total log probability, whether it ended (bool), its length (int64) and its
    summed attention probabilities ([..., memory_time]; `()` without a coverage penalty)."""


class BeamSearchDecoderOutput(collections.namedtuple(
        'BeamSearchDecoderOutput', ('scores', 'predicted_ids', 'parent_ids'))):
    """One step's outputs, each [batch_size, beam_width]: the beams' scores, the token each
    beam took (int32) and the beam of the step before that it continued (int32)."""


class FinalBeamSearchDecoderOutput(collections.namedtuple(
        'FinalBeamDecoderOutput', ('predicted_ids', 'beam_search_decoder_output'))):
    """What `dynamic_decode` returns for a beam search: the whole sequences of the final beams,
    best first (int32 [batch_size, time, beam_width], or time major), and the stacked
    per-step `BeamSearchDecoderOutput`."""


def tile_batch(t, multiplier, name=None):
    """Repeats each batch entry `multiplier` times in a row: [batch, ...] -> [batch *
    multiplier, ...] holding entries 0, 0, ..., 1, 1, ... (the layout beam search expects of
    an `AttentionWrapper`'s memory and initial state).

    Args:
      t: a tensor, or a structure of them, each of known rank >= 1.
      multiplier: a Python int.
      name: the name scope.

    Returns:
      The structure of `t` with each tensor tiled.

    Raises:
      ValueError: a tensor of unknown rank or of rank 0.
    """
    flat = tf.nest.flatten(t)
    with tf.name_scope(name, 'tile_batch', flat + [multiplier]):
        return tf.nest.map_structure(lambda tensor: _tile_one(tensor, multiplier), t)


def _tile_one(t, multiplier):
    t = tf.convert_to_tensor(t, name='t')
    if t.shape.ndims is None or t.shape.ndims < 1:
        raise ValueError('tile_batch: t must have a statically known rank of at least 1, got '
                         '%s of shape %s' % (t.name, t.shape))
    tiled = tf.repeat(t, multiplier, axis=0)
    batch = t.shape.dims[0].value
    tiled.set_shape([None if batch is None else batch * multiplier] + t.shape.as_list()[1:])
    return tiled


class BeamSearchDecoder(decoder.Decoder):
    """Decodes `beam_width` hypotheses per batch entry with `cell`.

    The cell runs on batch_size * beam_width rows: `initial_state` and, for an
    `AttentionWrapper`, the attention memory (with its lengths) must be tiled with
    `tile_batch`, and the wrapper's state made as `cell.zero_state(batch_size * beam_width,
    dtype).clone(cell_state=tile_batch(encoder_state, beam_width))`.

    Args:
      cell: an RNN cell.
      embedding: a callable ids -> inputs, or the `params` of `tf.nn.embedding_lookup`.
      start_tokens: int32 [batch_size], the first input of every beam.
      end_token: int32 scalar, the token that ends a beam.
      initial_state: the cell's initial state, [batch_size * beam_width, ...] per tensor.
      beam_width: a Python int, the beams per batch entry.
      output_layer: a `tf.layers.Layer` that maps the cell's output to logits, or None.
      length_penalty_weight: a float; 0 disables the length penalty.
      coverage_penalty_weight: a float; 0 disables the coverage penalty, which needs an
        `AttentionWrapper` cell (or a tuple of cells' states holding one).
      reorder_tensor_arrays: in `finalize`, stack the `TensorArray`s of the cell state (an
        attention wrapper's `alignment_history`) with their entries reordered along the final
        beams' paths, where their shape allows it.

    Raises:
      TypeError: `cell` is not an RNN cell or `output_layer` not a layer.
      ValueError: `start_tokens` is not a vector or `end_token` not a scalar.
    """

    def __init__(self, cell, embedding, start_tokens, end_token, initial_state, beam_width,
                 output_layer=None, length_penalty_weight=0.0, coverage_penalty_weight=0.0,
                 reorder_tensor_arrays=True):
        if not (callable(cell) and hasattr(cell, 'output_size') and hasattr(cell, 'state_size')):
            raise TypeError('BeamSearchDecoder: cell must be an RNN cell (callable, with '
                            'output_size and state_size), got %s' % type(cell))
        if output_layer is not None and not isinstance(output_layer, keras.layers.Layer):
            raise TypeError('BeamSearchDecoder: output_layer must be a layer, got %s'
                            % type(output_layer))
        self._cell = cell
        self._output_layer = output_layer
        self._beam_width = beam_width
        self._length_penalty_weight = length_penalty_weight
        self._coverage_penalty_weight = coverage_penalty_weight
        self._reorder_tensor_arrays = reorder_tensor_arrays
        self._embedding_fn = (embedding if callable(embedding)
                              else lambda ids: tf.nn.embedding_lookup(embedding, ids))
        start_tokens = tf.convert_to_tensor(start_tokens, tf.int32, name='start_tokens')
        if start_tokens.shape.ndims != 1:
            raise ValueError('BeamSearchDecoder: start_tokens must be a vector, got shape %s'
                             % start_tokens.shape)
        self._end_token = tf.convert_to_tensor(end_token, tf.int32, name='end_token')
        if self._end_token.shape.ndims != 0:
            raise ValueError('BeamSearchDecoder: end_token must be a scalar, got shape %s'
                             % self._end_token.shape)
        self._batch_size = tf.size(start_tokens)
        self._static_batch_size = tf.get_static_value(self._batch_size)
        self._initial_cell_state = tf.nest.map_structure(self._split_beams, initial_state)
        self._start_inputs = self._embedding_fn(
            tf.tile(tf.expand_dims(start_tokens, 1), [1, beam_width]))

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def output_size(self):
        beams = tf.TensorShape([self._beam_width])
        return BeamSearchDecoderOutput(scores=beams, predicted_ids=beams, parent_ids=beams)

    @property
    def output_dtype(self):
        return BeamSearchDecoderOutput(scores=self._dtype(), predicted_ids=tf.int32,
                                       parent_ids=tf.int32)

    @property
    def tracks_own_finished(self):
        """True: beams are reordered at every step, and their `finished` with them."""
        return True

    def _dtype(self):
        return tf.nest.flatten(self._initial_cell_state)[0].dtype

    def initialize(self, name=None):
        """`(finished, start_inputs, initial_state)`: only beam 0 of each batch entry is live
        (log probability 0; the others -inf and finished), so that the first step expands it
        alone."""
        del name
        shape = [self._batch_size, self._beam_width]
        first_beam = tf.broadcast_to(tf.equal(tf.range(self._beam_width), 0), shape)
        dtype = self._dtype()
        log_probs = tf.where(first_beam, tf.zeros(shape, dtype),
                             tf.fill(shape, tf.constant(-np.inf, dtype)))
        attention = get_attention_probs(self._initial_cell_state,
                                        self._coverage_penalty_weight)
        state = BeamSearchDecoderState(
            cell_state=self._initial_cell_state, log_probs=log_probs,
            finished=tf.logical_not(first_beam), lengths=tf.zeros(shape, tf.int64),
            accumulated_attention_probs=() if attention is None else attention)
        return state.finished, self._start_inputs, state

    def step(self, time, inputs, state, name=None):
        """One step: the cell on every beam, then the choice of the next beams.

        Returns:
          `(BeamSearchDecoderOutput, BeamSearchDecoderState, next_inputs, finished)`.
        """
        with tf.name_scope(name, 'BeamSearchDecoderStep', (time, inputs, state)):
            cell_inputs = tf.nest.map_structure(self._merge_beams, inputs)
            cell_state = tf.nest.map_structure(self._merge_beams, state.cell_state)
            cell_outputs, next_cell_state = self._cell(cell_inputs, cell_state)
            logits = tf.nest.map_structure(self._split_beams, cell_outputs)
            next_cell_state = tf.nest.map_structure(self._split_beams, next_cell_state)
            if self._output_layer is not None:
                logits = self._output_layer(logits)
            output, next_state = self._choose_beams(logits, next_cell_state, state)
            next_inputs = tf.cond(tf.reduce_all(next_state.finished),
                                  lambda: self._start_inputs,
                                  lambda: self._embedding_fn(output.predicted_ids))
        return output, next_state, next_inputs, next_state.finished

    def finalize(self, outputs, final_state, sequence_lengths):
        """Traces the final beams back through the stacked time-major `outputs`.

        Returns:
          `(FinalBeamSearchDecoderOutput, final_state)`, the state's `TensorArray`s stacked
          and reordered along the beams' paths (with `reorder_tensor_arrays`).
        """
        del sequence_lengths  # each beam's own length is in final_state.lengths
        predicted_ids = gather_tree(
            outputs.predicted_ids, outputs.parent_ids, end_token=self._end_token,
            max_sequence_lengths=tf.cast(tf.reduce_max(final_state.lengths, axis=1),
                                         tf.int32))
        if self._reorder_tensor_arrays:
            final_state = final_state._replace(cell_state=tf.nest.map_structure(
                lambda t: self._sorted_array(t, outputs.parent_ids, final_state.lengths),
                final_state.cell_state))
        return FinalBeamSearchDecoderOutput(predicted_ids, outputs), final_state

    def _choose_beams(self, logits, next_cell_state, state):
        """The next beams from `logits` [batch_size, beam_width, vocab] and the state."""
        batch_size, beam_width, end_token = self._batch_size, self._beam_width, self._end_token
        vocab_size = logits.shape.dims[-1].value or tf.shape(logits)[-1]
        live = tf.logical_not(state.finished)
        step_log_probs = beam_scores.only_end_after_end(tf.nn.log_softmax(logits),
                                                        end_token, state.finished)
        total_log_probs = tf.expand_dims(state.log_probs, 2) + step_log_probs
        grows = tf.cast(tf.not_equal(tf.range(vocab_size), end_token), tf.int64)
        candidate_lengths = (tf.expand_dims(state.lengths, 2) + grows
                             * tf.expand_dims(tf.cast(live, tf.int64), 2))
        attention = get_attention_probs(next_cell_state, self._coverage_penalty_weight)
        if attention is not None:
            attention = state.accumulated_attention_probs + attention * tf.expand_dims(
                tf.cast(live, tf.float32), 2)
        scores = beam_scores.candidate_scores(
            total_log_probs, candidate_lengths, self._length_penalty_weight,
            self._coverage_penalty_weight, state.finished, attention)
        best_scores, best = tf.nn.top_k(tf.reshape(scores, [batch_size, -1]), k=beam_width)
        static_shape = [self._static_batch_size, beam_width]
        best_scores.set_shape(static_shape)
        best.set_shape(static_shape)
        word_ids = tf.cast(tf.math.floormod(best, vocab_size), tf.int32)
        parent_ids = tf.cast(tf.math.floordiv(best, vocab_size), tf.int32)
        parent_finished = _gather_beams(state.finished, parent_ids)
        next_state = BeamSearchDecoderState(
            cell_state=tf.nest.map_structure(lambda t: _gather_beams(t, parent_ids),
                                             next_cell_state),
            log_probs=tf.gather(tf.reshape(total_log_probs, [batch_size, -1]), best,
                                batch_dims=1),
            finished=tf.logical_or(parent_finished, tf.equal(word_ids, end_token)),
            lengths=(_gather_beams(state.lengths, parent_ids)
                     + tf.cast(tf.logical_not(parent_finished), tf.int64)),
            accumulated_attention_probs=(() if attention is None
                                         else _gather_beams(attention, parent_ids)))
        output = BeamSearchDecoderOutput(scores=best_scores, predicted_ids=word_ids,
                                         parent_ids=parent_ids)
        return output, next_state

    def _split_beams(self, t):
        """[batch_size * beam_width, ...] -> [batch_size, beam_width, ...]; scalars and
        `TensorArray`s as they are."""
        if isinstance(t, tf.TensorArray):
            return t
        t = tf.convert_to_tensor(t)
        _check_rank_known(t)
        if t.shape.ndims < 1:
            return t
        rows, batch = t.shape.dims[0].value, self._static_batch_size
        if rows is not None and batch is not None and rows != batch * self._beam_width:
            raise ValueError(
                'BeamSearchDecoder: a state or output tensor (%s) has %d rows, expected '
                'batch_size * beam_width = %d; make the initial state with '
                'zero_state(batch_size * beam_width, ...) and tile_batch'
                % (t.name, rows, batch * self._beam_width))
        split = tf.reshape(t, tf.concat([[self._batch_size, self._beam_width],
                                         tf.shape(t)[1:]], 0))
        split.set_shape(tf.TensorShape([batch, self._beam_width]).concatenate(t.shape[1:]))
        return split

    def _merge_beams(self, t):
        """[batch_size, beam_width, ...] -> [batch_size * beam_width, ...]; tensors of rank
        below 2 and `TensorArray`s as they are."""
        if isinstance(t, tf.TensorArray):
            return t
        _check_rank_known(t)
        if t.shape.ndims < 2:
            return t
        merged = tf.reshape(t, tf.concat([[self._batch_size * self._beam_width],
                                          tf.shape(t)[2:]], 0))
        batch = self._static_batch_size
        merged.set_shape(tf.TensorShape([None if batch is None else batch * self._beam_width])
                         .concatenate(t.shape[2:]))
        return merged

    def _sorted_array(self, t, parent_ids, lengths):
        """A `TensorArray` of the final cell state stacked and reordered along the beams'
        paths; `t` itself where TF 1.15 left it (not an array, or of an unsuitable shape)."""
        if not isinstance(t, tf.TensorArray):
            return t
        shape = t.element_shape
        if shape.ndims is None or shape.ndims < 1:
            log.warning('BeamSearchDecoder: TensorArray %s of the cell state is not '
                        'reordered along the beams: its elements have shape %s, not of '
                        'known rank >= 1.', t.handle.name, shape)
            return t
        if not _reorderable(shape, self._static_batch_size, self._beam_width):
            log.warning('BeamSearchDecoder: TensorArray %s of the cell state is not '
                        'reordered along the beams: its elements (shape %s) are not '
                        'reshapable to [%s, %d, -1] (reorder_tensor_arrays=False turns this '
                        'off).', t.handle.name, shape, self._static_batch_size,
                        self._beam_width)
            return t
        stacked = t.stack()
        with tf.control_dependencies([self._assert_reorderable(stacked)]):
            return gather_tree_from_array(stacked, parent_ids, lengths)

    def _assert_reorderable(self, stacked):
        """At run time: the stacked array's steps hold [batch_size * beam_width, ...] or
        [batch_size, beam_width, ...]."""
        shape = tf.shape(stacked)
        rows = self._batch_size * self._beam_width
        fits = tf.equal(shape[1], rows)
        if stacked.shape.ndims != 2:
            fits = tf.logical_or(fits, tf.logical_and(tf.equal(shape[1], self._batch_size),
                                                      tf.equal(shape[2], self._beam_width)))
        return tf.Assert(fits, ['BeamSearchDecoder: the elements of %s are not reshapable to '
                                '[batch_size, beam_width, -1]; set reorder_tensor_arrays=False '
                                'to leave it as it is' % stacked.name])


def _reorderable(shape, batch_size, beam_width):
    """TF 1.15's static test of a `TensorArray`'s element shape, kept as it was (programs
    stack what it leaves): with a known batch size and row count, the rows must be
    batch_size * beam_width, and then elements of rank >= 2 with a known second dimension
    pass only if it is beam_width and the rows batch_size, which rules out
    [batch_size * beam_width, depth] (an `alignment_history`) whenever beam_width > 1."""
    rows = shape.dims[0].value
    if batch_size is None or rows is None:
        return True
    if rows != batch_size * beam_width:
        return False
    depth = shape.dims[1].value if shape.ndims >= 2 else None
    return depth is None or (rows == batch_size and depth == beam_width)


def _check_rank_known(t):
    if t.shape.ndims is None:
        raise ValueError('BeamSearchDecoder: expected %s to have a known rank' % t.name)


def _gather_beams(t, beam_ids):
    """`t` [batch_size, beam_width, ...] reordered to the beams `beam_ids` [batch_size,
    beam_width]; tensors of rank below 2 and `TensorArray`s as they are."""
    if isinstance(t, tf.TensorArray):
        return t
    _check_rank_known(t)
    if t.shape.ndims < 2:
        return t
    gathered = tf.gather(t, beam_ids, batch_dims=1)
    gathered.set_shape(t.shape)
    return gathered
