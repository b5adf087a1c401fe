"""Timeline semaphores: query/signal, timeouts and deadlines, failure, multi-wait,
and cross-thread behaviour.

Modelled on IREE's cts/semaphore_test.h and core/semaphore_thread_test.cc.
"""

import threading
import time

import pytest

import hal

from .ctsutil import SC, TIMEOUT_NS, raises_status

MS = 1_000_000


def test_query_initial_value(device):
    assert device.create_semaphore(0).query() == 0
    assert device.create_semaphore(123).query() == 123
    big = (1 << 31) - 2
    assert device.create_semaphore(big).query() == big


def test_signal_and_query(device):
    sem = device.create_semaphore(2)
    sem.signal(3)
    assert sem.query() == 3
    sem.signal(40)
    assert sem.query() == 40


@pytest.mark.parametrize("value", [5, 4, 0])
def test_signal_not_increasing_invalid(device, value):
    sem = device.create_semaphore(5)
    with raises_status(SC.INVALID_ARGUMENT):
        sem.signal(value)
    assert sem.query() == 5  # the bad signal changed nothing


def test_wait_already_satisfied(device):
    sem = device.create_semaphore(7)
    assert sem.wait(0) is True
    assert sem.wait(7) is True
    assert sem.wait(7, timeout=0) is True
    assert sem.wait(3, deadline=0) is True


def test_wait_timeout_returns_false(device):
    sem = device.create_semaphore(0)
    t0 = time.monotonic_ns()
    assert sem.wait(1, timeout=30 * MS) is False
    elapsed = time.monotonic_ns() - t0
    assert elapsed >= 25 * MS
    assert elapsed < 5_000 * MS
    assert sem.query() == 0


def test_wait_deadline_returns_false(device):
    sem = device.create_semaphore(0)
    deadline = time.monotonic_ns() + 30 * MS
    assert sem.wait(1, deadline=deadline) is False
    assert time.monotonic_ns() >= deadline - 5 * MS


def test_wait_deadline_zero_polls(device):
    sem = device.create_semaphore(0)
    t0 = time.monotonic_ns()
    assert sem.wait(1, deadline=0) is False
    assert sem.wait(1, timeout=0) is False
    assert time.monotonic_ns() - t0 < 500 * MS
    sem.signal(1)
    assert sem.wait(1, deadline=0) is True


def test_deadline_in_the_past_polls(device):
    sem = device.create_semaphore(0)
    t0 = time.monotonic_ns()
    assert sem.wait(1, deadline=t0 - 1_000 * MS) is False
    assert time.monotonic_ns() - t0 < 500 * MS


# -- failure ------------------------------------------------------------------------

@pytest.mark.parametrize("code", [SC.CANCELLED, SC.DATA_LOSS])
def test_fail_with_status_code_keeps_code(device, code):
    sem = device.create_semaphore(0)
    sem.fail(code)
    with raises_status(code):
        sem.query()
    with raises_status(code):
        sem.wait(1)
    with raises_status(code):
        sem.wait(0, timeout=0)


def test_fail_with_hal_error_keeps_code_and_message(device):
    sem = device.create_semaphore(0)
    sem.fail(hal.HalError(SC.DATA_LOSS, "bits fell off the bus"))
    with raises_status(SC.DATA_LOSS) as info:
        sem.query()
    assert "bits fell off the bus" in str(info.value)


def test_fail_with_message_is_unknown(device):
    sem = device.create_semaphore(0)
    sem.fail("boom")
    with raises_status(SC.UNKNOWN) as info:
        sem.wait(1, timeout=TIMEOUT_NS)
    assert "boom" in str(info.value)


def test_first_failure_sticks(device):
    sem = device.create_semaphore(0)
    sem.fail(SC.CANCELLED)
    sem.fail(SC.DATA_LOSS)
    sem.fail("later")
    with raises_status(SC.CANCELLED):
        sem.query()


