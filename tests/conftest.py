"""Fixtures shared by the test modules (tests/cts has its own)."""

import pytest

import hal


@pytest.fixture(scope="module")
def device():
    """One simulated Wormhole device per test module, closed after it."""
    dev = hal.create_device("tenstorrent://mock?arch=wormhole_b0")
    yield dev
    dev.close()


@pytest.fixture(scope="module", params=["fast", "exact"])
def numerics_device(request):
    """One simulated Wormhole device per FPU numerics (docs/fidelity.md#fpu-numerics), for
    the tests that must pass in both, each against its mode's reference."""
    dev = hal.create_device(f"tenstorrent://mock?arch=wormhole_b0&numerics={request.param}")
    yield dev
    dev.close()
