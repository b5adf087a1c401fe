"""The queue scheduler on the simulated chip's command queues: device-side waits
across queues, wait-before-signal, and failure propagation from device faults."""

import threading
import time

import pytest

from hal.queue import QueueScheduler, Submission
from hal.semaphore import HalSemaphore
from hal.status import HalError, StatusCode
from tt_hal.sim.device import HostFunction, SimDevice

SECOND = 10**9


@pytest.fixture
def chip():
    backend = SimDevice("wormhole_b0")
    scheduler = QueueScheduler(backend, "test")
    yield backend, scheduler
    scheduler.close()
    backend.close()


def host_op(function):
    return HostFunction(function)


def submission(label, cq, waits, signals, *functions):
    return Submission(label, cq, list(waits), list(signals), [host_op(f) for f in functions], [])


def test_cross_queue_wait_is_a_device_side_wait(chip):
    """A transfer-queue submission waiting on a compute-queue one is issued at once with
    an event wait; no host thread holds it back."""
    backend, scheduler = chip
    order, gate = [], threading.Event()
    s = HalSemaphore(0)
    scheduler.submit(submission("compute", 0, [], [(s, 1)], lambda: gate.wait(5), lambda: order.append("compute")))
    scheduler.submit(submission("transfer", 1, [(s, 1)], [(s, 2)], lambda: order.append("transfer")))
    assert scheduler.pending_count() == 0  # issued to CQ1 behind an enqueue_wait_for_event
    time.sleep(0.05)
    assert order == []  # CQ1 is stalled on the device until CQ0's event
    gate.set()
    assert s.wait(2, timeout=5 * SECOND)
    assert order == ["compute", "transfer"]


def test_work_without_commands_completes_at_once_when_its_waits_are_reached(chip):
    """A submission with nothing to run (queue_alloca, dealloca, barrier) whose waits are
    all reached signals in the call, not behind other work on its queue (IREE orders
    queue work by semaphores alone); one whose waits are not is held until they are."""
    _, scheduler = chip
    gate, s, t = threading.Event(), HalSemaphore(0), HalSemaphore(0)
    scheduler.submit(submission("busy", 1, [], [(t, 1)], lambda: gate.wait(5)))  # CQ1 held by the gate
    scheduler.submit(submission("barrier", 1, [], [(s, 1)]))
    assert s.query() == 1
    scheduler.submit(submission("alloca", 1, [(s, 1)], [(s, 2)]))
    assert s.query() == 2
    scheduler.submit(submission("after busy", 1, [(t, 1)], [(s, 3)]))
    time.sleep(0.05)
    assert s.query() == 2 and t.query() == 0
    gate.set()
    assert s.wait(3, timeout=5 * SECOND) and t.query() == 1


def test_wait_before_signal_stays_pending_until_the_host_signals(chip):
    _, scheduler = chip
    done = []
    s, t = HalSemaphore(0), HalSemaphore(0)
    scheduler.submit(submission("consumer", 1, [(s, 5)], [(t, 1)], lambda: done.append(1)))
    assert scheduler.pending_count() == 1
    assert not t.wait(1, timeout=20_000_000)
    s.signal(4)
    assert not t.wait(1, timeout=20_000_000)
    s.signal(5)
    assert t.wait(1, timeout=5 * SECOND) and done == [1]


def test_device_fault_fails_signals_and_downstream_submissions(chip):
    _, scheduler = chip
    s, t = HalSemaphore(0), HalSemaphore(0)
    ran = []

    def fault():
        raise HalError(StatusCode.DATA_LOSS, "injected fault")

    scheduler.submit(submission("faulty", 0, [], [(s, 1)], fault, lambda: ran.append("after fault")))
    scheduler.submit(submission("downstream", 1, [(s, 1)], [(t, 1)], lambda: ran.append("downstream")))
    for semaphore in (s, t):
        with pytest.raises(HalError) as info:
            semaphore.wait(1, timeout=5 * SECOND)
        assert info.value.code == StatusCode.DATA_LOSS and "injected fault" in info.value.message
    assert ran == []  # nothing after the fault ran, on either queue


