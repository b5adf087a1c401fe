"""The HAL device (`iree/hal/device.h`): allocator, semaphores, command buffers and
the asynchronous queue operations, scheduled onto the backend's command queues
(transfers on the transfer queue CQ1, dispatches on the compute queue CQ0)."""

from __future__ import annotations

import atexit
import fnmatch
import itertools
import json
import os
import threading
import weakref

import numpy as np

from hal import profiling, validation
from hal.allocator import HalAllocator
from hal.backend import COMPUTE_QUEUE, TRANSFER_QUEUE, Capability, interrupts_deferred
from hal.buffer import HalBuffer, HalBufferView
from hal.command_buffer import CopyCommand, FillCommand, HalCommandBuffer, HalEvent, UpdateCommand
from hal.executable import EXECUTABLE_FORMAT, HalExecutableCache
from hal.log import get_logger
from hal.queue import QueueScheduler, Submission
from hal.semaphore import HalSemaphore, as_timepoints, wait_all_or_any
from hal.status import HalError, StatusCode
from hal.submission_graph import SubmissionGraph
from hal.types import BufferUsage, CommandBufferMode, CommandCategory, HalElementType, MemoryType, WaitMode
from tt_hal.target.layout import DataFormat, Layout, host_values
from tt_hal.target.placement import MemoryConfig

DEVICE_ID = "tenstorrent"
log = get_logger(__name__)


