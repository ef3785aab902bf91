"""Specification of XLA towers: compiled clusters run, and training matches the uncompiled."""
import numpy as np
import pytest

import small_net
from towers.compat import tf
from towers.replication.registry import Mode

STEPS = 10
# Measured: after 10 steps the compiled towers' losses and variables differ from the others' by
# at most 1.3e-6 relative, 1.2e-7 absolute (fused float32 arithmetic rounds differently).
TOLERANCE = 1e-5
ABSOLUTE = 1e-6


@pytest.fixture(scope='module')
def compiled():
    """The small net trained with XLA on 2 towers: (losses, variables, device -> the names of
    the compiled clusters it ran in the first step)."""
    metadata = tf.RunMetadata()
    losses, variables, _ = small_net.train(Mode(xla=True), num_towers=2, steps=STEPS,
                                           run_metadata=metadata)
    clusters = {tf.DeviceSpec.from_string(device.device).device_index:
                [node.node_name for node in device.node_stats
                 if node.node_name.endswith('/xla_run')]
                for device in metadata.step_stats.dev_stats}
    return losses, variables, clusters


def test_each_tower_runs_compiled_xla_clusters(compiled):
    _, _, clusters = compiled
    assert sorted(index for index, names in clusters.items() if names) == [0, 1]


def test_xla_training_reaches_the_variables_of_uncompiled_towers(compiled):
    losses, variables, _ = compiled
    reference_losses, reference, _ = small_net.train(Mode(), num_towers=2, steps=STEPS)
    np.testing.assert_allclose(losses, reference_losses, rtol=TOLERANCE)
    for name, value in reference.items():
        np.testing.assert_allclose(variables[name], value, rtol=TOLERANCE, atol=ABSOLUTE,
                                   err_msg=name)