def test_queue_recovers_after_a_failed_submission(chip):
    _, scheduler = chip
    s, t = HalSemaphore(0), HalSemaphore(0)

    def fault():
        raise ValueError("boom")

    scheduler.submit(submission("faulty", 1, [], [(s, 1)], fault))
    scheduler.submit(submission("next", 1, [], [(t, 1)], lambda: None))
    assert t.wait(1, timeout=5 * SECOND)
    with pytest.raises(HalError) as info:
        s.wait(1, timeout=5 * SECOND)
    assert info.value.code == StatusCode.INTERNAL and "boom" in info.value.message


def test_host_failure_of_a_wait_fails_the_pending_submission(chip):
    _, scheduler = chip
    s, t = HalSemaphore(0), HalSemaphore(0)
    ran = []
    scheduler.submit(submission("consumer", 1, [(s, 1)], [(t, 1)], lambda: ran.append(1)))
    s.fail(HalError(StatusCode.CANCELLED, "producer cancelled"))
    with pytest.raises(HalError) as info:
        t.wait(1, timeout=5 * SECOND)
    assert info.value.code == StatusCode.CANCELLED and ran == []


def test_submitting_on_an_already_failed_wait_raises_and_fails_signals(chip):
    _, scheduler = chip
    s, t = HalSemaphore(0), HalSemaphore(0)
    s.fail(StatusCode.ABORTED)
    with pytest.raises(HalError) as info:
        scheduler.submit(submission("late", 1, [(s, 1)], [(t, 1)]))
    assert info.value.code == StatusCode.ABORTED
    assert t.failure is not None and t.failure.code == StatusCode.ABORTED


def test_close_cancels_waiting_submissions(chip):
    backend, scheduler = chip
    s, t = HalSemaphore(0), HalSemaphore(0)
    scheduler.submit(submission("never", 1, [(s, 1)], [(t, 1)]))
    scheduler.close()
    with pytest.raises(HalError) as info:
        t.wait(1, timeout=5 * SECOND)
    assert info.value.code == StatusCode.CANCELLED


def test_fan_out_and_fan_in_across_queues(chip):
    _, scheduler = chip
    root, joined = HalSemaphore(0), HalSemaphore(0)
    leaves = [HalSemaphore(0) for _ in range(6)]
    hits = []
    lock = threading.Lock()

    def hit(i):
        with lock:
            hits.append(i)

    for i, leaf in enumerate(leaves):
        scheduler.submit(submission(f"leaf{i}", i % 2, [(root, 1)], [(leaf, 1)], lambda i=i: hit(i)))
    scheduler.submit(submission("join", 0, [(leaf, 1) for leaf in leaves], [(joined, 1)], lambda: hit("join")))
    root.signal(1)
    assert joined.wait(1, timeout=5 * SECOND)
    assert sorted(hits[:-1]) == list(range(6)) and hits[-1] == "join"


@pytest.mark.parametrize("event_class", ["sim", "native"])
def test_an_event_signals_before_it_lets_its_waiters_go(event_class):
    """A submission on another queue that waits for this event must not run (and signal
    the next value of the timeline) before this event's semaphores are signalled
    (issue 21: `semaphore already signaled past` under load on two queues)."""
    from tt_hal.native.device import HardwareEvent
    from tt_hal.sim.device import SimEvent

    seen = []
    event = None

    def on_complete(error):
        seen.append((event.query(), event.synchronize(0)))  # while the HAL signals

    event = SimEvent(0, on_complete) if event_class == "sim" else HardwareEvent(on_complete)
    event._complete(None)
    assert seen == [(False, False)]
    assert event.query() and event.synchronize(0)


def test_dropped_devices_are_collected_with_their_threads():
    """A device that signalled semaphores goes when dropped (issue 21: the scheduler's
    history held submissions, their semaphores held the device, and the device's
    finalizer held the scheduler: 25 dropped devices kept 25 queue threads)."""
    import gc

    import numpy as np

    import hal

    gc.collect()  # devices earlier tests dropped go now, not during the count
    before = threading.active_count()
    for _ in range(20):
        device = hal.create_device("tenstorrent")
        semaphore = device.create_semaphore(0)
        buffer = device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, 64)
        device.queue_update(np.zeros(16, np.int32), buffer, [], [(semaphore, 1)])
        assert semaphore.wait(1)
        assert device.submission_graph().nodes  # the history still shows the work
        del device, semaphore, buffer
    gc.collect()
    deadline = time.monotonic() + 10
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.05)  # queue threads end once their device is finalized
    assert threading.active_count() <= before, [t.name for t in threading.enumerate()]