def test_signal_after_failure_does_not_clear_it(device):
    sem = device.create_semaphore(0)
    sem.fail(SC.DATA_LOSS)
    try:
        sem.signal(1)
    except hal.HalError:
        pass
    with raises_status(SC.DATA_LOSS):
        sem.query()


# -- multi-wait ------------------------------------------------------------------------

def test_wait_semaphores_empty_list(device):
    assert device.wait_semaphores([], "all", timeout=0) is True
    assert device.wait_semaphores([], "any", timeout=0) is True


def test_wait_all(device):
    a, b = device.create_semaphore(0), device.create_semaphore(0)
    a.signal(1)
    assert device.wait_semaphores([(a, 1), (b, 1)], "all", timeout=10 * MS) is False
    b.signal(2)
    assert device.wait_semaphores([(a, 1), (b, 1)], "all", timeout=TIMEOUT_NS) is True


def test_wait_any(device):
    a, b = device.create_semaphore(0), device.create_semaphore(0)
    assert device.wait_semaphores([(a, 1), (b, 1)], "any", timeout=10 * MS) is False
    b.signal(1)
    assert device.wait_semaphores([(a, 1), (b, 1)], "any", timeout=TIMEOUT_NS) is True
    assert device.wait_semaphores([(a, 1), (b, 1)], "all", deadline=0) is False


def test_wait_mode_enum(device):
    a, b = device.create_semaphore(1), device.create_semaphore(0)
    assert device.wait_semaphores([(a, 1), (b, 1)], hal.WaitMode.ANY, deadline=0) is True
    assert device.wait_semaphores([(a, 1), (b, 1)], hal.WaitMode.ALL, deadline=0) is False


def test_wait_semaphores_with_fence(device):
    a, b = device.create_semaphore(0), device.create_semaphore(0)
    fence = hal.HalFence(2)
    fence.insert(a, 2)
    fence.insert(b, 1)
    a.signal(2)
    assert device.wait_semaphores(fence, "all", timeout=5 * MS) is False
    b.signal(1)
    assert device.wait_semaphores(fence, "all", timeout=TIMEOUT_NS) is True


def test_wait_semaphores_failed_raises(device):
    a, b = device.create_semaphore(0), device.create_semaphore(0)
    b.fail(SC.CANCELLED)
    with raises_status(SC.CANCELLED):
        device.wait_semaphores([(a, 1), (b, 1)], "all", timeout=TIMEOUT_NS)


# -- threads -----------------------------------------------------------------------------

class Runner(threading.Thread):
    """A thread that records its result or exception."""

    def __init__(self, fn):
        super().__init__(daemon=True)
        self.fn, self.result, self.error = fn, None, None

    def run(self):
        try:
            self.result = self.fn()
        except BaseException as e:  # noqa: BLE001 - reported to the main thread
            self.error = e

    def finish(self, timeout_s=10):
        self.join(timeout_s)
        assert not self.is_alive(), "thread did not finish"
        if self.error is not None:
            raise self.error
        return self.result


def test_wait_then_signal_from_thread(device):
    sem = device.create_semaphore(0)
    waiter = Runner(lambda: sem.wait(5, timeout=TIMEOUT_NS))
    waiter.start()
    time.sleep(0.02)
    assert waiter.is_alive()
    sem.signal(3)
    time.sleep(0.01)
    assert waiter.is_alive(), "woke up before the value was reached"
    sem.signal(5)
    assert waiter.finish() is True


def test_ping_pong(device):
    ping, pong = device.create_semaphore(0), device.create_semaphore(0)
    rounds = 50
    log = []

    def player():
        for i in range(1, rounds + 1):
            assert ping.wait(i, timeout=TIMEOUT_NS)
            log.append(("pong", i))
            pong.signal(i)
        return True

    t = Runner(player)
    t.start()
    for i in range(1, rounds + 1):
        log.append(("ping", i))
        ping.signal(i)
        assert pong.wait(i, timeout=TIMEOUT_NS)
    assert t.finish() is True
    assert log == [(who, i) for i in range(1, rounds + 1) for who in ("ping", "pong")]
    assert ping.query() == rounds and pong.query() == rounds


