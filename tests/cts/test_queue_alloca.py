"""Queue-ordered allocation: queue_alloca / queue_dealloca.

Modelled on IREE's queue/queue_alloca_test.cc.
"""

import gc
import time

import numpy as np
import pytest

import hal

from .ctsutil import (
    BU,
    DEVICE_MAPPABLE,
    MT,
    SC,
    TIMEOUT_NS,
    USAGE_MAPPABLE,
    det_bytes,
    new_buffer,
    raises_status,
    read_bytes,
    wait_ok,
)


def _live_device(allocator):
    s = allocator.statistics
    return s["device_bytes_allocated"] - s["device_bytes_freed"]


def _expect_failure(device, call, done, value, codes):
    """A queue op that must fail: either the call raises, or its signal semaphore fails."""
    try:
        call()
    except hal.HalError as e:
        assert e.code in codes, f"got {e.code!r}: {e}"
        return
    with pytest.raises(hal.HalError) as info:
        done.wait(value, timeout=TIMEOUT_NS)
    assert info.value.code in codes, f"got {info.value.code!r}: {info.value}"


def test_alloca_fill_copy_dealloca(device, allocator):
    host = new_buffer(allocator, 1024, memory_type=MT.HOST_LOCAL)
    sem = device.create_semaphore(0)
    buf = device.queue_alloca(1024, [], [(sem, 1)])
    assert buf.byte_length() == 1024
    assert int(buf.memory_type()) & int(MT.DEVICE_LOCAL) == int(MT.DEVICE_LOCAL)
    device.queue_fill(buf, b"\xA1\xB2\xC3\xD4", [(sem, 1)], [(sem, 2)])
    device.queue_copy(buf, host, [(sem, 2)], [(sem, 3)])
    device.queue_dealloca(buf, [(sem, 3)], [(sem, 4)])
    wait_ok(sem, 4)
    assert read_bytes(host).tolist() == [0xA1, 0xB2, 0xC3, 0xD4] * 256


def test_alloca_wait_before_signal(device, allocator):
    gate, ready, done = (device.create_semaphore(0) for _ in range(3))
    t0 = time.monotonic()
    buf = device.queue_alloca(256, [(gate, 1)], [(ready, 1)],
                              memory_type=DEVICE_MAPPABLE, allowed_usage=USAGE_MAPPABLE)
    assert time.monotonic() - t0 < 1.0
    assert buf.byte_length() == 256
    device.queue_update(det_bytes(256, seed=9), buf, [(ready, 1)], [(done, 1)])
    time.sleep(0.01)
    assert ready.query() == 0
    gate.signal(1)
    wait_ok(done, 1)
    np.testing.assert_array_equal(read_bytes(buf), det_bytes(256, seed=9))


def test_alloca_host_local(device, allocator):
    sem = device.create_semaphore(0)
    buf = device.queue_alloca(64, [], [(sem, 1)], memory_type=MT.HOST_LOCAL,
                              allowed_usage=USAGE_MAPPABLE)
    device.queue_fill(buf, b"\x5A", [(sem, 1)], [(sem, 2)])
    wait_ok(sem, 2)
    assert int(buf.memory_type()) & int(MT.HOST_VISIBLE)
    assert (read_bytes(buf) == 0x5A).all()
    device.queue_dealloca(buf, [(sem, 2)], [(sem, 3)])
    wait_ok(sem, 3)


def test_alloca_mappable_properties(device, allocator):
    sem = device.create_semaphore(0)
    buf = device.queue_alloca(100, [], [(sem, 1)], memory_type=DEVICE_MAPPABLE,
                              allowed_usage=USAGE_MAPPABLE)
    wait_ok(sem, 1)
    assert buf.byte_length() == 100
    assert int(buf.memory_type()) & int(MT.HOST_VISIBLE)
    buf.map_write(0, bytes(range(100)))
    assert buf.map_read(10, 5) == bytes(range(10, 15))


def test_dealloca_returns_memory(device, allocator):
    base = _live_device(allocator)
    sem = device.create_semaphore(0)
    buf = device.queue_alloca(64 * 1024, [], [(sem, 1)])
    device.queue_dealloca(buf, [(sem, 1)], [(sem, 2)])
    wait_ok(sem, 2)
    del buf
    assert _live_device(allocator) == base


def test_alloca_dealloca_cycles_do_not_leak(device, allocator):
    base = _live_device(allocator)
    sem = device.create_semaphore(0)
    v = 0
    for i in range(16):
        buf = device.queue_alloca(4096 * (i + 1), [(sem, v)], [(sem, v + 1)])
        device.queue_fill(buf, b"\x01", [(sem, v + 1)], [(sem, v + 2)])
        device.queue_dealloca(buf, [(sem, v + 2)], [(sem, v + 3)])
        v += 3
    wait_ok(sem, v)
    assert _live_device(allocator) == base