class HalDevice:
    """A tenstorrent device (iree_hal_device_t), from hal.create_device or get_device:
    allocator, semaphores, command buffers, executables, and asynchronous queue
    operations on the backend's command queues (transfers on CQ1, dispatches on CQ0)."""

    def __init__(self, driver, backend, uri: str, ordinal: int = 0):
        self.driver = driver
        self.backend = backend
        self.uri = uri
        self.ordinal = ordinal
        self._allocator = HalAllocator(self)
        self._scheduler = QueueScheduler(backend, f"tt{ordinal}")
        self._transfer_cq = TRANSFER_QUEUE if backend.num_hw_cqs > 1 else COMPUTE_QUEUE
        self._profile_path: str | None = None
        self.profiler: profiling.TraceRecorder | None = None  # while profiling
        self._last_trace: profiling.TraceRecorder | None = None
        self._peak_memory: tuple[int, list[dict]] | None = None  # (device bytes, memory map) while profiling
        self._cache: dict = {}  # key -> [lock, value, built]: see cached()
        self._cache_lock = threading.Lock()
        self._finalizer = weakref.finalize(self, _shutdown_collected, self._scheduler, backend)
        if os.environ.get(TRACE_ENVIRONMENT):
            self._trace_from_environment(os.environ[TRACE_ENVIRONMENT])

    def __repr__(self) -> str:
        """str() with the backend and its command queues, e.g. <HalDevice tenstorrent://0?arch=wormhole_b0
        (simulated wormhole_b0, 8x8 grid of 64 worker cores; mock backend, 2 command queues)>."""
        arch, cqs = self.backend.arch, self.backend.num_hw_cqs
        kind = "simulated" if self.backend.mode == "mock" else self.backend.mode
        return (f"<HalDevice {self.uri} ({kind} {arch.name}, {arch.grid_x}x{arch.grid_y} grid of {arch.worker_cores} "
                f"worker cores; {self.backend.mode} backend, {cqs} command queue{'s' * (cqs != 1)})>")

    def __str__(self) -> str:
        """The device as a message names it: its URI (driver and ordinal), simulated or
        hardware, the arch and the worker grid, e.g. `tenstorrent://0?arch=wormhole_b0
        (simulated wormhole_b0, 8x8 grid of 64 worker cores)`. iree.runtime's str() of a
        device is its driver's name alone: that is `device.driver.name` here."""
        arch = self.backend.arch
        kind = "simulated" if self.backend.mode == "mock" else self.backend.mode
        return f"{self.uri} ({kind} {arch.name}, {arch.grid_x}x{arch.grid_y} grid of {arch.worker_cores} worker cores)"

    @property
    def allocator(self) -> HalAllocator:
        return self._allocator

    @property
    def arch(self):
        return self.backend.arch

    def close(self) -> None:
        """Ends profiling (writing its trace), cancels waiting submissions, drains the
        queues and stops their threads."""
        if self._finalizer.alive:
            self.end_profiling()
        if self in _TRACED:
            _TRACED.remove(self)
        collected = self._finalizer.detach()  # None once closed
        if collected is not None:
            _shutdown(*collected[2])

    def _trace_from_environment(self, path: str) -> None:
        """TT_HAL_TRACE=trace.json profiles every device of the process; the second and
        later devices write trace.1.json, trace.2.json, ... The trace is written when
        the device closes or the process exits."""
        number = next(_TRACE_NUMBERS)
        if number:
            stem, extension = os.path.splitext(path)
            path = f"{stem}.{number}{extension or '.json'}"
        else:
            atexit.register(close_traced_devices)
        _TRACED.append(self)
        self.begin_profiling(file_path=path)

    # Objects.
    # DLPack (iree.runtime's device-level import and export), through numpy's own
    # DLPack support: the data is host memory on both sides of a capsule, so an import
    # is a copy into this device and an export a host copy (device type 1, CPU).
    def from_dlpack_capsule(self, capsule) -> HalBufferView:
        """A buffer view holding a copy of a "dltensor" capsule's tensor (the capsule is
        consumed, as DLPack says)."""
        array = np.from_dlpack(_Capsule(capsule))
        return self.allocator.allocate_buffer_copy(MemoryType.DEVICE_LOCAL, BufferUsage.DEFAULT | BufferUsage.MAPPING,
                                                   self, np.ascontiguousarray(array),
                                                   HalElementType.from_dtype(array.dtype))

    def create_dlpack_capsule(self, buffer_view: HalBufferView, device_type_code: int = 1, device_id: int = 0):
        """A "dltensor" capsule of the buffer view's values, copied to host memory (so
        the capsule's device is the CPU, DLPack device type 1)."""
        if int(device_type_code) != 1:
            raise HalError(StatusCode.UNIMPLEMENTED, f"a DLPack capsule for device type {device_type_code}: this "
                                                     f"device exports host copies (device type 1, CPU)")
        dtype = HalElementType.map_to_dtype(buffer_view.element_type)
        return buffer_view.map().asarray(list(buffer_view.shape), dtype).copy().__dlpack__()

    def create_semaphore(self, initial_value: int = 0) -> HalSemaphore:
        return HalSemaphore(initial_value, device=self)

    def create_command_buffer(self, mode: CommandBufferMode = CommandBufferMode.ONE_SHOT,
                              categories: CommandCategory = CommandCategory.ANY,
                              binding_capacity: int = 0, begin: bool = True) -> HalCommandBuffer:
        return HalCommandBuffer(self, binding_capacity=binding_capacity, begin=begin, mode=mode, categories=categories)

    def create_event(self) -> HalEvent:
        return HalEvent(self)

    def create_executable_cache(self, identifier: str = "default") -> HalExecutableCache:
        return HalExecutableCache(self, identifier)

    def cached(self, key, build):
        """`build()`'s result, built once per key for this device (layers above the HAL
        keep their prepared executables and constant tensors here). Thread-safe: a key
        is built by one thread while others asking for it wait."""
        entry = self._cache.get(key)  # built already: no locks (a dict read is atomic)
        if entry is not None and entry[2]:
            return entry[1]
        with self._cache_lock:
            entry = self._cache.setdefault(key, [threading.Lock(), None, False])
        with entry[0]:
            if not entry[2]:
                entry[1], entry[2] = build(), True
            return entry[1]

    def to_device(self, array, dtype=None, layout=Layout.ROW_MAJOR, memory_config: MemoryConfig | None = None, *,
                  pad_value=0, usage: int = BufferUsage.DEFAULT, transpose_within_face: bool = False,
                  transpose_of_faces: bool = False) -> HalBufferView:
        """A device tensor holding `array` (ttnn.from_torch's role): allocated by the
        allocator's placement policy (or `memory_config`), tilized for TILE layout with
        `pad_value` in the padding, converted to `dtype` (a hal.DataFormat or its name;
        default: the format holding array's dtype exactly) with the host's
        round-to-nearest-even, and written synchronously."""
        array = np.asarray(array)
        data_format = DataFormat.from_dtype(array.dtype) if dtype is None else DataFormat.parse(dtype)
        values = host_values(array, data_format)
        pad = host_values(np.asarray(pad_value), data_format, "pad_value")
        view = self._allocator.allocate_tensor(
            array.shape, data_format, layout, memory_config, usage=usage,
            transpose_within_face=transpose_within_face, transpose_of_faces=transpose_of_faces)
        if view.byte_length:
            with profiling.host_slice(self.profiler, "to_device", bytes=view.byte_length, shape=list(array.shape),
                                      format=data_format.name, layout=view.spec.layout.name,
                                      memory=view.spec.memory_config.describe()):
                view.get_buffer().map_write(0, self.backend.encode_tensor(values, view.spec, pad))
        return view

    def query_i64(self, category: str, key: str) -> int:
        arch = self.backend.arch
        if category == "hal.device.id":
            return int(fnmatch.fnmatchcase(DEVICE_ID, key))
        if category == "hal.executable.format":
            return int(fnmatch.fnmatchcase(EXECUTABLE_FORMAT, key))
        if category == "tt.device":
            if key.startswith("arch."):
                return int(key[len("arch."):] == arch.name)
            values = {
                "grid_x": arch.grid_x, "grid_y": arch.grid_y, "worker_cores": arch.worker_cores,
                "l1_size": arch.l1_size, "l1_bank_size": arch.l1_bank_size,
                "l1_alignment": arch.l1_alignment, "dram_bank_count": arch.dram_bank_count,
                "dram_bank_size": arch.dram_bank_size, "dram_size": arch.dram_size,
                "dram_alignment": arch.dram_alignment, "num_hw_cqs": self.backend.num_hw_cqs,
                "mock": int(self.backend.mode == "mock"),
            }
            if key in values:
                return int(values[key])
        raise HalError(StatusCode.NOT_FOUND, f"unknown device query ({category!r}, {key!r})")

    # Queue operations. Each returns at once; the work runs when its waits are reached.
    def _submit(self, label, cq, wait_semaphores, signal_semaphores, commands=(), resources=(), on_done=None,
                allocations=frozenset(), deallocates=None) -> None:
        waits = as_timepoints(wait_semaphores)
        signals = as_timepoints(signal_semaphores)
        with interrupts_deferred():  # the scheduler's state changes whole, or not at all
            self._scheduler.submit(Submission(label, cq, waits, signals, list(commands), list(resources), on_done,
                                              frozenset(allocations), deallocates))

    def queue_alloca(self, allocation_size: int, wait_semaphores, signal_semaphores,
                     memory_type: int = MemoryType.DEVICE_LOCAL, allowed_usage: int = BufferUsage.DEFAULT) -> HalBuffer:
        """A buffer usable by work that waits on `signal_semaphores`. Memory is reserved at
        once, so an allocation that does not fit fails here with RESOURCE_EXHAUSTED."""
        buffer = self._allocator.allocate_buffer(memory_type, allowed_usage, allocation_size)
        self._submit("queue_alloca", self._transfer_cq, wait_semaphores, signal_semaphores)
        return buffer

    def queue_dealloca(self, buffer: HalBuffer, wait_semaphores, signal_semaphores) -> None:
        """Frees `buffer` once the waits are reached (if they fail, it is freed when unreferenced)."""
        buffer.check_alive()

        def release(error):
            if error is None:
                buffer.release()

        self._submit("queue_dealloca", self._transfer_cq, wait_semaphores, signal_semaphores, on_done=release,
                     deallocates=buffer.allocation)

    def queue_fill(self, target_buffer: HalBuffer, pattern, wait_semaphores, signal_semaphores,
                   target_offset: int = 0, length: int | None = None) -> None:
        command = FillCommand(target_buffer, target_offset, length, validation.check_fill_pattern(pattern),
                              "queue_fill")
        self._submit("queue_fill", self._transfer_cq, wait_semaphores, signal_semaphores, command.lower(()),
                     [target_buffer], allocations={target_buffer.allocation})

    def queue_update(self, source, target_buffer: HalBuffer, wait_semaphores, signal_semaphores,
                     target_offset: int = 0, length: int | None = None) -> None:
        """Writes host bytes into the buffer; `source` is copied now, at the call."""
        data = validation.update_source(source, length, "queue_update").copy()
        command = UpdateCommand(data, target_buffer, target_offset, "queue_update")
        self._submit("queue_update", self._transfer_cq, wait_semaphores, signal_semaphores, command.lower(()),
                     [target_buffer], allocations={target_buffer.allocation})

    def queue_copy(self, source_buffer: HalBuffer, target_buffer: HalBuffer, wait_semaphores, signal_semaphores,
                   source_offset: int = 0, target_offset: int = 0, length: int | None = None) -> None:
        validation.queue_copy_lengths(source_buffer, target_buffer, length)
        command = CopyCommand(source_buffer, source_offset, target_buffer, target_offset, length, "queue_copy")
        self._submit("queue_copy", self._transfer_cq, wait_semaphores, signal_semaphores, command.lower(()),
                     [source_buffer, target_buffer], allocations={source_buffer.allocation, target_buffer.allocation})

    def queue_execute(self, command_buffers, wait_semaphores, signal_semaphores, binding_table=None) -> None:
        """Runs command buffers in order (one HalCommandBuffer or a list). Their buffer
        references to binding-table slots resolve against `binding_table`."""
        cq, commands, resources, allocations = self._execution(command_buffers, binding_table,
                                                               bool(as_timepoints(wait_semaphores)))
        self._submit("queue_execute", cq, wait_semaphores, signal_semaphores, commands, resources,
                     allocations=allocations)

    def execute_now(self, command_buffers, binding_table=None, timeout: int | None = None) -> None:
        """tt-hal's own (iree.runtime has no such call): queue_execute without waits, then
        a wait for it, in one call that returns when the work is done and raises its
        failure, or DEADLINE_EXCEEDED after `timeout` ns (None: forever). Work that
        waits on nothing may run at once (IREE orders queue work by semaphores only):
        on an idle queue a backend runs small work on this thread, without a semaphore,
        the scheduler's queue or a thread switch (eager ops, tt_hal.ops)."""
        cq, commands, resources, allocations = self._execution(command_buffers, binding_table, False)
        submission = Submission("execute_now", cq, [], [], commands, resources, allocations=frozenset(allocations))
        with interrupts_deferred():  # the scheduler's state changes whole, or not at all
            if self._scheduler.run_inline(submission):
                return
            done = self.create_semaphore(0)
            submission.signals = [(done, 1)]
            self._scheduler.submit(submission)
        if not done.wait(1, timeout=timeout):
            raise HalError(StatusCode.DEADLINE_EXCEEDED,
                           f"execute_now: the device work did not finish within {timeout / 1e9:g} s")

    def _execution(self, command_buffers, binding_table, has_waits: bool) -> tuple:
        """(queue, backend commands, resources to keep, allocations used) of executing
        command buffers over a binding table, validated."""
        if isinstance(command_buffers, HalCommandBuffer):
            command_buffers = [command_buffers]
        table = validation.binding_table(binding_table)
        commands, allocations, dispatches = [], set(), False
        for command_buffer in command_buffers:
            validation.submission(command_buffer, has_waits, len(table))
            lowered, used, dispatched = command_buffer.prepare(table)
            commands += lowered
            validation.own_memory(self, dispatched, "queue_execute")
            allocations |= used
            dispatches |= command_buffer.has_dispatches
        for command_buffer in command_buffers:
            if CommandBufferMode.ONE_SHOT in command_buffer.mode:
                command_buffer.submitted = True
        return COMPUTE_QUEUE if dispatches else self._transfer_cq, commands, [*command_buffers, *table], allocations

    def queue_barrier(self, wait_semaphores, signal_semaphores) -> None:
        self._submit("queue_barrier", self._transfer_cq, wait_semaphores, signal_semaphores)

    def queue_flush(self) -> None:
        """Submissions are issued as soon as their waits allow; nothing is held back."""

    def wait_semaphores(self, semaphores, mode=WaitMode.ALL, timeout: int | None = None,
                        deadline: int | None = None) -> bool:
        """Waits for all (or any) of a list of (semaphore, value) or a HalFence.
        True when reached, False on timeout; raises a semaphore's failure."""
        if isinstance(mode, str):
            try:
                mode = WaitMode[mode.upper()]
            except KeyError:
                raise HalError(StatusCode.INVALID_ARGUMENT, f"wait mode {mode!r}; expected 'all' or 'any'") from None
        if mode not in WaitMode._value2member_map_:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"wait mode {mode!r}: expected one of "
                                                        f"{', '.join(f'{m.name} ({m.value})' for m in WaitMode)}")
        return wait_all_or_any(as_timepoints(semaphores), WaitMode(mode), timeout, deadline)

    # Profiling, and what the toolkit shows of the device (tt_hal.tools.pictures draws them).
    def begin_profiling(self, mode: str | None = None, file_path: str | None = None) -> None:
        """Starts recording a Chrome / Perfetto trace (hal/profiling.py): submissions,
        queue commands, per-core workgroups, semaphore waits and signals. `file_path`
        (default: $TT_HAL_TRACE, else kept in memory for profiling_trace()) is written
        by flush_profiling and end_profiling. A `mode` without a `file_path` is
        iree.runtime's call, which asks for its native profiler: a ValueError there and
        here; with `file_path` it is accepted and everything is recorded."""
        if mode is not None and file_path is None:
            raise HalError(StatusCode.INVALID_ARGUMENT, f"begin_profiling(mode={mode!r}): IREE's native profiling "
                                                        f"requires a profile sink and is not exposed by the runtime "
                                                        f"bindings; tt-hal's trace is begin_profiling() or "
                                                        f"begin_profiling(file_path=...)")
        recorder = profiling.TraceRecorder(f"tt{self.ordinal} {self.backend.arch.name}")
        for cq in range(self.backend.num_hw_cqs):
            recorder.queue_track(cq)
        self._profile_path = file_path or os.environ.get(TRACE_ENVIRONMENT)
        self._last_trace = self.profiler = self._scheduler.profiler = recorder
        self._peak_memory = None
        self.note_memory_use()
        if self.backend.capabilities & Capability.PROFILING:
            self.backend.set_profiler(recorder)
        log.info("profiling %r%s", self, f" to {self._profile_path}" if self._profile_path else "")

    def begin_external_capture(self, provider=None, file_path=None) -> None:
        """Captures by an external tool (RenderDoc, ...): none works with this device."""
        raise HalError(StatusCode.UNIMPLEMENTED, "external capture: no capture tool (RenderDoc, Nsight) works with a "
                                                 "Tenstorrent device; use begin_profiling() for tt-hal's own trace")

    def end_external_capture(self) -> None:
        raise HalError(StatusCode.UNIMPLEMENTED, "external capture: none was begun (no capture tool works with a "
                                                 "Tenstorrent device)")

    def flush_profiling(self) -> None:
        """Writes the trace so far to the profiling file, if there is one."""
        if self.profiler is not None and self._profile_path:
            with open(self._profile_path, "w") as f:
                json.dump(self.profiler.to_chrome(), f)

    def end_profiling(self) -> None:
        """Stops recording after the queues drain, and writes the trace file."""
        if self.profiler is None:
            return
        for cq in range(self.backend.num_hw_cqs):
            self.backend.finish(cq)
        self.flush_profiling()
        if self.backend.capabilities & Capability.PROFILING:
            self.backend.set_profiler(None)
        self.profiler = self._scheduler.profiler = None

    def profiling_trace(self) -> dict:
        """The current (or last) profiling session's trace, as Chrome trace-event JSON."""
        if self._last_trace is None:
            raise HalError(StatusCode.FAILED_PRECONDITION, "no profiling session; call begin_profiling() first")
        return self._last_trace.to_chrome()

    def note_memory_use(self) -> None:
        """Keeps the memory map at the profiling session's peak of live device bytes
        (the allocator calls it after each allocation while profiling)."""
        if not self.backend.capabilities & Capability.BUFFER_PLACEMENT:
            return
        allocations = self._allocator.live_allocations()
        live = sum(a.size for a in allocations)
        if self._peak_memory is None or live > self._peak_memory[0]:
            self._peak_memory = (live, self._memory_map(allocations))

    def peak_memory_map(self) -> list[dict]:
        """memory_map() as it was at the last profiling session's peak device memory use."""
        if self._peak_memory is None:
            raise HalError(StatusCode.FAILED_PRECONDITION, "no profiling session with buffer placement; call "
                                                           "begin_profiling() first (mock mode)")
        return self._peak_memory[1]

    def submission_graph(self) -> SubmissionGraph:
        """A snapshot of the submissions waiting, in flight and recently finished, and
        the semaphore values that link them."""
        return SubmissionGraph(f"tt{self.ordinal}", self._scheduler.nodes())

    def memory_map(self) -> list[dict]:
        """The live device buffers and where their pages are: per buffer its name,
        buffer type (DRAM or L1), address, size, page size, layout, and pages held by
        each bank (DRAM) or worker core (L1, row-major over the grid)."""
        if not self.backend.capabilities & Capability.BUFFER_PLACEMENT:
            raise HalError(StatusCode.UNIMPLEMENTED,
                           f"the {self.backend.mode} backend does not report buffer placement")
        return self._memory_map(self._allocator.live_allocations())

    def _memory_map(self, allocations) -> list[dict]:
        return [{"name": a.label, **self.backend.buffer_placement(a.backend_buffer)} for a in allocations]

TRACE_ENVIRONMENT = "TT_HAL_TRACE"
_TRACED: list[HalDevice] = []  # devices profiling because of TT_HAL_TRACE, until closed
_TRACE_NUMBERS = itertools.count()


def close_traced_devices() -> None:
    for device in list(_TRACED):
        device.close()


def _shutdown(scheduler: QueueScheduler, backend) -> None:
    scheduler.close()
    backend.close()


def _shutdown_collected(scheduler: QueueScheduler, backend) -> None:
    """The finalizer of a device dropped without close(). Collection runs it on whichever
    thread collects, one of the device's own threads among them, maybe inside its
    scheduler's lock (its close() would wait for itself forever): so the shutdown runs on
    a thread of its own (at interpreter exit, when no thread can start, here)."""
    try:
        threading.Thread(target=_shutdown, args=(scheduler, backend), name="tt-hal-shutdown", daemon=True).start()
    except RuntimeError:
        _shutdown(scheduler, backend)


class _Capsule:
    """A DLPack producer of a capsule made elsewhere, for numpy.from_dlpack."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, stream=None, **_):
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)  # numpy reads host memory only; a capsule of another device fails there
