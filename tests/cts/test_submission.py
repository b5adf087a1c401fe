"""Queue submissions ordered by semaphores: wait-before-signal, cross-queue chains,
fan-out, out-of-order submission, failure propagation, barriers.

Modelled on IREE's cts/semaphore_submission_test.h and queue/semaphore_submission_test.cc.
"""

import time

import numpy as np
import pytest

import hal

from .ctsutil import (
    BU,
    MT,
    SC,
    TIMEOUT_NS,
    det_bytes,
    new_buffer,
    raises_status,
    read_bytes,
    run_threads,
    transfer_cb,
    wait_ok,
)

MS = 1_000_000


def _copy_cb(device, src, dst, **kw):
    cb = transfer_cb(device)
    cb.copy(src, dst, **kw)
    cb.end()
    return cb


def test_submit_with_no_waits(device, allocator):
    buf = new_buffer(allocator, 32)
    cb = transfer_cb(device)
    cb.fill(buf, b"\x61")
    cb.end()
    sem = device.create_semaphore(0)
    device.queue_execute(cb, [], [(sem, 1)])
    wait_ok(sem, 1)
    assert (read_bytes(buf) == 0x61).all()


def test_signal_multiple_semaphores(device, allocator):
    cb = transfer_cb(device)
    cb.end()
    a, b = device.create_semaphore(0), device.create_semaphore(10)
    device.queue_execute(cb, [], [(a, 1), (b, 11)])
    assert device.wait_semaphores([(a, 1), (b, 11)], "all", timeout=TIMEOUT_NS)
    assert a.query() == 1 and b.query() == 11


def test_wait_before_signal(device, allocator):
    src = new_buffer(allocator, 256, init=det_bytes(256, seed=1))
    dst = new_buffer(allocator, 256)
    gate, done = device.create_semaphore(0), device.create_semaphore(0)
    t0 = time.monotonic()
    device.queue_execute(_copy_cb(device, src, dst), [(gate, 1)], [(done, 1)])
    assert time.monotonic() - t0 < 1.0, "queue_execute blocked on an unsignalled wait"
    time.sleep(0.02)
    assert done.query() == 0
    assert not read_bytes(dst).any(), "work ran before its wait was satisfied"
    gate.signal(1)
    wait_ok(done, 1)
    np.testing.assert_array_equal(read_bytes(dst), det_bytes(256, seed=1))


def test_wait_on_value_already_reached(device, allocator):
    buf = new_buffer(allocator, 16)
    gate, done = device.create_semaphore(5), device.create_semaphore(0)
    cb = transfer_cb(device)
    cb.fill(buf, b"\x01")
    cb.end()
    device.queue_execute(cb, [(gate, 3)], [(done, 1)])
    wait_ok(done, 1)
    assert (read_bytes(buf) == 1).all()


def test_wait_on_several_semaphores(device, allocator):
    buf = new_buffer(allocator, 16)
    a, b, done = (device.create_semaphore(0) for _ in range(3))
    cb = transfer_cb(device)
    cb.fill(buf, b"\x02")
    cb.end()
    device.queue_execute(cb, [(a, 1), (b, 1)], [(done, 1)])
    a.signal(1)
    assert done.wait(1, timeout=20 * MS) is False
    b.signal(1)
    wait_ok(done, 1)
    assert (read_bytes(buf) == 2).all()


def test_cross_queue_chain(device, allocator):
    """transfer-queue update -> compute-queue command buffer -> transfer-queue copy."""
    data = det_bytes(512, seed=2)
    a = new_buffer(allocator, 512)
    b = new_buffer(allocator, 512)
    c = new_buffer(allocator, 512)
    start, s1, s2, s3 = (device.create_semaphore(0) for _ in range(4))
    device.queue_update(data, a, [(start, 1)], [(s1, 1)])
    cb = transfer_cb(device)
    cb.copy(a, b)
    cb.fill(b, b"\xFF", 0, 16)
    cb.end()
    device.queue_execute(cb, [(s1, 1)], [(s2, 1)])
    device.queue_copy(b, c, [(s2, 1)], [(s3, 1)])
    assert s3.query() == 0
    start.signal(1)
    wait_ok(s3, 1)
    ref = data.copy()
    ref[:16] = 0xFF
    np.testing.assert_array_equal(read_bytes(c), ref)
    np.testing.assert_array_equal(read_bytes(a), data)


