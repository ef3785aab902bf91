"""How long a benchmark measures: a `Plan`, `QUICK` or `FULL` (`towers.benchmarks.measure`).

No TensorFlow: the benchmark's --help shows them.
"""
import collections

Plan = collections.namedtuple('Plan', ['warmup_steps', 'steps_per_repeat', 'repeats'])
Plan.__doc__ = """How long to measure: untimed warm-up steps, then `repeats` rounds, each timing
a block of `steps_per_repeat` steps of every configuration."""

QUICK = Plan(warmup_steps=2, steps_per_repeat=2, repeats=7)
FULL = Plan(warmup_steps=3, steps_per_repeat=3, repeats=11)
