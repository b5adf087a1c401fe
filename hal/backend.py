"""The one seam between the HAL and a chip: a TT-Metal-shaped device protocol.

`sim/` (mock mode, `tt_hal.sim`) and `native/` (hardware mode, `tt_hal.native`)
subclass `BackendDevice`. The HAL never imports either: `open_backend(mode, ...)`
loads one by name.

Shape of the protocol (tt-metalium names in brackets):
- a device opens with `num_hw_cqs` command queues: 0 = compute, 1 = transfer [CreateDevice]
- buffers are interleaved over DRAM or L1 banks, sharded over cores, or host memory
  [CreateBuffer, InterleavedBufferConfig / ShardedBufferConfig, BufferType]
- host tensors become device bytes by the backend's own (fastest) conversions:
  tilize and data formats [tilize_utils, blockfloat_common]
- queue commands (typed: WriteBuffer, CopyBuffer, FillBuffer, LaunchProgram) run in
  order per queue, asynchronously to the host [EnqueueWriteBuffer, EnqueueProgram]
- queues order each other only through events [EnqueueRecordEvent, EnqueueWaitForEvent]
- a failed command fails the queue until the next recorded event, which completes
  with that error; a queue waiting on a failed event takes on its error.
"""

from __future__ import annotations

import _signal  # signal.signal without its enum wrapping (see _InterruptDeferral)
import enum
import importlib
import os
import signal
import threading
from typing import Callable, NamedTuple, Protocol

import numpy as np

from hal.status import HalError, StatusCode
from tt_hal.target.arch import ArchSpec
from tt_hal.target.layout import TensorSpec
from tt_hal.target.placement import BufferType, ShardedPages
from tt_hal.target.program import Program

COMPUTE_QUEUE = 0
TRANSFER_QUEUE = 1


class _InterruptDeferral:
    """The main thread's deferral of SIGINT (interrupts_deferred). Blocks nest (a
    submission's enqueues run inside the submission's block): only the outermost one
    swaps the handler, since a swap costs microseconds and a dispatch makes several
    such calls. It swaps through `_signal.signal`, the function `signal.signal` wraps:
    the wrapper turns a handler function into an enum by raising and catching a
    ValueError, which would cost more than everything else here."""

    def __init__(self):
        self.depth = 0
        self.previous = None  # the handler to restore and deliver to
        self.received = []  # frames of SIGINTs held

    def _hold(self, signum, frame) -> None:
        self.received.append(frame)

    def __enter__(self):
        if threading.get_ident() != _MAIN_THREAD:
            return self
        if self.depth == 0:
            self.received.clear()
            self.previous = _signal.signal(signal.SIGINT, self._hold)
        self.depth += 1
        return self

    def __exit__(self, *exc_info) -> None:
        if threading.get_ident() != _MAIN_THREAD:
            return
        self.depth -= 1
        if self.depth:
            return
        previous, self.previous = self.previous, None
        _signal.signal(signal.SIGINT, previous)
        if self.received:
            frame = self.received[0]
            self.received.clear()
            if callable(previous):
                previous(signal.SIGINT, frame)  # Python's default raises KeyboardInterrupt here
            elif previous == signal.SIG_DFL:
                os.kill(os.getpid(), signal.SIGINT)


_DEFERRAL = _InterruptDeferral()
_MAIN_THREAD = threading.main_thread().ident  # the thread Python delivers signals to


def interrupts_deferred() -> _InterruptDeferral:
    """`with interrupts_deferred():` holds a Ctrl-C (SIGINT) that lands inside the block
    until the block ends, then delivers it as it would have been: a queue's busy flag, a
    scheduler's lists and the locks around them are never left half-changed by a
    KeyboardInterrupt, which would wedge the device for good. Only the main thread
    receives SIGINT; elsewhere (and where Python signal handling is unavailable) this
    does nothing."""
    return _DEFERRAL


class BackendEvent(Protocol):
    """Recorded on one queue; done (with `error` None or a HalError) once every
    command before it on that queue has run."""

    error: HalError | None

    def query(self) -> bool: ...

    def synchronize(self, timeout_s: float | None = None) -> bool: ...


class BackendBuffer(Protocol):
    """A placed buffer [tt::tt_metal::Buffer]: `size` bytes in pages of `page_size`,
    at `address` in every bank of `buffer_type` (host memory has no address: 0)."""

    size: int
    page_size: int
    address: int
    buffer_type: BufferType


class Capability(enum.Flag):
    """What a backend offers beyond the required hooks; the HAL asks, never probes."""

    NONE = 0
    PROFILING = enum.auto()  # set_profiler: queue commands and per-core workgroups go into traces
    BUFFER_PLACEMENT = enum.auto()  # buffer_placement: the pages each bank or core holds
    SHARDED_BINDINGS = enum.auto()  # programs address sharded buffers bound to them (else interleaved only)