def test_timeline_chain_on_one_semaphore(device, allocator):
    buf = new_buffer(allocator, 4)
    sem = device.create_semaphore(0)
    for i in range(1, 9):
        device.queue_update(np.uint32(i).tobytes(), buf, [(sem, i - 1)], [(sem, i)])
    wait_ok(sem, 8)
    assert np.frombuffer(buf.map_read(), np.uint32)[0] == 8


def test_fan_out(device, allocator):
    src = new_buffer(allocator, 128, init=det_bytes(128, seed=3))
    outs = [new_buffer(allocator, 128) for _ in range(4)]
    gate = device.create_semaphore(0)
    dones = [device.create_semaphore(0) for _ in outs]
    for out, done in zip(outs, dones):
        device.queue_execute(_copy_cb(device, src, out), [(gate, 1)], [(done, 1)])
    time.sleep(0.01)
    assert all(d.query() == 0 for d in dones)
    gate.signal(1)
    assert device.wait_semaphores([(d, 1) for d in dones], "all", timeout=TIMEOUT_NS)
    for out in outs:
        np.testing.assert_array_equal(read_bytes(out), det_bytes(128, seed=3))


def test_fan_in(device, allocator):
    parts = [new_buffer(allocator, 32) for _ in range(3)]
    joined = new_buffer(allocator, 96)
    sems = [device.create_semaphore(0) for _ in parts]
    done = device.create_semaphore(0)
    cb = transfer_cb(device)
    for i, p in enumerate(parts):
        cb.copy(p, joined, 0, 32 * i, 32)
    cb.end()
    device.queue_execute(cb, [(s, 1) for s in sems], [(done, 1)])
    for i, (p, s) in enumerate(zip(parts, sems)):
        device.queue_fill(p, bytes([i + 1]), [], [(s, 1)])
    wait_ok(done, 1)
    assert read_bytes(joined).tolist() == [1] * 32 + [2] * 32 + [3] * 32


def test_consumer_submitted_before_producer(device, allocator):
    src = new_buffer(allocator, 64, init=det_bytes(64, seed=4))
    mid = new_buffer(allocator, 64)
    dst = new_buffer(allocator, 64)
    produced, consumed = device.create_semaphore(0), device.create_semaphore(0)
    # the consumer first, waiting on a value nobody has promised yet
    device.queue_execute(_copy_cb(device, mid, dst), [(produced, 1)], [(consumed, 1)])
    time.sleep(0.01)
    device.queue_execute(_copy_cb(device, src, mid), [], [(produced, 1)])
    wait_ok(consumed, 1)
    np.testing.assert_array_equal(read_bytes(dst), det_bytes(64, seed=4))


def test_many_outstanding_submissions(device, allocator):
    """32 independent submissions gated on one value; each signals its own semaphore."""
    buf = new_buffer(allocator, 4 * 32)
    gate = device.create_semaphore(0)
    dones = [device.create_semaphore(0) for _ in range(32)]
    for i, done in enumerate(dones):
        device.queue_fill(buf, np.uint32(i + 1).tobytes(), [(gate, 1)], [(done, 1)],
                          target_offset=4 * i, length=4)
    time.sleep(0.01)
    assert not read_bytes(buf).any()
    gate.signal(1)
    assert device.wait_semaphores([(d, 1) for d in dones], "all", timeout=TIMEOUT_NS)
    np.testing.assert_array_equal(np.frombuffer(buf.map_read(), np.uint32),
                                  np.arange(1, 33, dtype=np.uint32))


