"""Each test builds its graph in a fresh default graph."""
import pytest

from towers.compat import tf


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as graph:
        yield graph