def _row_major_copy(device):
    """(executable, push constants) of a program that copies a 4 x 32 float32 tensor."""
    import numpy as np

    from tt_hal.kernels import rowmajor
    from tt_hal.target.layout import DataFormat
    from tt_hal.target.ttx import EXECUTABLE_FORMAT, write_executable

    executable = device.create_executable_cache().prepare_executable(
        EXECUTABLE_FORMAT, write_executable([rowmajor.copy(DataFormat.float32)]))
    return executable, np.array(rowmajor.push_constants(4, 32), np.uint32)


def test_a_dispatch_with_another_devices_buffer_is_refused():
    """Issue 21: a binding of device A in device B's dispatch made B's kernels read and
    write B's memory at A's address. Kernels address memory by address, so dispatch
    bindings (direct, through a binding table, an executable's tensors) must be the
    executing device's; transfers still cross devices (they move bytes by buffer)."""
    import hal

    a, b = hal.create_device("tenstorrent"), hal.create_device("tenstorrent")
    usage, memory = hal.BufferUsage.DEFAULT, hal.MemoryType.DEVICE_LOCAL
    theirs = a.allocator.allocate_buffer(memory, usage, 4096)
    ours = b.allocator.allocate_buffer(memory, usage, 4096)
    executable, pushed = _row_major_copy(b)
    direct = hal.HalCommandBuffer(b)
    direct.dispatch(executable, 0, (1, 1, 1), pushed, [(theirs, 0, 512), (ours, 0, 512)])
    direct.end()
    table = hal.HalCommandBuffer(b, binding_capacity=2)
    table.dispatch(executable, 0, (1, 1, 1), pushed, [hal.BindingRef(0), hal.BindingRef(1)])
    table.end()
    for call in (lambda: b.queue_execute(direct, [], []),
                 lambda: b.queue_execute(table, [], [], binding_table=[(ours, 0, 512), (theirs, 0, 512)])):
        with pytest.raises(HalError) as info:
            call()
        assert info.value.code == StatusCode.INVALID_ARGUMENT and "of another device than" in info.value.message
    semaphore = b.create_semaphore(0)
    b.queue_copy(theirs, ours, [], [(semaphore, 1)])  # a transfer may cross devices
    b.queue_execute(table, [], [(semaphore, 2)], binding_table=[(ours, 0, 512), (ours, 2048, 512)])
    assert semaphore.wait(2)
    a.close()
    b.close()


def test_a_buffer_released_under_issued_work_lives_until_the_work_is_done():
    """Issue 21: release() freed at once, under a copy already issued: a use-after-free.
    Now the copy still reads its bytes, the memory goes when it completes, and work
    issued after the release is refused."""
    import numpy as np

    import hal

    device = hal.create_device("tenstorrent")
    allocator = device.allocator
    usage, memory = hal.BufferUsage.DEFAULT | hal.BufferUsage.MAPPING, hal.MemoryType.DEVICE_LOCAL
    source = allocator.allocate_buffer_copy(memory, usage, device, np.arange(16, dtype=np.int32))
    target = allocator.allocate_buffer(memory | hal.MemoryType.HOST_VISIBLE, usage, 64)
    gate = threading.Event()
    device._scheduler.submit(Submission("blocker", device._transfer_cq, [], [], [HostFunction(gate.wait)], []))
    done = device.create_semaphore(0)
    device.queue_copy(source, target, [], [(done, 1)])  # issued behind the blocker
    live = allocator.statistics["device_bytes_allocated"] - allocator.statistics["device_bytes_freed"]
    source.release()
    with pytest.raises(HalError) as info:
        source.check_alive()  # released for its owner at once
    assert info.value.code == StatusCode.FAILED_PRECONDITION
    assert allocator.statistics["device_bytes_allocated"] - allocator.statistics["device_bytes_freed"] == live
    with pytest.raises(HalError):  # new work may not use it
        device.queue_copy(source, target, [], [])
    gate.set()
    assert done.wait(1)
    assert np.frombuffer(target.map_read(0, 64), np.int32).tolist() == list(range(16))
    stats = allocator.statistics
    assert stats["device_bytes_allocated"] - stats["device_bytes_freed"] == live - 64  # freed on completion
    device.close()