def test_semaphores_and_buffers_across_devices(allocator):
    """A semaphore signalled by one device's queue unblocks another device's queue."""
    import hal
    d1, d2 = hal.create_device("tenstorrent"), hal.create_device("tenstorrent")
    b1 = new_buffer(d1.allocator, 64)
    b2 = new_buffer(d2.allocator, 64)
    gate, s1, s2 = d1.create_semaphore(0), d1.create_semaphore(0), d2.create_semaphore(0)
    d1.queue_fill(b1, b"\x05", [(gate, 1)], [(s1, 1)])
    d2.queue_copy(b1, b2, [(s1, 1)], [(s2, 1)])
    time.sleep(0.01)
    assert s2.query() == 0
    gate.signal(1)
    wait_ok(s2, 1)
    assert (read_bytes(b2) == 5).all()


def test_empty_execute_signals(device):
    sem = device.create_semaphore(0)
    device.queue_execute([], [], [(sem, 1)])
    wait_ok(sem, 1)


def test_execute_now_returns_when_done_and_raises_its_failure(device, allocator):
    """execute_now runs a command buffer and returns when it is done, without waiting
    for work that waits on a semaphore (IREE orders queue work by semaphores only); a
    failure raises with its code, the submission shows in the submission graph, and the
    queue goes on."""
    pending, now = new_buffer(allocator, 64), new_buffer(allocator, 64)
    gate, done = device.create_semaphore(0), device.create_semaphore(0)
    device.queue_fill(pending, b"\x01", [(gate, 1)], [(done, 1)])
    cb = transfer_cb(device)
    cb.fill(now, b"\x02")
    cb.end()
    device.execute_now(cb, timeout=TIMEOUT_NS)
    assert (read_bytes(now) == 2).all() and done.query() == 0
    gate.signal(1)
    wait_ok(done, 1)
    assert (read_bytes(pending) == 1).all()
    gone = new_buffer(allocator, 64)
    reused = transfer_cb(device, binding_capacity=1)
    reused.fill(hal.BindingRef(0), b"\x03")
    reused.end()
    gone.release()
    with raises_status(SC.FAILED_PRECONDITION):
        device.execute_now(reused, [gone], timeout=TIMEOUT_NS)
    device.execute_now(reused, [now], timeout=TIMEOUT_NS)
    assert (read_bytes(now) == 3).all()
    labels = [node.label for node in device.submission_graph().nodes]
    assert labels.count("execute_now") == 2  # the failed one was refused at the call, before it was submitted


def test_in_flight_work_keeps_its_resources_alive(device, allocator):
    """Dropping the Python references to buffers and command buffers of a pending
    submission does not free them before it runs (IREE retains them)."""
    import gc
    src = new_buffer(allocator, 64, init=np.full(64, 7, np.uint8))
    dst = new_buffer(allocator, 64)
    cb = transfer_cb(device)
    cb.copy(src, dst)
    cb.end()
    gate, done = device.create_semaphore(0), device.create_semaphore(0)
    device.queue_execute(cb, [(gate, 1)], [(done, 1)])
    del cb, src
    gc.collect()
    gate.signal(1)
    wait_ok(done, 1)
    assert (read_bytes(dst) == 7).all()


def test_dropped_in_flight_buffer_freed_after_completion(device, allocator):
    import gc

    def live():
        s = allocator.statistics
        return s["device_bytes_allocated"] - s["device_bytes_freed"]

    base = live()
    buf = allocator.allocate_buffer(MT.DEVICE_LOCAL, BU.DEFAULT, 8192)
    gate, done = device.create_semaphore(0), device.create_semaphore(0)
    device.queue_fill(buf, b"\x01", [(gate, 1)], [(done, 1)])
    del buf
    gc.collect()
    assert live() >= base + 8192, "freed while still in flight"
    gate.signal(1)
    wait_ok(done, 1)
    deadline = time.monotonic() + 5
    while live() != base and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.005)
    assert live() == base


def test_profiling_does_not_disturb_queues(device, allocator):
    buf = new_buffer(allocator, 16)
    device.begin_profiling()
    sem = device.create_semaphore(0)
    device.queue_fill(buf, b"\x0A", [], [(sem, 1)])
    wait_ok(sem, 1)
    device.flush_profiling()
    device.end_profiling()
    assert (read_bytes(buf) == 0x0A).all()


