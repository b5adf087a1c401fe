"""Stress: several threads, thousands of submissions in semaphore chains that cross
threads and queues, with random failures. Nothing may deadlock, no signal may be
lost, surviving chains compute the right bytes, and memory returns to zero."""

import gc
import random
import threading

import numpy as np

import hal
from hal.queue import Submission
from hal.status import StatusCode
from tt_hal.sim.device import HostFunction

THREADS = 4
STEPS = 600
SECOND = 10**9


def test_stress_chains_with_failures():
    device = hal.create_device("tenstorrent")
    allocator = device.allocator
    usage, memory = hal.BufferUsage.DEFAULT, hal.MemoryType.DEVICE_LOCAL
    finals: list = [None] * THREADS  # per thread: [(semaphore, final value, expected bytes, buffer)]
    errors: list = []
    progress = [hal.HalSemaphore(0) for _ in range(THREADS)]  # cross-thread dependency targets

    def compute_step(counter):
        """A compute-queue (CQ0) submission: the queue order across CQ0/CQ1 is by events only."""
        def op():
            counter[0] += 1
        return op

    def worker(index: int) -> None:
        rng = random.Random(index)
        chains = []
        sem, value, expected = device.create_semaphore(0), 0, 0
        buf = allocator.allocate_buffer(memory, usage, 64)
        scratch = allocator.allocate_buffer(memory, usage, 64)
        counter = [0]
        try:
            for step in range(STEPS):
                waits = [(sem, value)]
                if step % 25 == 10 and index:  # cross-thread edge: wait on a neighbour's progress
                    waits.append((progress[index - 1], 1))
                roll = rng.random()
                if roll < 0.01:  # host-injected failure: the chain must fail, not hang
                    sem.fail(hal.HalError(StatusCode.ABORTED, f"injected at step {step}"))
                elif roll < 0.015:  # device fault: copy from a buffer freed under the queue
                    dead = allocator.allocate_buffer(memory, usage, 64)
                    cb = hal.HalCommandBuffer(device)
                    cb.copy(dead, scratch, 0, 0, 64, end=True)
                    dead.release()
                    _submit(device.queue_execute, cb, waits, [(sem, value + 1)])
                elif roll < 0.3:
                    expected = step
                    _submit(device.queue_update, np.full(16, step, np.int32), buf, waits, [(sem, value + 1)])
                elif roll < 0.5:
                    cb = hal.HalCommandBuffer(device)
                    cb.copy(buf, scratch, 0, 0, 64)
                    cb.fill(scratch, np.int32(-1), 0, 64)
                    cb.copy(scratch, buf, 0, 0, 64, end=True)
                    expected = -1
                    _submit(device.queue_execute, cb, waits, [(sem, value + 1)])
                elif roll < 0.7:
                    transient = device.queue_alloca(4096, waits, [(sem, value + 1)])
                    value += 1
                    device.queue_dealloca(transient, [(sem, value)], [(sem, value + 1)])
                elif roll < 0.85:
                    device._scheduler.submit(Submission(
                        "compute", 0, waits, [(sem, value + 1)],
                        [HostFunction(compute_step(counter))], []))
                else:
                    _submit(device.queue_barrier, waits, [(sem, value + 1)])
                value += 1
                if sem.failure is not None:  # start a fresh chain, keep the failed one for checking
                    chains.append((sem, value, None, None))
                    sem, value = device.create_semaphore(0), 0
                if step == STEPS // 2:
                    progress[index].signal(1)
            chains.append((sem, value, expected, buf))
            finals[index] = chains
        except Exception as error:  # surfaced below with the thread's index
            errors.append((index, error))
            if progress[index].query() == 0:
                progress[index].signal(1)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
        assert not thread.is_alive(), "a submitting thread hung"
    assert not errors, errors

    failed, reached = _check_chains(finals)
    assert failed > 0 and reached > 0  # the run exercised both outcomes

    finals.clear()  # let go of the chains' buffers before counting
    threads.clear()
    gc.collect()
    stats = allocator.statistics
    assert stats["device_bytes_allocated"] == stats["device_bytes_freed"], allocator.formatted_statistics
    assert stats["device_bytes_allocated"] > 0
    device.close()


def _check_chains(finals) -> tuple[int, int]:
    """Every chain ends reached (with the right bytes) or failed with an injected code."""
    failed = reached = 0
    for chains in finals:
        for sem, value, expected, buf in chains:
            try:
                assert sem.wait(value, timeout=60 * SECOND), f"lost signal: {sem} never reached {value}"
            except hal.HalError as error:
                assert error.code in (StatusCode.ABORTED, StatusCode.FAILED_PRECONDITION), error
                failed += 1
                continue
            reached += 1
            if buf is not None and expected is not None:
                assert np.frombuffer(buf.map_read(0, 64), np.int32).tolist() == [expected] * 16
    return failed, reached


def _submit(call, *args):
    """Submitting onto an already-failed wait raises (as in iree.runtime); the chain is failed
    either way, which the caller sees through its semaphore."""
    try:
        call(*args)
    except hal.HalError:
        pass