def test_use_after_dealloca_fails(device, allocator):
    sem = device.create_semaphore(0)
    buf = device.queue_alloca(256, [], [(sem, 1)])
    device.queue_dealloca(buf, [(sem, 1)], [(sem, 2)])
    wait_ok(sem, 2)
    done = device.create_semaphore(0)
    _expect_failure(device, lambda: device.queue_fill(buf, b"\x01", [(sem, 2)], [(done, 1)]),
                    done, 1, (SC.FAILED_PRECONDITION,))


def test_use_after_dealloca_queued_before_it_runs(device, allocator):
    """The fill is validated while the buffer is still live, but is ordered after the
    dealloca: it must fail when it runs, not write to freed (maybe reused) memory."""
    sem, gate, done = (device.create_semaphore(0) for _ in range(3))
    buf = device.queue_alloca(256, [], [(sem, 1)])
    device.queue_dealloca(buf, [(gate, 1)], [(sem, 2)])
    device.queue_fill(buf, b"\x01", [(sem, 2)], [(done, 1)])
    gate.signal(1)
    with raises_status(SC.FAILED_PRECONDITION):
        done.wait(1, timeout=TIMEOUT_NS)


def test_release_while_queued_fails_submission(device, allocator):
    buf = new_buffer(allocator, 64)
    gate, done = device.create_semaphore(0), device.create_semaphore(0)
    device.queue_fill(buf, b"\x01", [(gate, 1)], [(done, 1)])
    buf.release()
    gate.signal(1)
    with raises_status(SC.FAILED_PRECONDITION):
        done.wait(1, timeout=TIMEOUT_NS)


def test_copy_from_deallocated_buffer_fails(device, allocator):
    sem = device.create_semaphore(0)
    buf = device.queue_alloca(256, [], [(sem, 1)])
    device.queue_dealloca(buf, [(sem, 1)], [(sem, 2)])
    wait_ok(sem, 2)
    dst = new_buffer(allocator, 256)
    done = device.create_semaphore(0)
    _expect_failure(device, lambda: device.queue_copy(buf, dst, [], [(done, 1)]),
                    done, 1, (SC.FAILED_PRECONDITION,))
    assert not read_bytes(dst).any()


def test_map_after_dealloca_fails(device, allocator):
    sem = device.create_semaphore(0)
    buf = device.queue_alloca(64, [], [(sem, 1)], memory_type=DEVICE_MAPPABLE,
                              allowed_usage=USAGE_MAPPABLE)
    device.queue_dealloca(buf, [(sem, 1)], [(sem, 2)])
    wait_ok(sem, 2)
    with raises_status(SC.FAILED_PRECONDITION):
        buf.map_read()


def test_double_dealloca_fails(device, allocator):
    sem = device.create_semaphore(0)
    buf = device.queue_alloca(64, [], [(sem, 1)])
    device.queue_dealloca(buf, [(sem, 1)], [(sem, 2)])
    wait_ok(sem, 2)
    done = device.create_semaphore(0)
    _expect_failure(device, lambda: device.queue_dealloca(buf, [], [(done, 1)]),
                    done, 1, (SC.FAILED_PRECONDITION,))


def test_alloca_too_large(device, allocator):
    size = device.query_i64("tt.device", "dram_size") + 4096
    done = device.create_semaphore(0)
    _expect_failure(device, lambda: device.queue_alloca(size, [], [(done, 1)]),
                    done, 1, (SC.RESOURCE_EXHAUSTED,))
    # the device still allocates afterwards
    ok = device.create_semaphore(0)
    buf = device.queue_alloca(64, [], [(ok, 1)])
    wait_ok(ok, 1)
    assert buf.byte_length() == 64


def test_alloca_waits_on_failed_semaphore(device, allocator):
    gate, ready = device.create_semaphore(0), device.create_semaphore(0)
    device.queue_alloca(64, [(gate, 1)], [(ready, 1)])
    gate.fail(SC.CANCELLED)
    with raises_status(SC.CANCELLED):
        ready.wait(1, timeout=TIMEOUT_NS)


def test_allocator_buffer_with_queue_dealloca(device, allocator):
    """queue_dealloca also accepts a buffer from the allocator (IREE: it is then released)."""
    base = _live_device(allocator)
    buf = allocator.allocate_buffer(MT.DEVICE_LOCAL, BU.DEFAULT, 4096)
    sem = device.create_semaphore(0)
    device.queue_dealloca(buf, [], [(sem, 1)])
    wait_ok(sem, 1)
    del buf
    gc.collect()
    assert _live_device(allocator) == base