def test_wait_any_woken_from_thread(device):
    sems = [device.create_semaphore(0) for _ in range(4)]
    waiter = Runner(lambda: device.wait_semaphores([(s, 1) for s in sems], "any",
                                                   timeout=TIMEOUT_NS))
    waiter.start()
    time.sleep(0.02)
    sems[2].signal(1)
    assert waiter.finish() is True


def test_wait_all_woken_from_threads(device):
    sems = [device.create_semaphore(0) for _ in range(4)]
    waiter = Runner(lambda: device.wait_semaphores([(s, 2) for s in sems], "all",
                                                   timeout=TIMEOUT_NS))
    waiter.start()
    signallers = [Runner(lambda s=s: (s.signal(1), time.sleep(0.005), s.signal(2)))
                  for s in sems]
    for s in signallers[:3]:
        s.start()
    for s in signallers[:3]:
        s.finish()
    time.sleep(0.02)
    assert waiter.is_alive(), "wait-all returned before the last semaphore"
    signallers[3].start()
    signallers[3].finish()
    assert waiter.finish() is True


def test_fail_wakes_blocked_waiter(device):
    sem = device.create_semaphore(0)
    waiter = Runner(lambda: sem.wait(1, timeout=TIMEOUT_NS))
    waiter.start()
    time.sleep(0.03)
    assert waiter.is_alive()
    t0 = time.monotonic()
    sem.fail(SC.DATA_LOSS)
    waiter.join(5)
    assert not waiter.is_alive()
    assert time.monotonic() - t0 < 2.0
    assert isinstance(waiter.error, hal.HalError)
    assert waiter.error.code == SC.DATA_LOSS


def test_fail_wakes_multi_waiter(device):
    a, b = device.create_semaphore(0), device.create_semaphore(0)
    waiter = Runner(lambda: device.wait_semaphores([(a, 1), (b, 1)], "all",
                                                   timeout=TIMEOUT_NS))
    waiter.start()
    time.sleep(0.02)
    a.signal(1)
    b.fail(SC.CANCELLED)
    waiter.join(5)
    assert not waiter.is_alive()
    assert isinstance(waiter.error, hal.HalError) and waiter.error.code == SC.CANCELLED


def test_many_waiters_one_signal(device):
    sem = device.create_semaphore(0)
    waiters = [Runner(lambda v=v: sem.wait(v, timeout=TIMEOUT_NS)) for v in (1, 2, 3, 3, 3)]
    for w in waiters:
        w.start()
    time.sleep(0.02)
    sem.signal(3)
    assert all(w.finish() is True for w in waiters)


def test_concurrent_signallers_keep_max(device):
    sem = device.create_semaphore(0)
    errors = []

    def signaller(values):
        for v in values:
            try:
                sem.signal(v)
            except hal.HalError as e:
                errors.append(e)

    threads = [Runner(lambda k=k: signaller(range(k + 1, 400, 4))) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.finish()
    assert sem.query() == 399
    assert all(e.code == SC.INVALID_ARGUMENT for e in errors)


def test_well_typed_bad_values_are_invalid_argument(device):
    """Issue 21: these raised ValueError, not a HalError."""
    semaphore = device.create_semaphore(0)
    with raises_status(SC.INVALID_ARGUMENT):
        device.create_semaphore(0).fail(99)  # no such status code
    with raises_status(SC.INVALID_ARGUMENT):
        device.wait_semaphores([(semaphore, 0)], mode=7)
    for timeout in (float("nan"), float("inf")):
        with raises_status(SC.INVALID_ARGUMENT):
            semaphore.wait(1, timeout=timeout)
    assert semaphore.wait(0, timeout=0)  # the semaphore is fine
