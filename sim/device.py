"""The simulated chip behind `hal/backend.py`: memory plus hardware command queues.

Each command queue is a worker thread running its commands in order. An event
is done when its queue reaches it; a queue waiting on another queue's event stalls
(a device-side wait), it never blocks the host.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import threading
from typing import Callable

import numpy as np

from hal.backend import NUMERICS, BackendDevice, Binding, Capability, LaunchProgram, interrupts_deferred
from hal.log import get_logger
from hal.status import HalError, StatusCode, as_error
from tt_hal.sim.dispatch import (
    DEFAULT_DISPATCH_TIMEOUT,
    DEFAULT_INSTRUCTION_BUDGET,
    INLINE_SECONDS,
    BindingTables,
    PreparedPrograms,
    Watchdog,
    compile_ahead,
    run_programs,
)
from tt_hal.sim.memory import ChipMemory, SimBuffer, system_memory_buffer
from tt_hal.sim.numerics import FpuModel
from tt_hal.target import conversions
from tt_hal.target.arch import DEFAULT_ARCH, ArchSpec, get_arch
from tt_hal.target.placement import BufferType, ShardedPages
from tt_hal.target.sizes import ceil_div

log = get_logger(__name__)

# Transfers up to this size run on the enqueuing thread when their queue is idle: a fill or
# copy of 1 MiB takes 70-80 us, less than the hand-over to the queue's thread and back
# costs, and far less than INLINE_SECONDS (a .vmfb's submission holding one such fill
# otherwise runs all its dispatches on the queue's thread).
INLINE_BYTES = 1 << 20
DISPATCH_TIMEOUT_VARIABLE = "TT_HAL_DISPATCH_TIMEOUT"  # seconds; SimDevice.dispatch_timeout's default


class SimEvent:
    """A point on one command queue (tt-metal's Event). A held lock, released when the
    queue reaches the event, is the cheapest one-shot signal Python offers."""

    __slots__ = ("cq", "error", "_done", "_gate", "_on_complete")

    def __init__(self, cq: int, on_complete: Callable[[HalError | None], None] | None):
        self.cq = cq
        self.error: HalError | None = None
        self._done = False
        self._gate = threading.Lock()
        self._gate.acquire()
        self._on_complete = on_complete

    def query(self) -> bool:
        return self._done

    def synchronize(self, timeout_s: float | None = None) -> bool:
        if self._done:
            return True
        if not self._gate.acquire(timeout=-1 if timeout_s is None else timeout_s):
            return False
        self._gate.release()
        return True

    def _complete(self, error: HalError | None) -> None:
        """The callback (the HAL signals the submission's semaphores) runs before the
        event lets its waiters go: work on another queue that waits for this event must
        not complete, and signal the next value, before this one is signalled."""
        self.error = error
        if self._on_complete is not None:
            try:
                self._on_complete(error)
            except Exception:  # a callback bug must not kill the queue
                log.exception("event completion callback failed")
        self._done = True
        self._gate.release()


class CommandQueue:
    """One hardware command queue: commands run in order, on the queue's thread or,
    when the queue is idle and the command small, at once on the enqueuing thread.
    An item of the queue is a list of commands (function, args, trace, inline): one,
    or a submission's batch, which takes one hand-over between threads, not one each.

    A failing command poisons the queue until the next recorded event, which then
    completes with the failure; later commands of that stretch are skipped.
    """

    def __init__(self, device_name: str, index: int):
        self.index = index
        self._commands: collections.deque = collections.deque()
        self._ready = threading.Condition(threading.Lock())
        self._busy = False  # a command is running (on the thread or inline)
        self._finishing = 0  # threads waiting in finish()
        self._error: HalError | None = None
        self._closed = False
        self.profiler = None  # a hal.profiling.TraceRecorder while the device profiles
        self._collecting = threading.local()  # .items: the batch this thread is collecting, or None
        self._thread = threading.Thread(target=self._run, name=f"{device_name}-cq{index}", daemon=True)
        self._thread.start()

    def enqueue(self, function: Callable, *args, inline: bool = False, trace: tuple[str, dict] | None = None) -> None:
        """Queues a command. With `inline`, an idle queue runs it now on this thread:
        in order all the same, without two thread switches per small command. `trace`
        (name, args) names the command in profiling traces. Inside `batch()` the command
        joins the batch instead."""
        command = (function, args, trace, inline)
        batch = getattr(self._collecting, "items", None)
        if batch is not None:
            batch.append(command)
            return
        self._put([command], inline)

    def batch(self, inline_only: bool = False) -> _Batch:
        """`with queue.batch():` the commands this thread enqueues inside the block become
        one item of the queue, run inline when each of them could be (and the queue is idle).
        With `inline_only`, an item that cannot run inline is dropped instead of queued
        (the batch's `taken` says whether it ran)."""
        return _Batch(self, inline_only)

    def _put(self, items: list, inline: bool, inline_only: bool = False) -> bool:
        """Queues `items` or runs them now (`inline`, on an idle queue); with
        `inline_only` drops them rather than queue them. Whether they were taken."""
        with interrupts_deferred():  # the busy flag set here is cleared only by _run_one
            with self._ready:
                if self._closed:
                    raise HalError(StatusCode.FAILED_PRECONDITION, f"command queue {self.index} is closed")
                if not (inline and not self._busy and not self._commands):
                    if inline_only:
                        return False
                    self._commands.append(items)
                    self._ready.notify_all()
                    return True
                self._busy = True
            self._run_one(items)
        return True

    def finish(self) -> None:
        with self._ready:
            self._finishing += 1
            self._ready.wait_for(lambda: not self._commands and not self._busy)
            self._finishing -= 1

    def close(self) -> None:
        with self._ready:
            self._closed = True
            self._ready.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=10)

    def _run(self) -> None:
        while True:
            with self._ready:
                while (self._busy or not self._commands) and not self._closed:
                    self._ready.wait()
                if not self._commands:
                    return
                items = self._commands.popleft()
                self._busy = True
            self._run_one(items)
            del items  # let go of the commands' buffers while idle

    def _run_one(self, items: list) -> None:
        recorder = self.profiler
        try:
            for function, args, trace, _ in items:
                if recorder is None or trace is None:
                    self._error = self._execute(function, args, self._error)
                else:
                    start = recorder.now()
                    self._error = self._execute(function, args, self._error)
                    name, trace_args = trace
                    if self._error is not None:
                        trace_args = {**trace_args, "error": f"{self._error.code.name}: {self._error.message}"}
                    recorder.complete(recorder.queue_track(self.index), name, start, recorder.now(), trace_args,
                                      "command")
        finally:
            with self._ready:
                self._busy = False
                if self._commands or self._finishing:
                    self._ready.notify_all()

    @staticmethod
    def _execute(function, args, error: HalError | None) -> HalError | None:
        """Runs one command; returns the queue's error state after it."""
        if function is _record:
            args[0]._complete(error)
            return None
        if function is _wait:
            event = args[0]
            event.synchronize()
            return error or event.error
        if error is None:
            try:
                function(*args)
            except Exception as exc:  # the command failed: the queue carries its error
                return as_error(exc)
        return error


class _Batch:
    """CommandQueue.batch's block: a class, as a contextlib generator would cost
    microseconds of every submission."""

    __slots__ = ("_queue", "_inline_only", "taken")

    def __init__(self, queue: CommandQueue, inline_only: bool):
        self._queue = queue
        self._inline_only = inline_only
        self.taken = False

    def __enter__(self) -> None:
        self._queue._collecting.items = []

    def __exit__(self, exc_type, *exc_info) -> None:
        collecting = self._queue._collecting
        items, collecting.items = collecting.items, None
        if items and not (self._inline_only and exc_type is not None):  # inline only: all or nothing
            self.taken = self._queue._put(items, all(command[3] for command in items), self._inline_only)


def _where(buffer: SimBuffer, offset: int) -> str:
    """A buffer position as traces show it, e.g. "DRAM 0x40000+128"."""
    return f"{buffer.buffer_type.name} {buffer.address:#x}+{offset}"


def _record(event: SimEvent) -> None:  # marker commands, interpreted by CommandQueue._run
    raise AssertionError


def _wait(event: SimEvent) -> None:
    raise AssertionError


def _fill(buffer: SimBuffer, offset: int, length: int, pattern: bytes) -> None:
    buffer.check_range(offset, length)
    chunk = 1 << 22  # bounded host memory for large fills; a multiple of every pattern length
    tile = np.frombuffer(pattern * (min(length, chunk) // len(pattern)), np.uint8)
    for start in range(0, length, chunk):
        piece = tile[: min(chunk, length - start)]
        buffer.write(offset + start, piece)


def _copy(source: SimBuffer, source_offset: int, target: SimBuffer, target_offset: int, length: int) -> None:
    target.check_range(target_offset, length)
    target.write(target_offset, source.read(source_offset, length))


class SimDevice(BackendDevice):
    """A simulated Tenstorrent chip (`hal/backend.py`'s BackendDevice)."""

    mode = "mock"
    capabilities = Capability.PROFILING | Capability.BUFFER_PLACEMENT | Capability.SHARDED_BINDINGS

    def __init__(self, arch: str | ArchSpec | None = None, num_hw_cqs: int = 2, numerics: str = "fast",
                 dispatch_timeout: float | None = None, **arch_options):
        spec = arch if isinstance(arch, ArchSpec) else get_arch(arch or DEFAULT_ARCH)
        if numerics not in NUMERICS:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"numerics={numerics!r}; expected one of {', '.join(NUMERICS)}")
        for key in ("grid_x", "grid_y"):  # a smaller grid models part of the chip; a larger one no chip
            if key in arch_options and not 1 <= arch_options[key] <= getattr(spec, key):
                raise HalError(StatusCode.INVALID_ARGUMENT, f"{key}={arch_options[key]}; {spec.name}'s worker grid "
                                                            f"is {spec.grid_x}x{spec.grid_y}")
        if arch_options:
            spec = spec.with_options(**arch_options)
        if not 1 <= num_hw_cqs <= spec.max_hw_cqs:
            raise HalError(StatusCode.INVALID_ARGUMENT,
                           f"num_hw_cqs={num_hw_cqs}; {spec.name} has 1..{spec.max_hw_cqs}")
        self.arch = spec
        self.numerics = numerics
        # The FPU as computed: the exact datapaths differ between the chips in one renormalisation.
        self.fpu_model = FpuModel.FAST if numerics == "fast" else (
            FpuModel.WORMHOLE if spec.name.startswith("wormhole") else FpuModel.BLACKHOLE)
        compile_ahead(self.fpu_model.jit_argument())  # a cold start's tile ops, on another core meanwhile
        self.num_hw_cqs = num_hw_cqs
        self.memory = ChipMemory(spec)
        self.instruction_budget = DEFAULT_INSTRUCTION_BUDGET  # per dispatch, before a kernel counts as runaway
        # Wall-clock seconds per dispatch before it fails with DEADLINE_EXCEEDED (inf: none).
        self.dispatch_timeout = _dispatch_timeout(dispatch_timeout)
        self._watchdog = Watchdog(spec.name)
        self._programs = PreparedPrograms(spec)
        self._binding_tables = BindingTables()
        self._queues: list[CommandQueue | None] = [None] * num_hw_cqs
        self._queues_lock = threading.Lock()
        self._closed = False
        self.profiler = None

    def set_profiler(self, recorder) -> None:
        """Queue commands and per-core workgroups go to `recorder` (None: stop)."""
        self.profiler = recorder
        for queue in self._queues:
            if queue is not None:
                queue.profiler = recorder

    # Buffers.
    def create_buffer(self, size: int, page_size: int, buffer_type: BufferType,
                      shard: ShardedPages | None = None) -> SimBuffer:
        if buffer_type is BufferType.SYSTEM_MEMORY:
            return system_memory_buffer(np.zeros(size, np.uint8))
        if shard is not None:
            return self.memory.create_sharded(size, page_size, buffer_type, shard)
        return self.memory.create_interleaved(size, page_size, buffer_type)

    encode_tensor = staticmethod(conversions.encode_tensor)
    decode_tensor = staticmethod(conversions.decode_tensor)

    def import_host_buffer(self, array: np.ndarray) -> SimBuffer:
        return system_memory_buffer(array)

    def host_view(self, buffer: SimBuffer) -> np.ndarray | None:
        """Host memory is one row of one page: its bytes are the array it was made of."""
        return buffer.storage[0, :buffer.size] if buffer.buffer_type is BufferType.SYSTEM_MEMORY else None

    def free_buffer(self, buffer: SimBuffer) -> None:
        self.memory.free(buffer)

    def buffer_placement(self, buffer: SimBuffer) -> dict:
        """Where a buffer's pages are: pages per DRAM bank, or per worker core for L1
        (row-major over the grid), and for a sharded buffer the core (or DRAM bank
        (x, 0)) of each shard; for memory maps and chip pictures."""
        pages = ceil_div(buffer.size, buffer.page_size)
        if buffer.shard is not None:  # each page's core or bank
            rows = buffer.page_rows
        else:
            rows = np.asarray(buffer.banks)[np.arange(pages) % len(buffer.banks)]
        count = self.arch.dram_bank_count if buffer.buffer_type is BufferType.DRAM else self.arch.worker_cores
        return {"buffer_type": buffer.buffer_type.name, "address": buffer.address, "size": buffer.size,
                "page_size": buffer.page_size, "aligned_page_size": buffer.aligned_page_size,
                "layout": "SHARDED" if buffer.shard is not None else "INTERLEAVED",
                "shard_cores": [[c.x, c.y] for c in buffer.shard.cores] if buffer.shard is not None else [],
                "pages_per_bank": np.bincount(rows, minlength=count).tolist()}

    def read_buffer(self, buffer: SimBuffer, offset: int, length: int) -> np.ndarray:
        return buffer.read(offset, length)

    def write_buffer(self, buffer: SimBuffer, offset: int, data: np.ndarray) -> None:
        buffer.write(offset, data)

    # Queue commands.
    def _queue(self, cq: int) -> CommandQueue:
        queue = self._queues[cq]
        if queue is None:  # started on first use: most devices in tests never use both
            with self._queues_lock:
                if self._closed:
                    raise HalError(StatusCode.FAILED_PRECONDITION, "device is closed")
                queue = self._queues[cq]
                if queue is None:
                    queue = self._queues[cq] = CommandQueue(self.arch.name, cq)
                    queue.profiler = self.profiler
        return queue

    # Each command's trace name and args are built only while profiling (`self.profiler and ...`).
    def enqueue_write_buffer(self, cq: int, buffer: SimBuffer, offset: int, data: np.ndarray) -> None:
        trace = self.profiler and ("write_buffer", {"bytes": data.shape[0], "target": _where(buffer, offset)})
        self._queue(cq).enqueue(buffer.write, offset, data, inline=data.shape[0] <= INLINE_BYTES, trace=trace)

    def enqueue_read_buffer(self, cq: int, buffer: SimBuffer, offset: int, out: np.ndarray) -> None:
        trace = self.profiler and ("read_buffer", {"bytes": out.shape[0], "source": _where(buffer, offset)})
        self._queue(cq).enqueue(buffer.read, offset, out.shape[0], out, inline=out.shape[0] <= INLINE_BYTES,
                                trace=trace)

    def enqueue_copy_buffer(self, cq, source, source_offset, target, target_offset, length) -> None:
        trace = self.profiler and ("copy_buffer", {"bytes": length, "source": _where(source, source_offset),
                                                   "target": _where(target, target_offset)})
        self._queue(cq).enqueue(_copy, source, source_offset, target, target_offset, length,
                                inline=length <= INLINE_BYTES, trace=trace)

    def enqueue_fill_buffer(self, cq: int, buffer: SimBuffer, offset: int, length: int, pattern: bytes) -> None:
        trace = self.profiler and ("fill_buffer", {"bytes": length, "pattern": bytes(pattern).hex(),
                                                   "target": _where(buffer, offset)})
        self._queue(cq).enqueue(_fill, buffer, offset, length, bytes(pattern), inline=length <= INLINE_BYTES,
                                trace=trace)

    def enqueue_program(self, cq: int, launch: LaunchProgram) -> None:
        prepared, predicted = self._prepare(launch)
        trace = self.profiler and (launch.name, {
            "workgroup_count": None if launch.workgroup_count is None else list(launch.workgroup_count),
            "bindings": [f"{_where(b.buffer, b.offset)} ({b.length} B)" for b in launch.bindings],
            "constants": [int(c) for c in launch.constants]})
        self._queue(cq).enqueue(run_programs, [(launch, prepared, predicted)], self.memory, self._binding_tables,
                                self.instruction_budget, self.fpu_model, self.profiler, self._watchdog,
                                self.dispatch_timeout, inline=predicted is not None and predicted < INLINE_SECONDS,
                                trace=trace)

    def enqueue_programs(self, cq: int, launches: list[LaunchProgram]) -> None:
        """`launches` in order as one command of the queue (run_programs): a submission's
        consecutive launches, as a command costs microseconds of each. Apart while
        profiling, so that each launch is a command of the trace."""
        if self.profiler or len(launches) == 1:
            for launch in launches:
                self.enqueue_program(cq, launch)
            return
        runs = [(launch, *self._prepare(launch)) for launch in launches]
        inline = all(predicted is not None and predicted < INLINE_SECONDS for _, _, predicted in runs)
        self._queue(cq).enqueue(run_programs, runs, self.memory, self._binding_tables, self.instruction_budget,
                                self.fpu_model, None, self._watchdog, self.dispatch_timeout, inline=inline)

    def _prepare(self, launch: LaunchProgram) -> tuple:
        """`launch`'s PreparedProgram and its run's predicted seconds (an indirect count's
        as the last run's), which decide whether it runs inline and (run_programs) on how
        many host threads."""
        prepared = self._programs.get(launch.program)
        counts = launch.workgroup_count  # None: indirect, counted when it runs
        return prepared, prepared.predicted_seconds(None if counts is None else counts[0] * counts[1] * counts[2],
                                                    launch.constants)

    def binding(self, buffer: SimBuffer, offset: int, length: int) -> Binding:
        return self._binding_tables.binding(buffer, offset, length)

    def execute_inline(self, cq: int, commands) -> SimEvent | None:
        """The commands and an event as one item of the queue, run now when each of them
        could run inline and the queue is idle; else nothing is enqueued (None)."""
        batch = self._queue(cq).batch(inline_only=True)
        event = self._submission(batch, cq, (), commands, None)
        return event if batch.taken else None

    def enqueue_submission(self, cq: int, wait_events, commands, on_complete) -> SimEvent:
        """One item of the queue: the waits, the commands and the event (run inline when
        each of them could be and the queue is idle: CommandQueue.batch). A submission of
        waits alone, all for one other queue's events, goes on that queue instead, after
        them (its waits carry their failures as before): it completes there, without a
        hand-over between queue threads (a .vmfb's queue_dealloca after its queue_execute)."""
        if not commands and wait_events:
            queues = {event.cq for event in wait_events}
            if len(queues) == 1:
                cq = queues.pop()
        return self._submission(self._queue(cq).batch(), cq, wait_events, commands, on_complete)

    def _submission(self, batch, cq: int, wait_events, commands, on_complete) -> SimEvent:
        """The waits, the commands and an event enqueued in `batch`, one item of the queue."""
        with batch:
            for event in wait_events:
                self.enqueue_wait_for_event(cq, event)
            launches = []  # consecutive launches, one command (enqueue_programs)
            for command in commands:
                if type(command) is LaunchProgram:
                    launches.append(command)
                    continue
                if launches:
                    self.enqueue_programs(cq, launches)
                    launches = []
                command.enqueue(self, cq)
            if launches:
                self.enqueue_programs(cq, launches)
            return self.enqueue_record_event(cq, on_complete)

    def enqueue_host_function(self, cq: int, function: Callable, *args) -> None:
        """Runs `function(*args)` in order on the queue (the simulator's stand-in for a
        program; used by tests to inject faults)."""
        self._queue(cq).enqueue(function, *args)

    def enqueue_record_event(self, cq: int, on_complete=None) -> SimEvent:
        event = SimEvent(cq, on_complete)
        self._queue(cq).enqueue(_record, event, inline=True)
        return event

    def enqueue_wait_for_event(self, cq: int, event: SimEvent) -> None:
        trace = self.profiler and ("wait_for_event", {"on": f"CQ{event.cq}"})
        self._queue(cq).enqueue(_wait, event, inline=event.query(), trace=trace)

    def finish(self, cq: int) -> None:
        if self._queues[cq] is not None:
            self._queues[cq].finish()

    def close(self) -> None:
        with self._queues_lock:
            self._closed = True
            queues = [q for q in self._queues if q is not None]
        for queue in queues:
            queue.close()
        self._watchdog.close()


def _dispatch_timeout(seconds: float | None) -> float:
    """`seconds`, else $TT_HAL_DISPATCH_TIMEOUT, else DEFAULT_DISPATCH_TIMEOUT; INVALID_ARGUMENT
    unless positive (inf: no deadline)."""
    if seconds is None:
        text = os.environ.get(DISPATCH_TIMEOUT_VARIABLE, str(DEFAULT_DISPATCH_TIMEOUT))
        try:
            seconds = float(text)
        except ValueError:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"{DISPATCH_TIMEOUT_VARIABLE}={text!r} is not a number of "
                                                        f"seconds") from None
    if not seconds > 0:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"dispatch_timeout={seconds}; expected seconds > 0 (inf for none)")
    return float(seconds)


@dataclasses.dataclass(frozen=True)
class HostFunction:
    """A queue command running a host function on a simulator queue (SimDevice.enqueue_host_function)."""

    function: Callable
    args: tuple = ()

    def enqueue(self, backend: SimDevice, cq: int) -> None:
        backend.enqueue_host_function(cq, self.function, *self.args)
