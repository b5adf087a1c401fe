"""The simulator's fault codes (sim/faults.py): each has its report."""

from __future__ import annotations

import threading
import time

import pytest

import hal
from hal.status import HalError, StatusCode
from tt_hal.sim.dispatch import Watchdog
from tt_hal.sim.faults import FAULTS, Fault


def test_every_fault_has_a_status_and_a_message():
    assert set(FAULTS) == set(Fault) - {Fault.OK}
    for status, message in FAULTS.values():
        assert isinstance(status, StatusCode) and status != StatusCode.OK and message


def _sfpu_forever():
    """An export whose compute kernel applies exp to a Dst tile, forever."""
    from tt_hal.target.isa import Processor, SfpuOp
    from tt_hal.target.kernel_builder import KernelBuilder
    from tt_hal.target.program import Export, Program, Stage

    k = KernelBuilder("sfpu_forever")
    tile = k.const(0)
    k.tile_regs_acquire()
    k.fill_tile(tile, 1.0)
    top = k.label("top")
    k.place(top)
    k.sfpu_unary(SfpuOp.EXP, tile, 0.0)
    k.jmp(top)
    return Export("sfpu_forever", 0, 0, (1, 1, 1), (Stage(Program((), (k.build(Processor.COMPUTE),), ((),))),))


def test_runaway_dispatch_meets_its_wall_clock_deadline():
    """Issue 21: the runaway guard counted instructions only, and a loop of SFPU ops ran
    for minutes before DEADLINE_EXCEEDED. With an instruction budget it would take hours
    to exhaust, the dispatch fails at its dispatch_timeout (1.5 s) with a report of where
    each kernel was, and the device runs checked work afterwards."""
    import time

    from test_fuzz import _device_still_works

    import hal
    from hal.executable import EXECUTABLE_FORMAT
    from tt_hal.target.ttx import write_executable

    device = hal.create_device("tenstorrent")
    try:
        _device_still_works(device)  # the simulator compiled (seconds on a fresh install), outside the timing
        device.backend.dispatch_timeout = 1.5
        device.backend.instruction_budget = 1 << 62
        executable = device.create_executable_cache().prepare_executable(EXECUTABLE_FORMAT,
                                                                         write_executable([_sfpu_forever()]))
        cb = hal.HalCommandBuffer(device)
        cb.dispatch(executable, 0, (1, 1, 1), b"", [])
        cb.end()
        sem = device.create_semaphore(0)
        start = time.monotonic()
        device.queue_execute(cb, [], [(sem, 1)])
        with pytest.raises(hal.HalError) as error:
            sem.wait(1, timeout=60 * 10**9)
        seconds = time.monotonic() - start
        assert error.value.code == StatusCode.DEADLINE_EXCEEDED
        assert 1.5 <= seconds < 6, f"the dispatch failed after {seconds:.1f} s; its deadline was 1.5 s"
        message = error.value.message
        assert "wall-clock deadline passed" in message and "core (0,0) sfpu_forever (COMPUTE) at pc" in message, \
            message
        _device_still_works(device)
    finally:
        device.close()


def test_dispatch_timeout_must_be_positive(monkeypatch):
    """SimDevice's dispatch_timeout (or $TT_HAL_DISPATCH_TIMEOUT) is seconds > 0; inf for none."""
    import math

    from hal.status import HalError
    from tt_hal.sim.device import DISPATCH_TIMEOUT_VARIABLE, SimDevice
    from tt_hal.sim.dispatch import DEFAULT_DISPATCH_TIMEOUT

    for bad in (0, -1, math.nan):
        with pytest.raises(HalError) as error:
            SimDevice(dispatch_timeout=bad)
        assert error.value.code == StatusCode.INVALID_ARGUMENT
    monkeypatch.setenv(DISPATCH_TIMEOUT_VARIABLE, "soon")
    with pytest.raises(HalError) as error:
        SimDevice()
    assert error.value.code == StatusCode.INVALID_ARGUMENT and DISPATCH_TIMEOUT_VARIABLE in error.value.message
    monkeypatch.setenv(DISPATCH_TIMEOUT_VARIABLE, "2.5")
    assert SimDevice().dispatch_timeout == 2.5
    monkeypatch.delenv(DISPATCH_TIMEOUT_VARIABLE)
    assert SimDevice().dispatch_timeout == DEFAULT_DISPATCH_TIMEOUT == 60
    assert SimDevice(dispatch_timeout=math.inf).dispatch_timeout == math.inf


def test_dispatch_timeout_is_a_device_uri_option():
    """tenstorrent://?dispatch_timeout=S sets the simulated device's deadline; a bad value is
    INVALID_ARGUMENT naming the option."""
    device = hal.create_device("tenstorrent://?dispatch_timeout=2.5")
    try:
        assert device.backend.dispatch_timeout == 2.5
    finally:
        device.close()
    for bad in ("-1", "abc"):
        with pytest.raises(HalError) as error:
            hal.create_device(f"tenstorrent://?dispatch_timeout={bad}")
        assert error.value.code == StatusCode.INVALID_ARGUMENT and "dispatch_timeout" in str(error.value)


def _stopped_within(stop, seconds: float) -> float | None:
    """Seconds until the watchdog stopped the dispatch `stop` runs now (the cores stop at
    stop[0] == stop[1]), or None if it did not within `seconds`."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if stop[0] == stop[1]:
            return time.monotonic() - start
        time.sleep(0.01)
    return None


def test_watchdog_deadlines_from_several_threads():
    """The watchdog's slots are written without a lock: an earlier deadline from another
    thread wakes it although it sleeps toward a later one; a slot whose deadline moved
    later is honoured at the new time; a dispatch after an expired one starts clean
    (its thread's flag, reused, still marks the one stopped); an unwatched dispatch is
    never stopped."""
    watchdog = Watchdog("test")
    try:
        late = watchdog.watch(30.0)  # the thread now sleeps for 30 s
        stops, done = {}, threading.Event()

        def dispatch():  # a slot lives as long as its thread
            stops["early"] = watchdog.watch(0.2)
            done.wait(10)

        thread = threading.Thread(target=dispatch)
        thread.start()
        while "early" not in stops:
            time.sleep(0.01)
        assert _stopped_within(stops["early"], 5.0) is not None
        assert late[0] != late[1]
        done.set()
        thread.join()

        watchdog.unwatch()
        first = watchdog.watch(0.1)
        first_number = first[1]
        watchdog.unwatch()  # ended before its deadline: the next dispatch of this thread is later
        second = watchdog.watch(0.6)
        waited = _stopped_within(second, 5.0)
        assert waited is not None and waited > 0.3 and second[0] != first_number

        watchdog.unwatch()
        third = watchdog.watch(30.0)
        assert third is second and third[0] == first_number + 1  # the thread's flag marks the second
        assert _stopped_within(third, 0.5) is None  # the expired flag was that dispatch's alone
        watchdog.unwatch()
        assert _stopped_within(third, 0.3) is None
    finally:
        watchdog.close()