# Queue commands: what one HAL submission puts on a hardware queue, in order. Named tuples:
# typed and immutable, and cheap to build for every command of every submission.
class WriteBuffer(NamedTuple):
    """Host bytes into a buffer [EnqueueWriteBuffer]."""

    buffer: BackendBuffer
    offset: int
    data: np.ndarray  # uint8

    def enqueue(self, backend: "BackendDevice", cq: int) -> None:
        backend.enqueue_write_buffer(cq, self.buffer, self.offset, self.data)


class CopyBuffer(NamedTuple):
    """Bytes from one buffer into another."""

    source: BackendBuffer
    source_offset: int
    target: BackendBuffer
    target_offset: int
    length: int

    def enqueue(self, backend: "BackendDevice", cq: int) -> None:
        backend.enqueue_copy_buffer(cq, self.source, self.source_offset, self.target, self.target_offset, self.length)


class FillBuffer(NamedTuple):
    """`length` bytes of a repeated 1, 2 or 4-byte pattern."""

    buffer: BackendBuffer
    offset: int
    length: int
    pattern: bytes

    def enqueue(self, backend: "BackendDevice", cq: int) -> None:
        backend.enqueue_fill_buffer(cq, self.buffer, self.offset, self.length, self.pattern)


class Binding(NamedTuple):
    """A dispatch binding: `length` bytes of `buffer` from `offset` (hal.validation checks
    that the offset is a page boundary where the program's kernels address the binding
    by pages)."""

    buffer: BackendBuffer
    offset: int
    length: int


class LaunchProgram(NamedTuple):
    """A program over a grid of workgroups [EnqueueProgram]. `workgroup_count` is
    (x, y, z), or None with `indirect` = (buffer, offset) of three uint32 counts read
    when the program runs."""

    program: Program
    name: str
    workgroup_count: tuple[int, int, int] | None
    constants: np.ndarray  # push constants: their uint32 values as int64, as the cores' registers take them
    bindings: tuple[Binding, ...]
    indirect: tuple[BackendBuffer, int] | None = None

    def enqueue(self, backend: "BackendDevice", cq: int) -> None:
        backend.enqueue_program(cq, self)


class BackendDevice:
    """A chip the HAL schedules onto. The required hooks fail loudly until a backend
    implements them; the optional ones are named by `capabilities`."""

    arch: ArchSpec
    num_hw_cqs: int
    mode: str  # "mock" or "hardware"
    capabilities: Capability = Capability.NONE

    def _missing(self, hook: str):
        return NotImplementedError(f"{type(self).__name__} does not implement BackendDevice.{hook}")

    # Buffers [CreateBuffer / DeallocateBuffer]; `shard` (tt_hal.target.placement.ShardedPages)
    # makes a DRAM or L1 buffer sharded, else it is interleaved.
    def create_buffer(self, size: int, page_size: int, buffer_type: BufferType,
                      shard: ShardedPages | None = None) -> BackendBuffer:
        raise self._missing("create_buffer")

    def import_host_buffer(self, array: np.ndarray) -> BackendBuffer:
        """Host memory the device reaches (SYSTEM_MEMORY), aliasing `array` (uint8)."""
        raise self._missing("import_host_buffer")

    def free_buffer(self, buffer: BackendBuffer) -> None:
        raise self._missing("free_buffer")

    def host_view(self, buffer: BackendBuffer) -> np.ndarray | None:
        """The buffer's bytes as a writable uint8 array aliasing them, where the host
        addresses them directly (host memory); None where bytes must be staged."""
        raise self._missing("host_view")

    # Synchronous host access, bypassing the queues [detail::ReadFromBuffer / WriteToBuffer].
    def read_buffer(self, buffer: BackendBuffer, offset: int, length: int) -> np.ndarray:
        raise self._missing("read_buffer")

    def write_buffer(self, buffer: BackendBuffer, offset: int, data: np.ndarray) -> None:
        raise self._missing("write_buffer")

    # Host-side tensor conversions. `values` are float32 for float formats, else the
    # format's integer dtype; device bytes are uint8, spec.size long.
    def encode_tensor(self, values: np.ndarray, spec: TensorSpec, pad_value=0) -> np.ndarray:
        raise self._missing("encode_tensor")

    def decode_tensor(self, data: np.ndarray, spec: TensorSpec, as_float32: bool = False) -> np.ndarray:
        raise self._missing("decode_tensor")

    # Queue commands; each runs asynchronously, in order on queue `cq`.
    def enqueue_write_buffer(self, cq: int, buffer: BackendBuffer, offset: int, data: np.ndarray) -> None:
        raise self._missing("enqueue_write_buffer")

    def enqueue_read_buffer(self, cq: int, buffer: BackendBuffer, offset: int, out: np.ndarray) -> None:
        raise self._missing("enqueue_read_buffer")

    def enqueue_copy_buffer(self, cq: int, source: BackendBuffer, source_offset: int, target: BackendBuffer,
                            target_offset: int, length: int) -> None:
        raise self._missing("enqueue_copy_buffer")

    def enqueue_fill_buffer(self, cq: int, buffer: BackendBuffer, offset: int, length: int, pattern: bytes) -> None:
        raise self._missing("enqueue_fill_buffer")

    def enqueue_program(self, cq: int, launch: LaunchProgram) -> None:
        raise self._missing("enqueue_program")

    def binding(self, buffer: BackendBuffer, offset: int, length: int) -> Binding:
        """The Binding of `length` bytes of `buffer` from `offset` for a LaunchProgram. A
        backend may return an earlier, equivalent one (the simulator's, for memory at the
        same place): an execution whose bindings are the same objects as the last one's
        launches the same LaunchPrograms again (DispatchCommand.lower), which a backend
        may have prepared."""
        return Binding(buffer, offset, length)

    def enqueue_submission(self, cq: int, wait_events, commands,
                           on_complete: Callable[[HalError | None], None]) -> BackendEvent:
        """A submission on queue `cq`: device-side waits for `wait_events`, its queue
        commands in order, then an event (enqueue_record_event's, with `on_complete`),
        returned. A backend may take them as one unit (the simulator runs them as one
        item of its queue); by default each is enqueued. A command refused when enqueued
        raises its HalError, and no event is recorded."""
        for event in wait_events:
            self.enqueue_wait_for_event(cq, event)
        for command in commands:
            command.enqueue(self, cq)
        return self.enqueue_record_event(cq, on_complete)

    def execute_inline(self, cq: int, commands) -> BackendEvent | None:
        """Runs queue commands on the calling thread, now, when queue `cq` is idle: returns
        a done event (`error`: the first failure). None, with nothing enqueued, when the
        queue is busy or the commands are not small enough to run inline; by default
        always (the HAL then submits them as usual). A command refused when enqueued
        raises its HalError, and nothing runs."""
        return None

    def enqueue_record_event(self, cq: int,
                             on_complete: Callable[[HalError | None], None] | None = None) -> BackendEvent:
        """`on_complete(error)` runs once on a backend thread when the event is done; it
        must not block nor enqueue onto this device."""
        raise self._missing("enqueue_record_event")

    def enqueue_wait_for_event(self, cq: int, event: BackendEvent) -> None:
        """A device-side wait: queue `cq` stalls until `event` is done."""
        raise self._missing("enqueue_wait_for_event")

    def finish(self, cq: int) -> None:
        raise self._missing("finish")

    def close(self) -> None:
        raise self._missing("close")

    # Optional, by capability.
    def set_profiler(self, recorder) -> None:
        """Capability.PROFILING: queue commands and per-core workgroups go to `recorder`
        (a hal.profiling.TraceRecorder; None stops)."""
        raise self._missing("set_profiler")

    def buffer_placement(self, buffer: BackendBuffer) -> dict:
        """Capability.BUFFER_PLACEMENT: where a buffer's pages are (HalDevice.memory_map)."""
        raise self._missing("buffer_placement")


