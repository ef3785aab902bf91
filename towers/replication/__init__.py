"""How the towers are built and updated: the replication modes and their wrappers.

`registry` names the modes and what each supports; `parameter_server` (the classic towers,
`towers.build_towers`), `all_reduce` (tf_cnn_benchmarks' replicated mode) and `mirrored`
(`tf.distribute.MirroredStrategy`, for comparison) build them; `precision` (mixed precision)
wraps any of them; `keras_models` shares a Keras model between the towers.
"""