def test_close_while_the_scheduler_issues_kills_no_thread(monkeypatch):
    """Issue 21: close() emptied the pending list while the scheduler was issuing from
    its copy of it, and the scheduler thread died on list.remove (about 2 in 3 trials)."""
    import hal

    deaths = []
    monkeypatch.setattr(threading, "excepthook", lambda args: deaths.append(args.exc_value))
    for _ in range(60):
        device = hal.create_device("tenstorrent")
        gate = device.create_semaphore(0)
        semaphores = [device.create_semaphore(0) for _ in range(40)]
        for semaphore in semaphores:
            device._scheduler.submit(Submission("work", 0, [(gate, 1)], [(semaphore, 1)],
                                                [HostFunction(lambda: None)], []))
        opener = threading.Thread(target=gate.signal, args=(1,))
        opener.start()
        device.close()
        opener.join()
        for semaphore in semaphores:  # each ran, was cancelled or met the closed queue: none is left waiting
            try:
                assert semaphore.wait(1, timeout=10**10)
            except HalError as error:
                assert error.code in (StatusCode.CANCELLED, StatusCode.FAILED_PRECONDITION), error
    assert deaths == []


def test_a_dispatch_of_host_memory_is_refused():
    """Issue 21: a HOST_LOCAL buffer bound to a dispatch made its kernels read and write
    worker L1 at address 0 (a silent wrong result)."""
    import hal

    device = hal.create_device("tenstorrent")
    host = device.allocator.allocate_buffer(hal.MemoryType.HOST_LOCAL, hal.BufferUsage.DEFAULT, 4096)
    ours = device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, 4096)
    executable, pushed = _row_major_copy(device)
    cb = hal.HalCommandBuffer(device)
    with pytest.raises(HalError) as info:
        cb.dispatch(executable, 0, (1, 1, 1), pushed, [(host, 0, 512), (ours, 0, 512)])
    assert info.value.code == StatusCode.INVALID_ARGUMENT and "host memory" in info.value.message
    table = hal.HalCommandBuffer(device, binding_capacity=2)
    table.dispatch(executable, 0, (1, 1, 1), pushed, [hal.BindingRef(0), hal.BindingRef(1)])
    table.end()
    with pytest.raises(HalError) as info:
        device.queue_execute(table, [], [], binding_table=[(host, 0, 512), (ours, 0, 512)])
    assert info.value.code == StatusCode.INVALID_ARGUMENT and "host memory" in info.value.message
    device.close()


class Refused:
    """A queue command the backend refuses when it is enqueued (as the hardware backend
    refuses sharded bindings)."""

    def enqueue(self, backend, cq):
        raise HalError(StatusCode.UNIMPLEMENTED, "refused when enqueued")


def test_a_command_refused_when_enqueued_fails_its_submission_alone(chip):
    """The submission's commands before the refused one go to the queue with it
    (enqueue_submission: one queue item); the submission raises and fails its signal, the
    failure stretch ends there, and the next submission on the queue runs and signals."""
    backend, scheduler = chip
    ran, failed, fine = [], HalSemaphore(0), HalSemaphore(0)
    doomed = submission("doomed", 0, [], [(failed, 1)], lambda: ran.append("before"))
    doomed.commands.append(Refused())
    with pytest.raises(HalError) as error:
        scheduler.submit(doomed)
    assert error.value.code == StatusCode.UNIMPLEMENTED
    with pytest.raises(HalError):
        failed.wait(1, timeout=5 * SECOND)
    scheduler.submit(submission("next", 0, [], [(fine, 1)], lambda: ran.append("next")))
    assert fine.wait(1, timeout=5 * SECOND) and ran == ["before", "next"]


