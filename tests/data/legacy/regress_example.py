"""Regresses a port against its TF1 original, live: `tower_port.py` against `tower_program.py`.

    python tests/data/legacy/regress_example.py

The original is imported as the legacy runner would run it (`towers.legacy.import_originals`),
and its own `tower_loss`, `average_gradients` and `assign_to_device` build its towers in the
tutorials' loop (`towers.regression.classic_towers`); the port's recipe builds the project's
(`towers.assemble`). Both start from the same weights and train on the same 3 batches on 2
towers; each tower's loss at each step and the step-0 averaged gradient norms must agree.
Exits with 1 when a figure is beyond its tolerance.
"""
import os

import numpy as np

import tower_port
import towers
from towers import cli, legacy, regression
from towers.compat import tf

NUM_TOWERS = 2
TOWER_BATCH = 8
TOLERANCES = {'tower losses': 1e-5, 'step-0 gradient norms': regression.Relative(1e-5)}


def make_batches(count, seed=0):
    """`count` global batches: standardized images [16, 8, 8, 3] float32, labels [16] int32."""
    rng = np.random.RandomState(seed)
    return [(rng.standard_normal([NUM_TOWERS * TOWER_BATCH, 8, 8, 3]).astype(np.float32),
             rng.randint(tower_port.NUM_CLASSES, size=NUM_TOWERS * TOWER_BATCH).astype(np.int32))
            for _ in range(count)]


def initial_values(shapes):
    """Weights drawn at random, batch norm at its start (moving variance 1), the rest zero."""
    rng = np.random.RandomState(1)

    def value(name, shape):
        if name.endswith('weights'):
            return rng.normal(0, 0.3, shape)
        return np.ones(shape) if name.endswith('moving_variance') else np.zeros(shape)
    return {name: value(name, shape) for name, shape in sorted(shapes.items())}


def original_build(program):
    """The builder of the original: its `train()` without its input queue and session."""
    def build(inputs, setup):
        global_step = tf.train.get_or_create_global_step()
        optimizer = tf.train.MomentumOptimizer(program.FLAGS.learning_rate, 0.9)
        built = regression.classic_towers(
            program.tower_loss, program.average_gradients, inputs, setup, optimizer,
            device_fn=lambda device: program.assign_to_device(device, setup.ps_device))
        with tf.control_dependencies(built.update_ops):
            train = optimizer.apply_gradients(built.grads, global_step=global_step)
        return {'train': train, 'losses': built.losses, 'grads': built.grads}
    return build


def port_build(inputs, setup):
    """The builder of the port: the project's training step of its recipe."""
    training = towers.assemble(tower_port.TowerRecipe(), lambda: inputs, setup)
    return {'train': training.train_ops['total'], 'losses': training.replicated.tower_losses,
            'grads': training.replicated.grads['total']}


def figures(replay, batches):
    """Each tower's loss at each step, fetched with it; each averaged gradient's norm at step 0."""
    norms = {var.op.name: tf.norm(grad) for grad, var in replay.outputs['grads']}
    losses = []
    for step, batch in enumerate(batches):
        values = replay.run({'train': replay.outputs['train'], 'losses': replay.outputs['losses'],
                             'norms': norms if step == 0 else {}}, batch)
        losses.append(values['losses'])
        if step == 0:
            step0_norms = values['norms']
    return {'tower losses': losses, 'step-0 gradient norms': step0_norms}


def main(argv):
    program = legacy.import_originals(os.path.dirname(os.path.abspath(__file__)),
                                      ['tower_program'], 'regress_example.py')['tower_program']
    return 0 if regression.check_runs([(
        'tower_program.py (original) vs tower_port.py (port), %d towers' % NUM_TOWERS,
        lambda: regression.regress_builders(original_build(program), port_build,
                                            initial_values, make_batches(3), figures,
                                            TOLERANCES, NUM_TOWERS))]) else 1


if __name__ == '__main__':
    cli.run(main)
