"""Training a model's recipe: the step assembled once for every model, and the loop.

`assembly` (`Recipe`, `assemble`, `fit`), `loop` (`train`), `hooks` (the loop's session
hooks), `checkpoints` (choosing a checkpoint that reads whole), `preemption` (SIGTERM and
SIGINT), `determinism` (bit-reproducible runs, resumed or not) and `side_by_side` (several
models on one set of towers).
"""
