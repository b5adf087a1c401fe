"""The simulator's fault codes (sim/faults.py): each has its report."""

from __future__ import annotations

from hal.status import StatusCode
from tt_hal.sim.faults import FAULTS, Fault


def test_every_fault_has_a_status_and_a_message():
    assert set(FAULTS) == set(Fault) - {Fault.OK}
    for status, message in FAULTS.values():
        assert isinstance(status, StatusCode) and status != StatusCode.OK and message
