"""Fixtures shared by the test modules (tests/cts has its own)."""

import pytest

import hal


@pytest.fixture(scope="module")
def device():
    """One simulated Wormhole device per test module, closed after it."""
    dev = hal.create_device("tenstorrent://mock?arch=wormhole_b0")
    yield dev
    dev.close()
