"""`tf.contrib.seq2seq` of TF 1.15 in graph mode: the attention mechanisms and `AttentionWrapper`
(`attention`, `attention_wrapper`), the `Decoder` interface and `dynamic_decode` (`decoder`),
`BasicDecoder` and its helpers (`basic_decoder`, `helper`), beam search (`beam_search_decoder`,
`beam_scores`, `beam_search_ops`) and `sequence_loss` (`loss`). The runner looks a script's
names up in those modules (`towers.legacy.contrib.pieces`); variables are named as TF 1.15
named them, so its checkpoints restore.
"""
