"""`towers-legacy --deterministic --seed N`: a TF1 script's runs made repeatable.

With `--seed N`, every graph the script makes starts with the seed N (as if it called
`tf.set_random_seed(N)` first): its initial weights and random ops, its tf.data shuffles and
queues' shuffles that take no seed of their own. With `--deterministic`, op determinism is on
for the whole run (`towers.training.determinism`) and the seed is 0 unless given. What the
script draws outside TensorFlow (NumPy, `random`) and what its own threads race for (a queue
runner's several enqueuing threads) stays its own.
"""
from towers import flags
from towers.compat import tf
from towers.training import determinism

SEEDED = ('every graph the script makes starts with it, as after tf.set_random_seed: its initial '
          'weights, random ops and shuffles')
REPEATABLE = 'op determinism for the whole run, and the seed 0 unless --seed is given'


def add_flags(parser):
    """Adds the runner's `--seed N` and `--deterministic`."""
    flags.add_reproducibility_flags(parser, SEEDED, REPEATABLE)


def install(options, usage):
    """Seeds every graph the script makes and turns on op determinism, as `options` say.

    Args:
      options: the runner's parsed options (`seed`, `deterministic`).
      usage: the `Usage`, which records what was turned on.
    """
    seed = determinism.graph_seed(options.seed, options.deterministic)
    if options.deterministic:
        determinism.enable_op_determinism()
        usage.add('op determinism')
    if seed is None:
        return
    usage.add('graph seed %d' % seed)
    tf.set_random_seed(seed)
    graph_init = tf.Graph.__init__

    def seeded_init(graph, *args, **kwargs):
        graph_init(graph, *args, **kwargs)
        graph.seed = seed
    tf.Graph.__init__ = seeded_init