# -- failure propagation ---------------------------------------------------------------------

@pytest.mark.parametrize("code", [SC.CANCELLED, SC.DATA_LOSS])
def test_failed_wait_fails_signals_and_downstream(device, allocator, code):
    a_buf = new_buffer(allocator, 64)
    b_buf = new_buffer(allocator, 64)
    gate, s1, s2 = (device.create_semaphore(0) for _ in range(3))
    cb = transfer_cb(device)
    cb.fill(a_buf, b"\x77")
    cb.end()
    device.queue_execute(cb, [(gate, 1)], [(s1, 1)])
    device.queue_copy(a_buf, b_buf, [(s1, 1)], [(s2, 1)])
    gate.fail(code)
    with raises_status(code):
        s1.wait(1, timeout=TIMEOUT_NS)
    with raises_status(code):
        s2.wait(1, timeout=TIMEOUT_NS)
    with raises_status(code):
        s2.query()
    assert not read_bytes(a_buf).any(), "a failed submission must not run"
    assert not read_bytes(b_buf).any()


def test_submit_on_already_failed_wait_raises_and_fails_signals(device, allocator):
    buf = new_buffer(allocator, 16)
    gate, done = device.create_semaphore(0), device.create_semaphore(0)
    gate.fail(SC.CANCELLED)
    with raises_status(SC.CANCELLED):
        device.queue_fill(buf, b"\x01", [(gate, 1)], [(done, 1)])
    with raises_status(SC.CANCELLED):
        done.wait(1, timeout=TIMEOUT_NS)
    assert not read_bytes(buf).any()


def test_failure_does_not_affect_independent_work(device, allocator):
    buf = new_buffer(allocator, 16)
    bad_gate, bad_done = device.create_semaphore(0), device.create_semaphore(0)
    ok_done = device.create_semaphore(0)
    device.queue_barrier([(bad_gate, 1)], [(bad_done, 1)])
    device.queue_fill(buf, b"\x05", [], [(ok_done, 1)])
    bad_gate.fail(SC.CANCELLED)
    wait_ok(ok_done, 1)
    assert (read_bytes(buf) == 5).all()
    with raises_status(SC.CANCELLED):
        bad_done.wait(1, timeout=TIMEOUT_NS)
    # the device still works after a failed submission
    again = device.create_semaphore(0)
    device.queue_fill(buf, b"\x06", [], [(again, 1)])
    wait_ok(again, 1)
    assert (read_bytes(buf) == 6).all()


def test_failing_one_of_several_waits(device, allocator):
    a, b, done = (device.create_semaphore(0) for _ in range(3))
    device.queue_barrier([(a, 1), (b, 1)], [(done, 1)])
    a.signal(1)
    b.fail(SC.DATA_LOSS)
    with raises_status(SC.DATA_LOSS):
        done.wait(1, timeout=TIMEOUT_NS)


# -- barriers ------------------------------------------------------------------------------

def test_queue_barrier_orders_work(device, allocator):
    src = new_buffer(allocator, 64)
    dst = new_buffer(allocator, 64)
    gate, filled, barrier_done, copied = (device.create_semaphore(0) for _ in range(4))
    device.queue_fill(src, b"\x3E", [(gate, 1)], [(filled, 1)])
    device.queue_barrier([(filled, 1)], [(barrier_done, 1)])
    device.queue_copy(src, dst, [(barrier_done, 1)], [(copied, 1)])
    time.sleep(0.01)
    assert barrier_done.query() == 0 and copied.query() == 0
    gate.signal(1)
    wait_ok(copied, 1)
    assert barrier_done.query() == 1
    assert (read_bytes(dst) == 0x3E).all()


def test_queue_barrier_no_waits_signals(device):
    sem = device.create_semaphore(0)
    device.queue_barrier([], [(sem, 4)])
    wait_ok(sem, 4)
    assert sem.query() == 4


