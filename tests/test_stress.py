"""Stress (issue 21): threads x submissions in semaphore chains that alternate the
transfer and compute queues and wait on each other across threads, with a host
numpy shadow of every buffer checked byte for byte as its work is known complete;
faults injected amid the good work (failed semaphores, kernels that fault on the
device) fail exactly their chain with a readable HalError; Ctrl-C delivered to the
main thread during HAL calls; every wait bounded (a timeout is a deadlock); device
threads and memory back to baseline after close; dropped devices leave no threads.

CI runs a bounded size. The acceptance size (16 threads x 100k submissions, 100
dropped devices) is the long mode:

    TT_HAL_STRESS_SCALE=long python -m pytest tests/test_stress.py -s

TT_HAL_STRESS_THREADS, TT_HAL_STRESS_SUBMISSIONS (total over the threads) and
TT_HAL_STRESS_DEVICES set each size on its own; -s prints each run's figures.
"""

from __future__ import annotations

import _thread
import dataclasses
import gc
import os
import random
import signal
import threading
import time
import weakref

import numpy as np
import pytest

import hal
from hal.status import HalError, StatusCode
from tt_hal.target.isa import Op
from tt_hal.target.kernel_builder import KernelBuilder
from tt_hal.target.layout import DataFormat
from tt_hal.target.program import ArgKind, CircularBufferConfig, Export, Processor, Program, RuntimeArg, Stage
from tt_hal.target.ttx import EXECUTABLE_FORMAT, write_executable

LONG = os.environ.get("TT_HAL_STRESS_SCALE", "ci") == "long"
THREADS = int(os.environ.get("TT_HAL_STRESS_THREADS", 16 if LONG else 8))
SUBMISSIONS = int(os.environ.get("TT_HAL_STRESS_SUBMISSIONS", 100_000 if LONG else 24_000))
DROPPED_DEVICES = int(os.environ.get("TT_HAL_STRESS_DEVICES", 100 if LONG else 20))

SECOND = 10**9
WAIT_NS = 120 * SECOND  # any wait longer than this is a deadlock
SIZE = 256  # bytes per buffer: one page, so the copy kernel moves it whole
CHAINS_PER_THREAD = 3
CHECK_EVERY = 24  # submissions on a chain between host waits and byte checks
RETIRE_AFTER = 200  # submissions before a chain's buffers are released and a new chain starts
FAULT_RATE = 0.002  # per submission, each kind
LAG = 40  # a cross-thread wait asks another thread for this many fewer steps than its own


# ---------------------------------------------------------------------------
# Programs: a byte copy on the compute queue, and one that faults on the device.
# ---------------------------------------------------------------------------

def _copy_program(read_page: int) -> Program:
    """One data-movement kernel: page `read_page` of binding 0 -> page 0 of binding 1
    (pages of SIZE bytes) through a circular buffer. Any page but 0 is outside the
    binding: the NoC faults (ABORTED)."""
    k = KernelBuilder("copy" if read_page == 0 else "faulting_copy")
    src, src_dram, dst, dst_dram = (k.arg(i) for i in range(4))
    size, zero, page, ptr = k.const(SIZE), k.const(0), k.const(read_page), k.reg("ptr")
    k.addrgen(0, src, size, src_dram)
    k.addrgen(1, dst, size, dst_dram)
    k.cb_reserve_back(0, 1)
    k.emit(Op.GET_WRITE_PTR, ptr, 0)
    k.emit(Op.NOC_READ_PAGE, 0, page, ptr)
    k.emit(Op.NOC_READ_BARRIER)
    k.emit(Op.NOC_WRITE_PAGE, 1, zero, ptr)
    k.emit(Op.NOC_WRITE_BARRIER)
    args = tuple(RuntimeArg(kind, b) for b in (0, 1) for kind in (ArgKind.BINDING_ADDRESS, ArgKind.BINDING_IS_DRAM))
    return Program((CircularBufferConfig(0, DataFormat.uint32, SIZE, 1),), (k.build(Processor.RISCV_0),), (args,))


def prepare_programs(device) -> hal.HalExecutable:
    """Export 0 copies binding 0 to binding 1; export 1 faults reading outside binding 0."""
    exports = [Export(name, 0, 2, (1, 1, 1), (Stage(_copy_program(page)),))
               for name, page in (("copy", 0), ("faulting_copy", 1 << 20))]
    return device.create_executable_cache().prepare_executable(EXECUTABLE_FORMAT, write_executable(exports))


def dispatch_buffer(device, executable, ordinal: int, source, target) -> hal.HalCommandBuffer:
    cb = hal.HalCommandBuffer(device)
    cb.dispatch(executable, ordinal, (1, 1, 1), b"", [source, target])
    cb.end()
    return cb


