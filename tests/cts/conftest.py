"""Fixtures for the HAL conformance tests (modelled on IREE's runtime/src/iree/hal/cts)."""

import faulthandler
import os
import sys

import pytest

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if _REPO not in sys.path:
    sys.path.insert(0, _REPO)

import hal  # noqa: E402
from tests import fake_tt_metal  # noqa: E402

# A conformance test that deadlocks must fail loudly instead of stalling CI:
# dump every thread's stack and exit if one test runs longer than this.
_WATCHDOG_S = float(os.environ.get("TT_HAL_CTS_WATCHDOG_S", "60"))


@pytest.fixture(autouse=True)
def _watchdog():
    faulthandler.dump_traceback_later(_WATCHDOG_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


# The backends every conformance test runs against: the simulator, and the hardware
# backend (native/) over a fake TT-Metal binding that runs on the simulator
# (tests/fake_tt_metal.py), so both meet the same HAL rules at the same calls.
BACKENDS = ("sim", "native-on-fake-tt-metal")


@pytest.fixture(scope="module", params=BACKENDS)
def device(request):
    """One device per test module and backend, like IREE's per-suite CTS device."""
    with pytest.MonkeyPatch.context() as patch:
        if request.param == BACKENDS[1]:
            fake_tt_metal.install(patch)
            patch.setenv("TT_HAL_MODE", "hardware")
        else:
            patch.setenv("TT_HAL_MODE", "mock")
        device = hal.create_device("tenstorrent")
        assert device.backend.mode == ("hardware" if request.param == BACKENDS[1] else "mock")
        yield device
        device.close()


@pytest.fixture(scope="module")
def allocator(device):
    return device.allocator
