"""`tf.contrib.signal` of TF 1.15: TF 1.15 renamed it `tf.signal`, and these are TensorFlow's
`tf.signal` functions under their TF 1.15 names (same arguments, same defaults)."""
from towers.compat import tf

frame = tf.signal.frame
overlap_and_add = tf.signal.overlap_and_add
hann_window = tf.signal.hann_window
hamming_window = tf.signal.hamming_window
stft = tf.signal.stft
inverse_stft = tf.signal.inverse_stft
inverse_stft_window_fn = tf.signal.inverse_stft_window_fn
linear_to_mel_weight_matrix = tf.signal.linear_to_mel_weight_matrix
mfccs_from_log_mel_spectrograms = tf.signal.mfccs_from_log_mel_spectrograms