# Backends by mode: the package implementing each, found by name (as IREE finds driver
# modules), so the HAL never imports a backend. Each package defines
# open_device(device_ordinal, arch, **options), unavailable_reason() and query_devices().
BACKENDS = {"mock": "tt_hal.sim", "hardware": "tt_hal.native"}
MODES = (*BACKENDS, "auto")


# How a simulated chip computes its FPU ops (device option numerics=, docs/fidelity.md): "fast"
# is float32 arithmetic on the fidelity phases' products, "exact" the chip's datapath bit for
# bit. TT_HAL_NUMERICS sets it for mock devices whose URI does not.
NUMERICS = ("fast", "exact")
NUMERICS_ENVIRONMENT = "TT_HAL_NUMERICS"


def backend_package(mode: str):
    """The package of the backend for a resolved mode ('mock' or 'hardware')."""
    return importlib.import_module(BACKENDS[mode])


def hardware_unavailable_reason() -> str | None:
    """None when the native TT-Metal layer can open a device, else what is missing."""
    return backend_package("hardware").unavailable_reason()


def resolve_mode(mode: str | None = None) -> str:
    """'mock' or 'hardware' from an explicit mode or TT_HAL_MODE (default auto)."""
    mode = (mode or os.environ.get("TT_HAL_MODE") or "auto").lower()
    if mode not in MODES:
        raise HalError(StatusCode.INVALID_ARGUMENT, f"TT_HAL_MODE={mode!r}; expected one of {', '.join(MODES)}")
    if mode == "mock":
        return mode
    reason = hardware_unavailable_reason()
    if mode == "auto":
        return "mock" if reason else "hardware"
    if reason:
        raise HalError(StatusCode.UNAVAILABLE,
                       f"TT_HAL_MODE=hardware, but the TT-Metal hardware layer cannot run: {reason}. "
                       f"See docs/hardware.md to build against TT-Metal; TT_HAL_MODE=mock uses the simulator")
    return mode


def open_backend(mode: str, device_ordinal: int = 0, arch: str | None = None, **options) -> BackendDevice:
    """Opens the backend device for a resolved mode."""
    return backend_package(mode).open_device(device_ordinal, arch=arch, **options)