# ---------------------------------------------------------------------------
# The chains and their shadows.
# ---------------------------------------------------------------------------

@dataclasses.dataclass
class Figures:
    submissions: int = 0
    compute: int = 0  # of which on the compute queue (dispatches)
    cross_thread: int = 0  # of which also waited on another thread's progress
    checks: int = 0  # byte-exact comparisons of a buffer with its shadow
    checked_bytes: int = 0
    chains: int = 0
    semaphore_faults: int = 0
    device_faults: int = 0

    def add(self, other: "Figures") -> None:
        for field in dataclasses.fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))


class Chain:
    """A timeline semaphore, two buffers and their shadows. Each submission waits on the
    chain's last value and signals the next; `log` holds the shadow updates of
    submissions not yet known complete."""

    def __init__(self, device, name: str, rng: np.random.Generator):
        self.name = name
        self.sem = device.create_semaphore(0)
        self.value = 0
        allocator = device.allocator
        self.buffers = [allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, SIZE)
                        for _ in range(2)]
        self.shadows = [rng.integers(0, 256, SIZE, np.uint8) for _ in range(2)]
        self.log: list[tuple[int, object]] = []
        self.fault: tuple[StatusCode, str] | None = None  # the failure this chain must end in, once injected
        self.submitted = 0

    def next(self, extra_waits=()) -> tuple[list, list]:
        waits = [(self.sem, self.value), *extra_waits]
        self.value += 1
        self.submitted += 1
        return waits, [(self.sem, self.value)]

    def record(self, update) -> None:
        self.log.append((self.value, update))


