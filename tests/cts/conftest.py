"""Fixtures for the HAL conformance tests (modelled on IREE's runtime/src/iree/hal/cts)."""

import faulthandler
import os
import sys

import pytest

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if _REPO not in sys.path:
    sys.path.insert(0, _REPO)

import hal  # noqa: E402

# A conformance test that deadlocks must fail loudly instead of stalling CI:
# dump every thread's stack and exit if one test runs longer than this.
_WATCHDOG_S = float(os.environ.get("TT_HAL_CTS_WATCHDOG_S", "60"))


@pytest.fixture(autouse=True)
def _watchdog():
    faulthandler.dump_traceback_later(_WATCHDOG_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="module")
def device():
    """One mock device per test module, like IREE's per-suite CTS device."""
    return hal.create_device("tenstorrent")


@pytest.fixture(scope="module")
def allocator(device):
    return device.allocator