def test_queue_flush(device, allocator):
    buf = new_buffer(allocator, 16)
    sem = device.create_semaphore(0)
    device.queue_fill(buf, b"\x09", [], [(sem, 1)])
    device.queue_flush()
    wait_ok(sem, 1)
    assert (read_bytes(buf) == 9).all()


# -- concurrency ---------------------------------------------------------------------------

def test_failure_attributed_to_the_failing_submission_under_concurrency(device, allocator):
    """Submissions issued at the same time from two threads (the scheduler issuing a
    newly unblocked submission and the host issuing a ready one) must each complete with
    their own status: a failing op must fail its own submission, never a neighbour's."""
    import sys
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # make thread interleavings frequent
    mixed_up = []
    try:
        for _ in range(40):
            bad = new_buffer(allocator, 64)
            good = new_buffer(allocator, 64)
            gate, bad_done = device.create_semaphore(0), device.create_semaphore(0)
            device.queue_fill(bad, b"\x01", [(gate, 1)], [(bad_done, 1)])
            bad.release()  # the fill will fail with FAILED_PRECONDITION when it runs
            good_done = [device.create_semaphore(0) for _ in range(10)]
            gate.signal(1)
            for s in good_done:
                device.queue_fill(good, b"\x02", [], [(s, 1)])
            with raises_status(SC.FAILED_PRECONDITION):
                bad_done.wait(1, timeout=TIMEOUT_NS)
            for s in good_done:
                try:
                    s.wait(1, timeout=TIMEOUT_NS)
                except hal.HalError as e:
                    mixed_up.append(e)
    finally:
        sys.setswitchinterval(old)
    assert not mixed_up, f"{len(mixed_up)} good submissions failed with another's error: {mixed_up[0]}"


def test_concurrent_submitters(device, allocator):
    """Several host threads each run their own semaphore-chained pipeline."""
    n_threads, steps = 4, 30
    bufs = [new_buffer(allocator, 4) for _ in range(n_threads)]

    def pipeline(k):
        sem = device.create_semaphore(0)
        for i in range(1, steps + 1):
            device.queue_update(np.uint32(k * 1000 + i).tobytes(), bufs[k],
                                [(sem, i - 1)], [(sem, i)])
        assert sem.wait(steps, timeout=TIMEOUT_NS)

    run_threads(pipeline, n_threads)
    for k, buf in enumerate(bufs):
        assert np.frombuffer(buf.map_read(), np.uint32)[0] == k * 1000 + steps


def test_threads_with_cross_thread_waits(device, allocator):
    """Four host threads each build a semaphore chain of mixed queue operations; some
    steps also wait on another thread's timeline. Every chain completes, in order."""
    import random
    n_threads, steps = 4, 100
    sems = [device.create_semaphore(0) for _ in range(n_threads)]
    bufs = [new_buffer(allocator, 4 * steps) for _ in range(n_threads)]

    def worker(k):
        rng = random.Random(k)
        for i in range(1, steps + 1):
            waits = [(sems[k], i - 1)]
            other = rng.randrange(n_threads)
            if other != k and rng.random() < 0.3:
                waits.append((sems[other], max(0, i - 5)))
            value = np.uint32(i).tobytes()
            kind = rng.random()
            if kind < 0.4:
                device.queue_update(value, bufs[k], waits, [(sems[k], i)], target_offset=4 * (i - 1))
            elif kind < 0.7:
                cb = transfer_cb(device)
                cb.update(value, bufs[k], 4 * (i - 1))
                cb.end()
                device.queue_execute(cb, waits, [(sems[k], i)])
            else:
                device.queue_fill(bufs[k], value, waits, [(sems[k], i)],
                                  target_offset=4 * (i - 1), length=4)
        assert sems[k].wait(steps, timeout=TIMEOUT_NS)

    run_threads(worker, n_threads)
    for buf in bufs:
        np.testing.assert_array_equal(np.frombuffer(buf.map_read(), np.uint32),
                                      np.arange(1, steps + 1, dtype=np.uint32))
