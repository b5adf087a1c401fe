"""HalFence: a set of (semaphore, value) timepoints.

Modelled on iree.runtime's HalFence and IREE's fence semantics (runtime/src/iree/hal/fence.h).
"""

import threading
import time

import hal

from .ctsutil import SC, TIMEOUT_NS, new_buffer, raises_status, read_bytes


def test_empty_fence(device):
    fence = hal.HalFence(4)
    assert fence.timepoint_count == 0
    assert fence.wait(timeout=0) is True
    fence.signal()  # nothing to signal


def test_insert_keeps_max_per_semaphore(device):
    a, b = device.create_semaphore(0), device.create_semaphore(0)
    fence = hal.HalFence(2)
    fence.insert(a, 3)
    fence.insert(a, 1)
    fence.insert(a, 2)
    assert fence.timepoint_count == 1
    fence.insert(b, 5)
    assert fence.timepoint_count == 2
    a.signal(2)
    b.signal(5)
    assert fence.wait(deadline=0) is False   # still needs a >= 3
    a.signal(3)
    assert fence.wait(deadline=0) is True


def test_insert_raises_value(device):
    a = device.create_semaphore(0)
    fence = hal.HalFence(1)
    fence.insert(a, 1)
    fence.insert(a, 4)
    fence.signal()
    assert a.query() == 4


def test_capacity_limits_distinct_semaphores(device):
    a, b = device.create_semaphore(0), device.create_semaphore(0)
    fence = hal.HalFence(1)
    fence.insert(a, 1)
    fence.insert(a, 2)          # same semaphore: no new slot needed
    with raises_status(SC.RESOURCE_EXHAUSTED):
        fence.insert(b, 1)
    assert fence.timepoint_count == 1
    small = hal.HalFence.create_at(a, 1)
    with raises_status(SC.RESOURCE_EXHAUSTED):
        small.extend(hal.HalFence.create_at(b, 1))


def test_create_at(device):
    a = device.create_semaphore(0)
    fence = hal.HalFence.create_at(a, 7)
    assert fence.timepoint_count == 1
    assert fence.wait(timeout=1_000_000) is False
    a.signal(7)
    assert fence.wait(timeout=TIMEOUT_NS) is True


def test_join(device):
    a, b, c = (device.create_semaphore(0) for _ in range(3))
    joined = hal.HalFence.join([hal.HalFence.create_at(a, 1), hal.HalFence.create_at(b, 2),
                                hal.HalFence.create_at(a, 5), hal.HalFence(1)])
    assert joined.timepoint_count == 2
    joined.signal()
    assert a.query() == 5 and b.query() == 2 and c.query() == 0


def test_join_empty_list(device):
    joined = hal.HalFence.join([])
    assert joined.timepoint_count == 0
    assert joined.wait(timeout=0) is True


def test_extend(device):
    a, b = device.create_semaphore(0), device.create_semaphore(0)
    f1 = hal.HalFence(2)
    f1.insert(a, 2)
    f2 = hal.HalFence(2)
    f2.insert(a, 4)
    f2.insert(b, 1)
    f1.extend(f2)
    assert f1.timepoint_count == 2
    assert f2.timepoint_count == 2  # the source is unchanged
    a.signal(2)
    b.signal(1)
    assert f1.wait(deadline=0) is False  # a must reach 4
    a.signal(4)
    assert f1.wait(deadline=0) is True


def test_signal_sets_every_timepoint(device):
    sems = [device.create_semaphore(i) for i in range(3)]
    fence = hal.HalFence(3)
    for i, s in enumerate(sems):
        fence.insert(s, 10 + i)
    fence.signal()
    assert [s.query() for s in sems] == [10, 11, 12]


def test_fail_fails_every_semaphore(device):
    a, b = device.create_semaphore(0), device.create_semaphore(0)
    fence = hal.HalFence(2)
    fence.insert(a, 1)
    fence.insert(b, 1)
    fence.fail("fence failure")
    for sem in (a, b):
        with raises_status(SC.UNKNOWN) as info:
            sem.query()
        assert "fence failure" in str(info.value)
    with raises_status(SC.UNKNOWN):
        fence.wait(timeout=TIMEOUT_NS)


def test_wait_raises_when_member_failed(device):
    a, b = device.create_semaphore(0), device.create_semaphore(0)
    fence = hal.HalFence(2)
    fence.insert(a, 1)
    fence.insert(b, 1)
    a.signal(1)
    b.fail(SC.CANCELLED)
    with raises_status(SC.CANCELLED):
        fence.wait(timeout=TIMEOUT_NS)


def test_wait_timeout_and_deadline(device):
    a = device.create_semaphore(0)
    fence = hal.HalFence.create_at(a, 1)
    t0 = time.monotonic_ns()
    assert fence.wait(timeout=20_000_000) is False
    assert time.monotonic_ns() - t0 >= 15_000_000
    assert fence.wait(deadline=time.monotonic_ns() + 10_000_000) is False
    assert fence.wait(deadline=0) is False


def test_fence_wait_woken_from_thread(device):
    a, b = device.create_semaphore(0), device.create_semaphore(0)
    fence = hal.HalFence(2)
    fence.insert(a, 1)
    fence.insert(b, 1)
    result = {}
    t = threading.Thread(target=lambda: result.setdefault("ok", fence.wait(timeout=TIMEOUT_NS)),
                         daemon=True)
    t.start()
    time.sleep(0.02)
    a.signal(1)
    time.sleep(0.02)
    assert t.is_alive()
    b.signal(1)
    t.join(10)
    assert result.get("ok") is True


def test_fences_as_queue_wait_and_signal(device, allocator):
    buf = new_buffer(allocator, 64)
    gate = device.create_semaphore(0)
    done_a, done_b = device.create_semaphore(0), device.create_semaphore(0)
    wait_fence = hal.HalFence.create_at(gate, 1)
    signal_fence = hal.HalFence(2)
    signal_fence.insert(done_a, 1)
    signal_fence.insert(done_b, 3)
    device.queue_fill(buf, b"\x42", wait_fence, signal_fence)
    assert signal_fence.wait(deadline=0) is False
    gate.signal(1)
    assert signal_fence.wait(timeout=TIMEOUT_NS) is True
    assert done_a.query() == 1 and done_b.query() == 3
    assert (read_bytes(buf) == 0x42).all()