def test_execute_now_runs_inline_on_an_idle_queue_and_behind_work_on_a_busy_one(monkeypatch):
    """On an idle queue execute_now runs small work at once on the calling thread, with no
    semaphore; a queue holding work runs it behind that work, which execute_now then waits
    for, up to its timeout (DEADLINE_EXCEEDED); a dispatch's fault raises its error."""
    import numpy as np

    import hal
    from tt_hal import ops

    device = hal.create_device("tenstorrent")
    x = (np.arange(1024) % 64).astype(np.float32).reshape(32, 32)  # sums exact in bfloat16
    a = device.to_device(x, "bfloat16", "tile", hal.DRAM_MEMORY_CONFIG)
    for _ in range(2):  # compiles the simulator, then learns that the program is small enough to run inline
        ops.add(a, a)
    with monkeypatch.context() as patch:
        patch.setattr(device, "create_semaphore", None)  # the inline path makes no semaphore
        assert np.array_equal(ops.add(a, a).to_host(), 2 * x)
        patch.setattr(device.backend, "instruction_budget", 10)
        with pytest.raises(HalError) as info:
            ops.add(a, a)
        assert info.value.code == StatusCode.DEADLINE_EXCEEDED and "instruction budget exhausted" in info.value.message
    assert np.array_equal(ops.add(a, a).to_host(), 2 * x)  # the queue goes on
    buffer = device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL | hal.MemoryType.HOST_VISIBLE,
                                              hal.BufferUsage.DEFAULT | hal.BufferUsage.MAPPING, 64)
    fill = hal.HalCommandBuffer(device)
    fill.fill(buffer, b"\x05")
    fill.end()
    gate = threading.Event()
    device.backend.enqueue_host_function(device._transfer_cq, gate.wait, 10)
    with pytest.raises(HalError) as info:
        device.execute_now(fill, timeout=50_000_000)
    assert info.value.code == StatusCode.DEADLINE_EXCEEDED and "within 0.05 s" in info.value.message
    finished = []
    waiter = threading.Thread(target=lambda: finished.append(device.execute_now(fill, timeout=10 * SECOND)))
    waiter.start()
    time.sleep(0.05)
    assert not finished  # behind the gate
    gate.set()
    waiter.join(10)
    assert finished == [None] and np.frombuffer(buffer.map_read(0, 64), np.uint8).tolist() == [5] * 64
    device.close()


def test_a_submission_of_waits_alone_completes_on_the_queue_it_waits_for(chip):
    """A submission without commands whose waits are all on one other queue (a .vmfb's
    queue_dealloca after its queue_execute) is recorded on that queue, after what it
    waits for: it completes on that queue's thread, without a hand-over to its own, and
    a failure of the work it waits for fails it as before."""
    backend, scheduler = chip
    threads, gate = [], threading.Event()
    s, done = HalSemaphore(0), HalSemaphore(0)

    def fail():
        raise HalError(StatusCode.ABORTED, "the compute work failed")

    for works, value in (((lambda: gate.wait(5),), 1), ((fail,), 2)):
        scheduler.submit(submission("compute", 0, [], [(s, value)], *works))
        dealloca = Submission("dealloca", 1, [(s, value)], [(done, value)], [], [],
                              on_done=lambda error: threads.append((threading.current_thread().name, error)))
        scheduler.submit(dealloca)  # issued at once: a device-side wait on the compute queue's event
        gate.set()
        if value == 1:
            assert done.wait(1, timeout=5 * SECOND)
    with pytest.raises(HalError):
        done.wait(2, timeout=5 * SECOND)
    assert [name.rsplit("-", 1)[-1] for name, _ in threads] == ["cq0", "cq0"]
    assert threads[0][1] is None and threads[1][1].code == StatusCode.ABORTED


def test_transfers_up_to_a_mebibyte_run_on_the_enqueuing_thread_of_an_idle_queue(monkeypatch):
    """A fill (or copy, read, write) of up to INLINE_BYTES runs at once on the enqueuing
    thread when its queue is idle: a mebibyte takes less than a hand-over to the queue's
    thread and back, and a .vmfb's submission holding one (jax_mobilenetv2 fills 81 KiB
    a call) runs all its dispatches inline only when each command may. A larger one
    runs on the queue's thread. Both fill what they should."""
    import numpy as np

    from tt_hal.sim import device as sim_device
    from tt_hal.target.placement import BufferType

    backend = SimDevice("wormhole_b0")
    try:
        threads = []
        fill = sim_device._fill
        monkeypatch.setattr(sim_device, "_fill",
                            lambda *args: threads.append(threading.current_thread()) or fill(*args))
        buffer = backend.create_buffer(2 * sim_device.INLINE_BYTES, 2048, BufferType.DRAM)
        for length, value in ((82944, 7), (sim_device.INLINE_BYTES + 4, 9)):
            backend.enqueue_fill_buffer(1, buffer, 0, length, bytes([value]))
            backend.finish(1)
            assert (backend.read_buffer(buffer, 0, length) == value).all()
        assert threads[0] is threading.current_thread() and threads[1] is not threading.current_thread()
        assert np.all(backend.read_buffer(buffer, sim_device.INLINE_BYTES + 4, 16) == 0)  # the fill stopped there
    finally:
        backend.close()
