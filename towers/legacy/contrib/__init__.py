"""`tf.contrib` for the legacy runner: the parts that tower code of 2016-2019 used, and for
every other part a module that imports and stops the script with one line at the first use.

`pieces` is the one table of what is provided (the runner, `towers-legacy --check` and
`--provided` and the README read it); `tree` makes the module objects of `tf.contrib` and of
every import path below it; `lookup`, `hparam`, `nccl`, `tfprof`, `learn` (`RunConfig`,
`Experiment`, `learn_runner`), `nn`, `extenders` (`tf.contrib.estimator`) and `load_balancing`
(`tf.contrib.training`'s placement strategy) are the pieces written here (tf-slim, tf-keras and
TensorFlow itself provide the others).
"""
from towers.legacy.contrib.pieces import PIECES, provided_markdown
from towers.legacy.contrib.tree import PACKAGE, Contrib

__all__ = ['PACKAGE', 'PIECES', 'Contrib', 'provided_markdown']