class Worker:
    """One thread's chains over one device; a thread's failures are collected, not raised,
    so the main thread reports every one of them."""

    def __init__(self, device, executable, index: int, submissions: int, progress: list, failures: list):
        self.device, self.executable, self.index = device, executable, index
        self.submissions, self.progress, self.failures = submissions, progress, failures
        self.rng = np.random.default_rng(1000 + index)
        self.random = random.Random(index)
        self.figures = Figures()
        self.step = 0
        self.chains = [self._new_chain() for _ in range(CHAINS_PER_THREAD)]

    def _new_chain(self) -> Chain:
        chain = Chain(self.device, f"thread {self.index} chain {self.figures.chains}", self.rng)
        self.figures.chains += 1
        for b in range(2):  # the buffers' first contents come from the host
            waits, signals = chain.next()
            self.device.queue_update(chain.shadows[b], chain.buffers[b], waits, signals)
        self.figures.submissions += 2
        return chain

    def run(self) -> None:
        try:
            while self.figures.submissions < self.submissions:
                self.step += 1
                chain = self.random.choice(self.chains)
                self._submit_one(chain)
                if chain.fault is not None or chain.submitted >= RETIRE_AFTER:
                    self._retire(chain)
                elif chain.submitted % CHECK_EVERY == 0:
                    self._check(chain)
            for chain in self.chains:
                self._retire(chain, replace=False)
        except Exception as error:  # noqa: BLE001 - reported by the main thread with the thread's index
            self.failures.append(f"thread {self.index}: {type(error).__name__}: {error}")
        finally:
            self._advance(1 << 30)  # nobody waits on this thread any more

    # Submitting.
    def _submit_one(self, chain: Chain) -> None:
        device, rng, roll = self.device, self.rng, self.random.random()
        extra = []
        if self.random.random() < 0.05 and len(self.progress) > 1:
            other = (self.index + 1 + self.random.randrange(len(self.progress) - 1)) % len(self.progress)
            extra = [(self.progress[other], max(1, self.step - LAG))]
            self.figures.cross_thread += 1
        if roll < FAULT_RATE and chain.submitted > 4:  # a failed semaphore amid the chain's work
            chain.fault = (StatusCode.ABORTED, f"injected into {chain.name}")
            chain.sem.fail(HalError(StatusCode.ABORTED, f"injected into {chain.name}"))
            self.figures.semaphore_faults += 1
            return
        if roll < 2 * FAULT_RATE and chain.submitted > 4:  # a kernel that faults on the device
            chain.fault = (StatusCode.ABORTED, "NoC access outside any bound buffer")
            waits, signals = chain.next(extra)
            device.queue_execute(dispatch_buffer(device, self.executable, 1, *chain.buffers), waits, signals)
            self.figures.device_faults += 1
            self.figures.submissions += 1
            self.figures.compute += 1
            return
        a, b = (0, 1) if self.random.random() < 0.5 else (1, 0)
        source, target = chain.buffers[a], chain.buffers[b]
        waits, signals = chain.next(extra)
        self.figures.submissions += 1
        if roll < 0.40:  # compute queue: the copy kernel moves source to target
            device.queue_execute(dispatch_buffer(device, self.executable, 0, source, target), waits, signals)
            chain.record(lambda s: s[b].__setitem__(slice(None), s[a]))
            self.figures.compute += 1
        elif roll < 0.58:
            offset, length = self._range()
            data = rng.integers(0, 256, length, np.uint8)
            device.queue_update(data, target, waits, signals, offset, length)
            chain.record(lambda s: s[b].__setitem__(slice(offset, offset + length), data))
        elif roll < 0.70:
            width = self.random.choice((1, 2, 4))
            offset, length = self._range()
            pattern = np.array(rng.integers(0, 1 << (8 * width)), f"uint{8 * width}")
            device.queue_fill(target, pattern, waits, signals, offset, length)
            filled = np.frombuffer(np.full(length // width, pattern).tobytes(), np.uint8)
            chain.record(lambda s: s[b].__setitem__(slice(offset, offset + length), filled))
        elif roll < 0.82:
            (source_offset, length), target_offset = self._range(), self._range()[0]
            length = min(length, SIZE - target_offset)
            device.queue_copy(source, target, waits, signals, source_offset, target_offset, length)
            chain.record(lambda s: s[b].__setitem__(slice(target_offset, target_offset + length),
                                                    s[a][source_offset:source_offset + length]))
        elif roll < 0.94:  # a transfer command buffer: fill, update, copy in order
            cb = hal.HalCommandBuffer(self.device)
            offset, length = self._range()
            data = rng.integers(0, 256, length, np.uint8)
            cb.fill(source, np.uint32(0xA5A5A5A5), 0, SIZE)
            cb.update(data, source, offset, length)
            cb.copy(source, target, 0, 0, SIZE, end=True)
            device.queue_execute(cb, waits, signals)

            def transfer(s):
                s[a][:] = 0xA5
                s[a][offset:offset + length] = data
                s[b][:] = s[a]
            chain.record(transfer)
        else:
            device.queue_barrier(waits, signals)

    def _range(self) -> tuple[int, int]:
        """A 4-byte aligned (offset, length) inside a buffer."""
        offset = 4 * self.random.randrange(SIZE // 4)
        return offset, 4 * self.random.randint(1, (SIZE - offset) // 4)

    # Waiting and checking.
    def _advance(self, step: int) -> None:
        """Signals this thread's progress before it blocks: a thread waits only on threads
        it is ahead of, so the thread furthest behind is never blocked by another."""
        progress = self.progress[self.index]
        if progress.query() < step:
            progress.signal(step)

    def _wait(self, chain: Chain) -> bool:
        """True when the chain reached its last value; False when it failed as injected.
        Anything else (a timeout, an unexpected failure) is a failure of the run."""
        self._advance(self.step)
        try:
            reached = chain.sem.wait(chain.value, timeout=WAIT_NS)
        except HalError as error:
            if chain.fault is None:
                raise AssertionError(f"{chain.name} failed spuriously: {error}") from None
            code, words = chain.fault
            if error.code != code or words not in str(error):
                raise AssertionError(f"{chain.name} failed with {error!r}; expected {code.name}: {words}") from None
            return False
        if not reached:
            raise AssertionError(f"deadlock: {chain.name} did not reach {chain.value} within {WAIT_NS // SECOND} s "
                                 f"(at {chain.sem.query()})")
        if chain.fault is not None:
            raise AssertionError(f"{chain.name} completed although a fault was injected: {chain.fault}")
        return True

    def _check(self, chain: Chain) -> None:
        if not self._wait(chain):
            return
        for _, update in chain.log:
            update(chain.shadows)
        chain.log.clear()
        for b, buffer in enumerate(chain.buffers):
            actual = np.frombuffer(bytes(buffer.map_read(0, SIZE)), np.uint8)
            if not np.array_equal(actual, chain.shadows[b]):
                wrong = np.flatnonzero(actual != chain.shadows[b])
                raise AssertionError(f"{chain.name} buffer {b}: {wrong.size} bytes differ from the shadow, "
                                     f"first at {wrong[0]}: {actual[wrong[0]]} != {chain.shadows[b][wrong[0]]}")
            self.figures.checks += 1
            self.figures.checked_bytes += SIZE

    def _retire(self, chain: Chain, replace: bool = True) -> None:
        self._check(chain)
        for buffer in chain.buffers:
            buffer.release()
        if replace:
            self.chains[self.chains.index(chain)] = self._new_chain()


def run_workers(device, executable, threads: int, submissions: int, main_thread_work=None) -> Figures:
    """Runs `threads` workers to `submissions` in total; `main_thread_work(alive)` runs on
    the main thread meanwhile (the interrupt test's HAL calls)."""
    failures: list[str] = []
    progress = [device.create_semaphore(0) for _ in range(threads)]
    workers = [Worker(device, executable, i, submissions // threads, progress, failures) for i in range(threads)]
    pool = [threading.Thread(target=w.run, name=f"stress-{w.index}") for w in workers]
    for thread in pool:
        thread.start()
    if main_thread_work is not None:
        main_thread_work(lambda: any(t.is_alive() for t in pool))
    deadline = time.monotonic() + max(600, submissions / 20)
    for thread in pool:
        thread.join(timeout=max(1.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in pool), f"deadlock: submitting threads still running; failures: {failures}"
    assert not failures, "\n".join(failures[:20])
    figures = Figures()
    for worker in workers:
        figures.add(worker.figures)
    return figures


def settle_threads(baseline: set, timeout: float = 30.0) -> list[threading.Thread]:
    """The threads not in `baseline` still alive after `timeout` seconds (after collections)."""
    end = time.monotonic() + timeout
    while True:
        gc.collect()
        extra = [t for t in threading.enumerate() if t not in baseline and t.is_alive()]
        if not extra or time.monotonic() > end:
            return extra
        time.sleep(0.05)


def report(name: str, figures: Figures, seconds: float) -> None:
    print(f"\n{name}: {figures.submissions} submissions ({figures.compute} on the compute queue, "
          f"{figures.cross_thread} waiting across threads) in {figures.chains} chains, {seconds:.1f} s "
          f"({figures.submissions / seconds:.0f}/s); {figures.checks} byte-exact checks of "
          f"{figures.checked_bytes} bytes; faults injected: {figures.semaphore_faults} failed semaphores, "
          f"{figures.device_faults} device faults; 0 spurious failures, 0 deadlocks")


# ---------------------------------------------------------------------------
# The tests.
# ---------------------------------------------------------------------------

def test_threads_and_queues_with_shadows_and_faults():
    baseline = set(threading.enumerate())
    device = hal.create_device("tenstorrent")
    executable = prepare_programs(device)
    start = time.perf_counter()
    figures = run_workers(device, executable, THREADS, SUBMISSIONS)
    report(f"stress {THREADS} threads", figures, time.perf_counter() - start)
    assert figures.submissions >= SUBMISSIONS - THREADS
    assert figures.compute > figures.submissions // 4
    assert figures.semaphore_faults and figures.device_faults  # the run exercised both fault kinds
    assert figures.checks >= figures.chains * 2

    del executable
    gc.collect()
    assert device.memory_map() == [], "device memory not back to baseline"
    stats = device.allocator.statistics
    assert stats["device_bytes_allocated"] == stats["device_bytes_freed"] > 0, device.allocator.formatted_statistics
    memory = device.backend.memory  # the simulated chip's banks: nothing left allocated in DRAM or L1
    assert memory.dram_allocator.allocated_bytes == memory.l1_allocator.allocated_bytes == 0
    device.close()
    del device, memory
    assert settle_threads(baseline) == [], "device threads left after close"


def test_interrupts_on_the_main_thread_amid_stress():
    """KeyboardInterrupt every 1-10 ms on the main thread while it makes HAL calls and the
    workers run their checked chains: the interrupts cut the main thread's calls short
    and nothing else; the device then runs a checked run to completion."""
    device = hal.create_device("tenstorrent")
    executable = prepare_programs(device)
    buffer = device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, SIZE)
    other = device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, SIZE)
    counts = {"interrupts": 0, "calls": 0}
    stop = threading.Event()

    def storm(alive):
        # Ends with the workers too: an interrupt can land anywhere in the main thread, even
        # before it sets `stop` (a loaded CI machine once left the storm running for good).
        pause = random.Random(7)
        while not stop.wait(pause.uniform(0.001, 0.01)) and alive():
            _thread.interrupt_main()

    def hal_calls(alive):
        storm_thread = threading.Thread(target=storm, args=(alive,), name="interrupt-storm")
        try:
            storm_thread.start()
            while alive():
                try:
                    sem = device.create_semaphore(0)
                    device.queue_update(np.full(SIZE, counts["calls"] % 256, np.uint8), buffer, [], [(sem, 1)])
                    device.queue_execute(dispatch_buffer(device, executable, 0, buffer, other), [(sem, 1)], [(sem, 2)])
                    device.queue_copy(other, buffer, [(sem, 2)], [(sem, 3)], 0, 0, SIZE)
                    sem.wait(3, timeout=WAIT_NS)
                    bytes(buffer.map_read(0, SIZE))
                    counts["calls"] += 1
                except KeyboardInterrupt:
                    counts["interrupts"] += 1
        except KeyboardInterrupt:  # one that landed outside the calls (after start, between two rounds)
            counts["interrupts"] += 1
        finally:
            stop.set()
            while storm_thread.is_alive():
                try:
                    storm_thread.join(timeout=1)
                except KeyboardInterrupt:
                    counts["interrupts"] += 1
            try:
                time.sleep(0.05)  # an interrupt already requested arrives here
            except KeyboardInterrupt:
                counts["interrupts"] += 1

    threads = max(2, THREADS // 2)
    # interrupt_main() does nothing while SIGINT is ignored, as it is in a job a shell starts in
    # the background (a nohup'd long run counted 0 interrupts).
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        run_workers(device, executable, threads, SUBMISSIONS // 4, hal_calls)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert counts["interrupts"] > 10, counts
    # The device keeps working: a checked run after the storm, and the main thread's own calls.
    run_workers(device, executable, 2, 400)
    sem = device.create_semaphore(0)
    device.queue_update(np.arange(SIZE, dtype=np.uint8), buffer, [], [(sem, 1)])
    device.queue_execute(dispatch_buffer(device, executable, 0, buffer, other), [(sem, 1)], [(sem, 2)])
    assert sem.wait(2, timeout=WAIT_NS)
    assert bytes(other.map_read(0, SIZE)) == bytes(range(SIZE))
    print(f"\ninterrupts: {counts['interrupts']} KeyboardInterrupts amid {counts['calls']} completed main-thread "
          f"rounds; the device kept working")
    device.close()


def test_device_collected_inside_its_scheduler_lock_shuts_down():
    """Collection may finalize a dropped device on one of its own threads while that
    thread holds the device's scheduler lock (a completion's bookkeeping allocates and
    triggers a collection): the shutdown must not wait for that lock on the same
    thread. It did, and hung the thread for good (test_dropped_devices_leave_no_threads
    failed about 1 run in 10 on a loaded machine)."""
    baseline = set(threading.enumerate())
    holder = {"device": hal.create_device("tenstorrent")}
    gone = weakref.ref(holder["device"])
    lock = holder["device"]._scheduler._cond

    def collect_inside_the_lock():
        with lock:
            holder.clear()
            gc.collect()

    thread = threading.Thread(target=collect_inside_the_lock, daemon=True)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive(), "collecting a device inside its scheduler's lock hung the collecting thread"
    assert gone() is None
    assert settle_threads(baseline) == []


def test_dropped_devices_leave_no_threads():
    """Devices created, used on both queues (including a failed submission) and dropped
    without close(): collection ends each one's threads."""
    baseline = set(threading.enumerate())
    gone = []
    for n in range(DROPPED_DEVICES):
        device = hal.create_device("tenstorrent")
        executable = prepare_programs(device)
        a, b = (device.allocator.allocate_buffer(hal.MemoryType.DEVICE_LOCAL, hal.BufferUsage.DEFAULT, SIZE)
                for _ in range(2))
        sem, failed = device.create_semaphore(0), device.create_semaphore(0)
        device.queue_update(np.full(SIZE, n, np.uint8), a, [], [(sem, 1)])
        device.queue_execute(dispatch_buffer(device, executable, 0, a, b), [(sem, 1)], [(sem, 2)])
        device.queue_execute(dispatch_buffer(device, executable, 1, a, b), [(sem, 2)], [(failed, 1)])
        try:  # refused at the call when the fault is already known
            device.queue_barrier([(failed, 1)], [(failed, 2)])
        except HalError as error:
            assert error.code == StatusCode.ABORTED, error
        assert sem.wait(2, timeout=WAIT_NS)
        with pytest.raises(HalError):
            failed.wait(2, timeout=WAIT_NS)
        assert bytes(b.map_read(0, SIZE)) == bytes([n % 256]) * SIZE
        gone.append(weakref.ref(device))
        del device, executable, a, b, sem, failed
    extra = settle_threads(baseline)
    assert extra == [], f"{len(extra)} threads left by {DROPPED_DEVICES} dropped devices: {extra[:5]}"
    alive = sum(ref() is not None for ref in gone)
    assert alive == 0, f"{alive} of {DROPPED_DEVICES} dropped devices were never collected"
    print(f"\ndropped devices: {DROPPED_DEVICES} created, used and dropped; 0 threads and 0 devices left")
